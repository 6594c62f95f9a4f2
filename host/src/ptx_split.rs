//! PTX text cut at its kernels, so that a module compiles and loads one kernel at a time.
//!
//! The driver compiles PTX to machine code when it loads a module (`cuModuleLoadData`),
//! all of the module's kernels at once, on one CPU core. warpsafe's own module has 290
//! kernels in 20 MB of sm_90 PTX: loading it whole took 132 s on an H100's host with the
//! driver's cache off (2026-11-26), against 0.1 to 0.6 s for a module of one of its
//! kernels (28 s for the largest, a `u8` histogram). So a [`crate::Module`] loads each
//! kernel on first use as a module of its own: the text every kernel may need (the
//! header, declarations, module-scope variables and functions) followed by that kernel's
//! `.entry`.
//!
//! A consequence: module-scope `.global` variables are per kernel, not shared between the
//! kernels of one PTX text. warpsafe's kernel language has none that kernels write (its
//! `shared!` statics are `.shared`, per block anyway; its constants are read-only), so
//! kernels built with `warpsafe-build` behave the same either way.
//!
//! No crate parses PTX; this needs only where each `.entry` definition begins and ends.

use std::collections::HashMap;
use std::ops::Range;

/// A PTX text's kernels: each `.entry` definition's byte range, and the text outside
/// every definition (what each kernel's module starts with).
#[derive(Debug)]
pub(crate) struct PtxSplit {
    common: String,
    entries: HashMap<String, Range<usize>>,
}

impl PtxSplit {
    /// Cuts `ptx` at its `.entry` definitions. Text that is not recognised as a complete
    /// definition (no body, or braces that never close) stays in the common part, where
    /// loading it reports the driver's error.
    pub(crate) fn new(ptx: &str) -> PtxSplit {
        let mut common = String::new();
        let mut entries = HashMap::new();
        let mut at = 0;
        while at < ptx.len() {
            let line_end = ptx[at..].find('\n').map_or(ptx.len(), |n| at + n + 1);
            match entry_name(&ptx[at..line_end]).and_then(|name| Some((name, definition_end(ptx, at)?))) {
                Some((name, end)) => {
                    entries.insert(name.to_string(), at..end);
                    at = end;
                }
                None => {
                    common.push_str(&ptx[at..line_end]);
                    at = line_end;
                }
            }
        }
        PtxSplit { common, entries }
    }

    /// The text outside every kernel's definition: a module of no kernels.
    pub(crate) fn common(&self) -> &str {
        &self.common
    }

    /// The module text of the kernel `name` alone, or `None` when `ptx` (the text this
    /// split was made from) defines no such kernel.
    pub(crate) fn kernel_module(&self, ptx: &str, name: &str) -> Option<String> {
        let range = self.entries.get(name)?;
        let mut text = String::with_capacity(self.common.len() + range.len());
        text.push_str(&self.common);
        text.push_str(&ptx[range.clone()]);
        Some(text)
    }
}

/// The kernel name when `line` begins an `.entry` (after the linking directives that may
/// precede it).
fn entry_name(line: &str) -> Option<&str> {
    let mut words = line.split_ascii_whitespace();
    let mut word = words.next()?;
    while matches!(word, ".visible" | ".weak" | ".extern") {
        if word == ".extern" {
            // A declaration of a kernel defined elsewhere: nothing to cut.
            return None;
        }
        word = words.next()?;
    }
    let rest = word.strip_prefix(".entry")?;
    let name = if rest.is_empty() { words.next()? } else { rest };
    let name = name.split('(').next()?;
    (!name.is_empty()).then_some(name)
}

