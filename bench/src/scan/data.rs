//! `scan-bench`'s inputs and the host references its results are checked against.
//!
//! Element `i` of an input is a function of `i` and the type (the same as `element` in
//! `cub/scan_cub.cu`: both sides scan and select the same elements):
//! - `f32`: uniform in `[0, 1)` on a grid of 2^-24; `f64`: uniform in `[0, 1)` on 2^-53;
//! - `i32`: uniform in `[0, 2^30)`;
//! - the flags of `select_flagged`: 0 or 1, each with probability 1/2, for every type.
//!
//! `select_if` keeps the elements below the middle of the range ([`ScanElement::MIDPOINT`]:
//! 0.5, or 2^29), about half of them, as `select_flagged` does.
//!
//! Checks: an `i32` scan is exact (sums wrap, two's complement); `f32` and `f64` scans are
//! compared with a running sum in `f64` within a relative tolerance (the device combines in
//! another order: per tile, then across tiles), [`F32_TOLERANCE`] or [`F64_TOLERANCE`] of
//! `max(|sum|, 1)`. A selection's count and every kept element must be exact.

use std::fmt::Display;

use bytemuck::Pod;

use crate::data::{hash, ElemType, Element};
use crate::par;

/// The relative tolerance of an `f32` scan: its sums reach 2^28 · 0.5, where the last bit
/// is 8, after a chain of up to 65536 tile prefixes.
pub const F32_TOLERANCE: f64 = 1e-3;
/// The relative tolerance of an `f64` scan.
pub const F64_TOLERANCE: f64 = 1e-9;

/// The salt of the flags' hash.
const FLAG_SALT: u64 = 80;

/// The salt of the values' hash for `ty`.
fn value_salt(ty: ElemType) -> u64 {
    match ty {
        ElemType::F32 => 65,
        ElemType::F64 => 66,
        ElemType::I32 => 67,
    }
}

/// An element type of `scan-bench`: its inputs and its scan reference.
pub trait ScanElement: Element + Pod + PartialOrd + Display {
    /// The middle of the inputs' range: `select_if` keeps the elements below it.
    const MIDPOINT: Self;
    /// The running sum of the reference.
    type Acc: Copy + Default + Send + Sync + Display;
    /// Element `i` of the input, from its hash `h`.
    fn from_hash(h: u64) -> Self;
    /// `acc + x`, in the reference's arithmetic.
    fn add(acc: Self::Acc, x: Self) -> Self::Acc;
    /// Two partial sums added.
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// Whether a device sum `got` is close enough to the reference `want`.
    fn matches(got: Self, want: Self::Acc) -> bool;
}

/// Whether `got` is within `tolerance` of `want`, relative to `max(|want|, 1)`.
fn close(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance * want.abs().max(1.0)
}

/// `ScanElement` for a float type of `$bits` mantissa bits: inputs `(h >> (64 - $bits))`
/// scaled by 2^-$bits, sums in `f64` within `$tolerance`.
macro_rules! float_element {
    ($t:ty, $bits:expr, $tolerance:expr) => {
        impl ScanElement for $t {
            const MIDPOINT: $t = 0.5;
            type Acc = f64;
            fn from_hash(h: u64) -> $t {
                (h >> (64 - $bits)) as $t * (1.0 / (1u64 << $bits) as $t)
            }
            fn add(acc: f64, x: $t) -> f64 {
                acc + f64::from(x)
            }
            fn combine(a: f64, b: f64) -> f64 {
                a + b
            }
            fn matches(got: $t, want: f64) -> bool {
                close(f64::from(got), want, $tolerance)
            }
        }
    };
}

float_element!(f32, 24, F32_TOLERANCE);
float_element!(f64, 53, F64_TOLERANCE);

impl ScanElement for i32 {
    const MIDPOINT: i32 = 1 << 29;
    type Acc = i32;
    fn from_hash(h: u64) -> i32 {
        (h >> 34) as i32
    }
    fn add(acc: i32, x: i32) -> i32 {
        acc.wrapping_add(x)
    }
    fn combine(a: i32, b: i32) -> i32 {
        a.wrapping_add(b)
    }
    fn matches(got: i32, want: i32) -> bool {
        got == want
    }
}

/// Element `i` of the input of type `T`.
pub fn element<T: ScanElement>(i: u64) -> T {
    T::from_hash(hash(value_salt(T::TYPE), i))
}

