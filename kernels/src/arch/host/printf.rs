//! Device `printf` on the emulator: CUDA's `vprintf` argument buffer, formatted on the
//! host and written to stdout.

use core::ffi::CStr;
use std::string::String;
use std::vec::Vec;

/// Prints `format` (a C format string) with the arguments packed in `args` as CUDA's
/// `vprintf` lays them out (each at an offset aligned to its size: 4 bytes for `int`
/// conversions without a length modifier and for `%c`, 8 for `l`/`ll`/`z` integers,
/// doubles, pointers and strings). Supports the flags `-+ 0#`, width and precision
/// (numbers only), and the conversions `d i u x X o c s p f F e E g G %`.
///
/// # Safety
/// Every conversion in `format` matches the argument at the same position of `args`,
/// and `%s` arguments point at NUL-terminated bytes.
pub unsafe fn vprintf(format: &CStr, args: *const u8) {
    let mut reader = Args { base: args, offset: 0 };
    // SAFETY: forwarded from the caller.
    let text = unsafe { render(format.to_bytes(), &mut reader) };
    // `print!`, so that the test harness captures it like the host's own output.
    std::print!("{text}");
}

struct Args {
    base: *const u8,
    offset: usize,
}

impl Args {
    /// The next argument of `size` bytes (4 or 8).
    ///
    /// # Safety
    /// The buffer holds such an argument at the next offset aligned to `size`.
    unsafe fn next(&mut self, size: usize) -> u64 {
        self.offset = self.offset.next_multiple_of(size);
        // SAFETY: forwarded from the caller.
        let value = unsafe {
            if size == 4 {
                self.base.add(self.offset).cast::<u32>().read_unaligned() as u64
            } else {
                self.base.add(self.offset).cast::<u64>().read_unaligned()
            }
        };
        self.offset += size;
        value
    }
}

/// One conversion's flags, width and precision.
#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    zero: bool,
    alternate: bool,
    width: usize,
    precision: Option<usize>,
}

impl Spec {
    fn pad(&self, sign: &str, digits: &str) -> String {
        let len = sign.len() + digits.len();
        let fill = self.width.saturating_sub(len);
        let mut s = String::new();
        if self.left {
            s.push_str(sign);
            s.push_str(digits);
            s.extend(core::iter::repeat_n(' ', fill));
        } else if self.zero && self.precision.is_none() {
            s.push_str(sign);
            s.extend(core::iter::repeat_n('0', fill));
            s.push_str(digits);
        } else {
            s.extend(core::iter::repeat_n(' ', fill));
            s.push_str(sign);
            s.push_str(digits);
        }
        s
    }

    fn sign(&self, negative: bool) -> &'static str {
        if negative {
            "-"
        } else if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        }
    }
}