/// The end (after its closing brace's line) of the definition that begins at `start`, or
/// `None` when a `;` ends it before any body (a declaration) or its braces never close.
/// Braces in `//` and `/* */` comments do not count; those of inline assembly are
/// balanced, so counting them is harmless.
fn definition_end(ptx: &str, start: usize) -> Option<usize> {
    let bytes = ptx.as_bytes();
    let mut depth = 0usize;
    let mut at = start;
    while at < bytes.len() {
        match bytes[at] {
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                at = ptx[at..].find('\n').map_or(bytes.len(), |n| at + n);
                continue;
            }
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                at = at + 2 + ptx[at + 2..].find("*/")? + 2;
                continue;
            }
            b';' if depth == 0 => return None,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(ptx[at..].find('\n').map_or(bytes.len(), |n| at + n + 1));
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::PtxSplit;

    const TWO_KERNELS: &str = "\
//
// Generated by hand
//
.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b32 r) vprintf (.param .b64 a, .param .b64 b);
.global .align 1 .b8 message[3] = {104, 105, 0};
.func helper()
{
\tret;
}
.visible .entry first(
\t.param .u64 first_param_0
)
{
\t// a comment with a stray brace: }
\t/* and a block comment { */
\t// begin inline asm
\t{ .reg .pred p; setp.eq.u32 p, 1, 1; }
\t// end inline asm
\tret;
}
\t// -- End function
.entry second()
{
\tcall.uni helper, ();
\tret;
}
";

    #[test]
    fn each_kernel_gets_the_common_text_and_its_own_definition() {
        let split = PtxSplit::new(TWO_KERNELS);
        let first = split.kernel_module(TWO_KERNELS, "first").unwrap();
        let second = split.kernel_module(TWO_KERNELS, "second").unwrap();
        assert!(split.common().contains(".func helper()\n{\n\tret;\n}\n"), "{}", split.common());
        assert!(split.common().contains(".global .align 1 .b8 message"));
        assert!(split.common().ends_with("\t// -- End function\n"));
        assert!(!split.common().contains(".entry"));
        assert!(first.starts_with(split.common()) && second.starts_with(split.common()));
        assert!(first.ends_with("\tret;\n}\n") && first.contains("stray brace: }"));
        assert!(!first.contains(".entry second"));
        assert_eq!(
            &second[split.common().len()..],
            ".entry second()\n{\n\tcall.uni helper, ();\n\tret;\n}\n"
        );
        assert_eq!(split.kernel_module(TWO_KERNELS, "helper"), None);
        // Nothing lost or repeated: the common part and the definitions make up the text.
        assert_eq!(
            split.common().len() + split.entries.values().map(|r| r.len()).sum::<usize>(),
            TWO_KERNELS.len()
        );
    }

    #[test]
    fn declarations_and_unclosed_definitions_stay_in_the_common_part() {
        for text in [
            ".version 8.0\n.extern .entry elsewhere(.param .u64 p);\n",
            ".version 8.0\n.entry declared_only(.param .u64 p);\n",
            ".version 8.0\n.entry unclosed()\n{\n\tret;\n",
            ".version 8.0\n.entry in_comment()\n{\n\t/* never closed }\n",
            "this is not PTX",
        ] {
            let split = PtxSplit::new(text);
            assert_eq!(split.common(), text);
            assert!(split.entries.is_empty(), "{text}: {:?}", split.entries);
        }
    }

    #[test]
    fn every_kernel_of_the_embedded_ptx_is_cut_out_whole() {
        for (sm, ptx) in crate::ptx::EMBEDDED {
            let split = PtxSplit::new(ptx);
            let declared = ptx.lines().filter(|line| line.starts_with(".visible .entry ")).count();
            assert!(declared > 0);
            assert_eq!(split.entries.len(), declared, "sm_{sm}");
            assert!(!split.common().contains(".entry"), "sm_{sm}");
            let parts = split.common().len() + split.entries.values().map(|r| r.len()).sum::<usize>();
            assert_eq!(parts, ptx.len(), "sm_{sm}");
            for (name, range) in &split.entries {
                let definition = &ptx[range.clone()];
                assert!(
                    definition.starts_with(".visible .entry ") && definition.ends_with("\n}\n"),
                    "{name}"
                );
                assert_eq!(definition.matches("\n}\n").count(), 1, "{name}: one body");
            }
            let kernel = crate::entry_kernels::warpsafe_warp_sum_u32.untyped().name();
            assert!(split.kernel_module(ptx, kernel).unwrap().contains(&format!(".entry {kernel}(")));
        }
    }
}