/// Flag `i` of `select_flagged`: 0 or 1.
pub fn flag(i: u64) -> u8 {
    (hash(FLAG_SALT, i) >> 63) as u8
}

/// The input of `n` elements of type `T`, filled on all cores.
pub fn input<T: ScanElement>(n: usize) -> Vec<T> {
    let mut v = vec![T::zeroed(); n];
    par::fill(&mut v, |i| element(i as u64));
    v
}

/// The `n` flags, filled on all cores.
pub fn flags(n: usize) -> Vec<u8> {
    let mut v = vec![0; n];
    par::fill(&mut v, |i| flag(i as u64));
    v
}

/// The mismatches one worker found: the first (its index and message) and how many more.
#[derive(Default)]
struct Mismatches {
    first: Option<(usize, String)>,
    more: u64,
}

impl Mismatches {
    /// Notes a mismatch at `index` (the message is made for the first only).
    fn note(&mut self, index: usize, message: impl FnOnce() -> String) {
        if self.first.is_none() {
            self.first = Some((index, message()));
        } else {
            self.more += 1;
        }
    }

    /// The first mismatch of all the workers' as the error, with how many more there are.
    fn verdict(found: Vec<Mismatches>) -> Result<(), String> {
        let total: u64 = found.iter().filter(|m| m.first.is_some()).map(|m| m.more + 1).sum();
        match found.into_iter().filter_map(|m| m.first).min_by_key(|(i, _)| *i) {
            None => Ok(()),
            Some((_, message)) if total > 1 => Err(format!("{message} ({} more differ)", total - 1)),
            Some((_, message)) => Err(message),
        }
    }
}

/// Checks `output` against the inclusive (or `exclusive`) sum of `input`.
///
/// # Errors
/// The first element that differs (and how many more do), or a length mismatch.
pub fn check_scan<T: ScanElement>(input: &[T], output: &[T], exclusive: bool) -> Result<(), String> {
    if output.len() != input.len() {
        return Err(format!("{} output elements for {} inputs", output.len(), input.len()));
    }
    let parts = par::split(input.len());
    let sums = par::each(&parts, |_, r| input[r].iter().fold(T::Acc::default(), |a, &x| T::add(a, x)));
    let starts: Vec<T::Acc> = sums
        .iter()
        .scan(T::Acc::default(), |acc, &s| {
            let start = *acc;
            *acc = T::combine(*acc, s);
            Some(start)
        })
        .collect();
    let found = par::each(&parts, |w, r| {
        let mut acc = starts[w];
        let mut mismatches = Mismatches::default();
        for i in r {
            let before = acc;
            acc = T::add(acc, input[i]);
            let want = if exclusive { before } else { acc };
            if !T::matches(output[i], want) {
                mismatches.note(i, || format!("element {i} is {} not {want}", output[i]));
            }
        }
        mismatches
    });
    Mismatches::verdict(found)
}