/// Formats `format` with the arguments of `args`.
///
/// # Safety
/// As for [`vprintf`].
unsafe fn render(format: &[u8], args: &mut Args) -> String {
    let mut out: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < format.len() {
        if format[i] != b'%' {
            out.push(format[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut spec = Spec::default();
        while let Some(&flag) = format.get(i) {
            match flag {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'0' => spec.zero = true,
                b'#' => spec.alternate = true,
                _ => break,
            }
            i += 1;
        }
        while let Some(d) = format.get(i).filter(|c| c.is_ascii_digit()) {
            spec.width = spec.width * 10 + (d - b'0') as usize;
            i += 1;
        }
        if format.get(i) == Some(&b'.') {
            i += 1;
            let mut p = 0;
            while let Some(d) = format.get(i).filter(|c| c.is_ascii_digit()) {
                p = p * 10 + (d - b'0') as usize;
                i += 1;
            }
            spec.precision = Some(p);
        }
        let mut long = false;
        while let Some(&m) = format.get(i) {
            match m {
                b'l' | b'z' | b'j' | b't' => long = true,
                b'h' => {}
                _ => break,
            }
            i += 1;
        }
        let Some(&conversion) = format.get(i) else {
            out.extend_from_slice(&format[start..]);
            break;
        };
        i += 1;
        let size = if long { 8 } else { 4 };
        // SAFETY: each read matches the conversion (the caller's contract).
        let text =
            unsafe {
                match conversion {
                    b'd' | b'i' => {
                        let v = args.next(size);
                        let v = if long { v as i64 } else { v as u32 as i32 as i64 };
                        spec.pad(spec.sign(v < 0), &v.unsigned_abs().to_string())
                    }
                    b'u' => spec.pad("", &args.next(size).to_string()),
                    b'x' => spec
                        .pad(if spec.alternate { "0x" } else { "" }, &std::format!("{:x}", args.next(size))),
                    b'X' => spec
                        .pad(if spec.alternate { "0X" } else { "" }, &std::format!("{:X}", args.next(size))),
                    b'o' => spec.pad("", &std::format!("{:o}", args.next(size))),
                    b'c' => spec.pad("", &char::from(args.next(4) as u8).to_string()),
                    b'p' => spec.pad("", &std::format!("{:#x}", args.next(8))),
                    b's' => {
                        let ptr = args.next(8) as usize as *const core::ffi::c_char;
                        let s = if ptr.is_null() {
                            String::from("(null)")
                        } else {
                            CStr::from_ptr(ptr).to_string_lossy().into_owned()
                        };
                        let s: String = match spec.precision {
                            Some(p) => s.chars().take(p).collect(),
                            None => s,
                        };
                        spec.pad("", &s)
                    }
                    b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => {
                        let v = f64::from_bits(args.next(8));
                        let p = spec.precision.unwrap_or(6);
                        let digits = match conversion {
                            b'f' | b'F' => std::format!("{:.*}", p, v.abs()),
                            b'e' => std::format!("{:.*e}", p, v.abs()),
                            b'E' => std::format!("{:.*E}", p, v.abs()),
                            _ => std::format!("{}", v.abs()),
                        };
                        spec.pad(spec.sign(v.is_sign_negative() && !v.is_nan()), &digits)
                    }
                    b'%' => String::from("%"),
                    _ => String::from_utf8_lossy(&format[start..i]).into_owned(),
                }
            };
        out.extend_from_slice(text.as_bytes());
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{render, Args};

    /// Packs `args` as CUDA's vprintf buffer: each at an offset aligned to its size.
    fn pack(args: &[(u64, usize)]) -> std::vec::Vec<u8> {
        let mut buf = std::vec::Vec::new();
        for &(value, size) in args {
            while !buf.len().is_multiple_of(size) {
                buf.push(0);
            }
            buf.extend_from_slice(&value.to_ne_bytes()[..size]);
        }
        buf
    }

    fn format(format: &str, args: &[(u64, usize)]) -> std::string::String {
        let buf = pack(args);
        let mut reader = Args { base: buf.as_ptr(), offset: 0 };
        // SAFETY: the buffer holds one argument per conversion, laid out as vprintf's.
        unsafe { render(format.as_bytes(), &mut reader) }
    }

    #[test]
    fn integers_strings_and_floats() {
        let name = c"lane";
        let text = format(
            "%s %u: %d|%5d|%-4u|%08x|%#x|%llu|%c|%.2f|%%",
            &[
                (name.as_ptr() as u64, 8),
                (7, 4),
                ((-3i32) as u32 as u64, 4),
                (42, 4),
                (9, 4),
                (0xbeef, 4),
                (255, 4),
                (1 << 40, 8),
                (b'z' as u64, 4),
                (2.5f64.to_bits(), 8),
            ],
        );
        assert_eq!(text, "lane 7: -3|   42|9   |0000beef|0xff|1099511627776|z|2.50|%");
    }

    #[test]
    fn a_dangling_percent_is_kept() {
        assert_eq!(format("100%", &[]), "100%");
    }
}