/// Checks a selection: `count` must be the number of `i` with `keep(i)` and the first
/// `count` elements of `output` those `input[i]`, in order, bit for bit.
///
/// # Errors
/// A wrong count, or the first kept element that differs (and how many more do).
pub fn check_select<T: ScanElement>(
    input: &[T],
    keep: impl Fn(usize) -> bool + Sync,
    output: &[T],
    count: u64,
) -> Result<(), String> {
    let parts = par::split(input.len());
    let kept = par::each(&parts, |_, r| r.filter(|&i| keep(i)).count());
    let expected: usize = kept.iter().sum();
    if count != expected as u64 {
        return Err(format!("count {count} not {expected}"));
    }
    if expected > output.len() {
        return Err(format!("{expected} kept elements do not fit {} output elements", output.len()));
    }
    let starts: Vec<usize> = kept
        .iter()
        .scan(0, |acc, &k| {
            let start = *acc;
            *acc += k;
            Some(start)
        })
        .collect();
    let found = par::each(&parts, |w, r| {
        let mut mismatches = Mismatches::default();
        for (j, i) in (starts[w]..).zip(r.filter(|&i| keep(i))) {
            if bytemuck::bytes_of(&output[j]) != bytemuck::bytes_of(&input[i]) {
                mismatches
                    .note(j, || format!("kept element {j} is {} not {} (input {i})", output[j], input[i]));
            }
        }
        mismatches
    });
    Mismatches::verdict(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_uniform_and_selections_keep_about_half() {
        let n = 1 << 16;
        let f: Vec<f32> = input(n);
        assert!(f.iter().all(|&x| (0.0..1.0).contains(&x)));
        let d: Vec<f64> = input(n);
        assert!(d.iter().all(|&x| (0.0..1.0).contains(&x)));
        let i: Vec<i32> = input(n);
        assert!(i.iter().all(|&x| (0..1 << 30).contains(&x)));
        let half = |k: usize| (k as f64 / n as f64 - 0.5).abs() < 0.01;
        assert!(half(f.iter().filter(|&&x| x < f32::MIDPOINT).count()));
        assert!(half(d.iter().filter(|&&x| x < f64::MIDPOINT).count()));
        assert!(half(i.iter().filter(|&&x| x < i32::MIDPOINT).count()));
        assert!(half(flags(n).iter().filter(|&&b| b != 0).count()));
        assert!(flags(n).iter().all(|&b| b <= 1));
        // The same function as scan_cub.cu's (its first elements, computed by hand from
        // the hash: element(0) of f32 is hash(65, 0) >> 40 scaled by 2^-24).
        assert_eq!(element::<f32>(0), (hash(65, 0) >> 40) as f32 / 16_777_216.0);
        assert_eq!(element::<i32>(7), (hash(67, 7) >> 34) as i32);
        assert_eq!(flag(3), (hash(80, 3) >> 63) as u8);
    }

    fn sequential<T: ScanElement>(input: &[T], exclusive: bool) -> Vec<T::Acc> {
        let mut acc = T::Acc::default();
        input
            .iter()
            .map(|&x| {
                let before = acc;
                acc = T::add(acc, x);
                if exclusive {
                    before
                } else {
                    acc
                }
            })
            .collect()
    }

    #[test]
    fn scan_checks_accept_right_and_name_wrong_sums() {
        for n in [0usize, 1, 5, 4097, 100_000] {
            let x: Vec<i32> = input(n);
            for exclusive in [false, true] {
                let mut out = sequential(&x, exclusive);
                assert_eq!(check_scan(&x, &out, exclusive), Ok(()), "n {n}");
                if n > 3 {
                    out[3] = out[3].wrapping_add(1);
                    out[n - 1] = out[n - 1].wrapping_add(1);
                    let err = check_scan(&x, &out, exclusive).unwrap_err();
                    assert!(err.starts_with("element 3 is ") && err.ends_with("(1 more differ)"), "{err}");
                }
            }
        }
        // Floats: summed in f32 in another order, within the tolerance; a real error not.
        let x: Vec<f32> = input(1 << 20);
        let mut out: Vec<f32> = Vec::with_capacity(x.len());
        let mut tile_base = 0f32;
        for tile in x.chunks(4096) {
            let mut s = 0f32;
            for &v in tile {
                s += v;
                out.push(tile_base + s);
            }
            tile_base += s;
        }
        assert_eq!(check_scan(&x, &out, false), Ok(()));
        out[1000] *= 1.01;
        assert!(check_scan(&x, &out, false).unwrap_err().starts_with("element 1000 is "));
        assert!(check_scan(&x, &out[1..], false).unwrap_err().contains("output elements"));
    }

    #[test]
    fn select_checks_count_and_elements() {
        let x: Vec<f64> = input(10_000);
        let keep = |i: usize| x[i] < f64::MIDPOINT;
        let mut out: Vec<f64> = x.iter().copied().filter(|v| *v < f64::MIDPOINT).collect();
        let count = out.len() as u64;
        out.resize(x.len(), -1.0);
        assert_eq!(check_select(&x, keep, &out, count), Ok(()));
        assert_eq!(
            check_select(&x, keep, &out, count + 1).unwrap_err(),
            format!("count {} not {count}", count + 1)
        );
        assert!(check_select(&x, keep, &out, u64::MAX).is_err(), "an unwritten (poisoned) count");
        out[17] = 2.0;
        let err = check_select(&x, keep, &out, count).unwrap_err();
        assert!(err.starts_with("kept element 17 is 2 not "), "{err}");
        let f = flags(x.len());
        let flagged: Vec<f64> = x.iter().zip(&f).filter(|(_, &b)| b != 0).map(|(v, _)| *v).collect();
        assert_eq!(check_select(&x, |i| f[i] != 0, &flagged, flagged.len() as u64), Ok(()));
        assert_eq!(check_select::<f64>(&[], |_| true, &[], 0), Ok(()));
    }
}
