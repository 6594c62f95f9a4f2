//! `segreduce-bench`'s segment patterns, inputs and the host reference its results are
//! checked against. Everything here is the same function as in `cub/segmented_cub.cu`
//! (integer arithmetic only, so both sides see the same elements and the same segments).
//!
//! - Element `i` is a small whole number as an `f32`: `hash(SALT, i) >> 61`, 0 to 7.
//! - A fixed pattern of length `L` has `ceil(n / L)` segments, `L` elements each (the last
//!   one shorter when `L` does not divide `n`): warpsafe's `reduce_fixed`, CUB's offsets
//!   `i * L` (capped at `n`).
//! - The power-law pattern ([`power_law_offsets`]): lengths whose tail falls as `1/x`
//!   (about 13 elements on average) and three huge segments of `n / 16` elements each,
//!   given as offsets to both sides (warpsafe's `reduce_offsets`).
//!
//! Checks ([`check_sums`]): a segment's sum is exact when it is below 2^24 (every partial
//! sum is then a whole number that `f32` holds, so any order of additions gives the same
//! bits); a larger sum (only the power-law's huge segments reach one) must be within
//! [`TOLERANCE`] of the reference, relative.

use std::fmt;

use crate::data::hash;
use crate::par;

/// The salt of the elements' hash.
const SALT: u64 = 130;
/// The salt of the power-law lengths' hash.
const LENGTH_SALT: u64 = 131;
/// The relative tolerance of a sum of 2^24 or more.
pub const TOLERANCE: f64 = 1e-5;
/// The largest sum every order of additions gets exactly.
const EXACT_BELOW: f64 = 16_777_216.0;

/// How the input is cut into segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pattern {
    /// Every segment `L` elements long (the last one possibly shorter).
    Fixed(u64),
    /// The power-law mix of [`power_law_offsets`].
    PowerLaw,
}

impl Pattern {
    /// The patterns, in table order.
    pub const DEFAULT: [Pattern; 7] = [
        Pattern::Fixed(1),
        Pattern::Fixed(8),
        Pattern::Fixed(32),
        Pattern::Fixed(128),
        Pattern::Fixed(1024),
        Pattern::Fixed(65536),
        Pattern::PowerLaw,
    ];

    /// The name on the command line, in the CSV and in `segmented_cub`'s output: the
    /// length, or `power-law`.
    pub fn name(self) -> String {
        match self {
            Pattern::Fixed(len) => len.to_string(),
            Pattern::PowerLaw => "power-law".to_string(),
        }
    }

    /// The pattern named `name` (a fixed length must be at least 1).
    pub fn parse(name: &str) -> Option<Pattern> {
        match name {
            "power-law" => Some(Pattern::PowerLaw),
            s => s.parse().ok().filter(|&len| len > 0).map(Pattern::Fixed),
        }
    }

    /// Whether the pattern is measured at `n` elements: a fixed length no longer than `n`.
    pub fn fits(self, n: u64) -> bool {
        match self {
            Pattern::Fixed(len) => len <= n,
            Pattern::PowerLaw => true,
        }
    }

    /// Whether warpsafe is given offsets (CUB always is).
    pub fn has_offsets(self) -> bool {
        self == Pattern::PowerLaw
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Fixed(len) => write!(f, "L={len}"),
            Pattern::PowerLaw => f.write_str("power-law"),
        }
    }
}

/// Element `i` of the input: 0 to 7.
pub fn element(i: u64) -> f32 {
    (hash(SALT, i) >> 61) as f32
}

/// The input of `n` elements, filled on all cores.
pub fn input(n: usize) -> Vec<f32> {
    let mut v = vec![0.0; n];
    par::fill(&mut v, |i| element(i as u64));
    v
}

/// The length of the `s`-th power-law segment before it is cut at the input's end: `2^k`
/// plus `k` more random bits, `k` the number of trailing zeros of a hash (so `k` is `j`
/// with probability `2^-(j+1)`), at most 16.
pub fn power_law_length(s: u64) -> u64 {
    let h = hash(LENGTH_SALT, s);
    let k = u64::from(h.trailing_zeros().min(16));
    (1u64 << k) + ((h >> 32) & ((1u64 << k) - 1))
}

/// The offsets of the power-law pattern over `n` elements: segments of
/// [`power_law_length`] one after another, except that when the next segment starts at or
/// past `q * n / 4` (`q` = 1, 2, 3) for the first time, a huge segment of `n / 16` elements
/// comes first (when `n >= 16`); the last segment is cut at `n`. Starts at 0, ends at `n`.
pub fn power_law_offsets(n: u64) -> Vec<u64> {
    let huge = n / 16;
    let mut offsets = vec![0u64];
    let (mut at, mut s, mut huge_done) = (0u64, 0u64, 0u64);
    while at < n {
        let len = if huge > 0 && huge_done < 3 && at >= (huge_done + 1) * n / 4 {
            huge_done += 1;
            huge
        } else {
            s += 1;
            power_law_length(s - 1)
        };
        at = (at + len).min(n);
        offsets.push(at);
    }
    offsets
}

/// The segment count of a fixed length `len` over `n` elements.
pub fn fixed_segments(n: u64, len: u64) -> u64 {
    n.div_ceil(len)
}

/// The segments' sums in `f64` (exact: at most 2^31 elements of at most 7), on all cores;
/// segment `s` is `input[begin(s)..end(s)]`.
pub fn reference(
    input: &[f32],
    segments: usize,
    bounds: impl Fn(usize) -> (usize, usize) + Sync,
) -> Vec<f64> {
    let mut sums = vec![0.0; segments];
    par::fill(&mut sums, |s| {
        let (b, e) = bounds(s);
        input[b..e].iter().fold(0.0, |sum, &x| sum + f64::from(x))
    });
    sums
}

/// The reference of a fixed length `len`.
pub fn fixed_reference(input: &[f32], len: usize) -> Vec<f64> {
    let n = input.len();
    reference(input, n.div_ceil(len), |s| (s * len, ((s + 1) * len).min(n)))
}

/// The reference of `offsets` (segment `s` is `offsets[s]..offsets[s + 1]`).
pub fn offsets_reference(input: &[f32], offsets: &[u64]) -> Vec<f64> {
    reference(input, offsets.len().saturating_sub(1), |s| (offsets[s] as usize, offsets[s + 1] as usize))
}

/// Whether a device sum `got` matches the reference `want` (module docs).
pub fn matches(got: f32, want: f64) -> bool {
    let got = f64::from(got);
    if want < EXACT_BELOW {
        got == want
    } else {
        (got - want).abs() <= TOLERANCE * want
    }
}

/// `Ok` when the first `want.len()` elements of `got` match `want`, else the first
/// mismatch and how many there are.
///
/// # Errors
/// The message, e.g. `segment 3 is 5 not 4 (and 2 more)`.
pub fn check_sums(got: &[f32], want: &[f64]) -> Result<(), String> {
    if got.len() < want.len() {
        return Err(format!("{} results for {} segments", got.len(), want.len()));
    }
    let mut bad = (0..want.len()).filter(|&s| !matches(got[s], want[s]));
    match bad.next() {
        None => Ok(()),
        Some(s) => {
            let more = bad.count();
            let tail = if more > 0 { format!(" (and {more} more)") } else { String::new() };
            Err(format!("segment {s} is {} not {}{tail}", got[s], want[s]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_parse_and_print() {
        for p in Pattern::DEFAULT {
            assert_eq!(Pattern::parse(&p.name()), Some(p));
        }
        assert_eq!(Pattern::parse("0"), None);
        assert_eq!(Pattern::parse("x"), None);
        assert_eq!(Pattern::Fixed(32).to_string(), "L=32");
        assert!(Pattern::Fixed(65536).fits(1 << 16) && !Pattern::Fixed(65536).fits(1 << 14));
        assert!(Pattern::PowerLaw.fits(1));
    }

    #[test]
    fn elements_are_small_whole_numbers_of_every_value() {
        let v = input(4096);
        assert!(v.iter().all(|x| x.fract() == 0.0 && (0.0..8.0).contains(x)));
        for k in 0..8 {
            assert!(v.contains(&(k as f32)), "{k}");
        }
        // The same function as segmented_cub.cu's element(): pinned values.
        assert_eq!(element(0), (hash(130, 0) >> 61) as f32);
    }

    #[test]
    fn power_law_offsets_cover_the_input_with_three_huge_segments() {
        for n in [0u64, 1, 15, 16, 4097, 1 << 20] {
            let o = power_law_offsets(n);
            assert_eq!((o[0], *o.last().unwrap()), (0, n), "{n}");
            assert!(o.windows(2).all(|w| w[0] < w[1]), "{n}: no empty segments, increasing");
            if n >= 1 << 20 {
                let huge = o.windows(2).filter(|w| w[1] - w[0] == n / 16).count();
                assert!(huge >= 3, "{n}: {huge}");
                let segments = o.len() as u64 - 1;
                let average = (n - 3 * n / 16) / segments;
                assert!((5..=30).contains(&average), "{n}: average {average}");
            }
        }
        let lengths: Vec<u64> = (0..1 << 16).map(power_law_length).collect();
        assert!(lengths.iter().all(|&l| (1..1 << 17).contains(&l)));
        let long = lengths.iter().filter(|&&l| l >= 1024).count();
        assert!((32..=128).contains(&long), "about 1 in 1000 at least 1024 long: {long}");
    }

    /// The same numbers as `cub/segmented_cub.cu`'s functions print (its host part built
    /// with g++ against stub CUDA headers, 2026-11-25): the offsets' polynomial hash and a
    /// weighted fold of the elements.
    #[test]
    fn same_as_segmented_cub() {
        for (n, segments, want) in
            [(1u64, 1, 1u64), (4097, 453, 8474728820926008227), (1 << 20, 84605, 14184457276973738025)]
        {
            let o = power_law_offsets(n);
            assert_eq!(o.len() - 1, segments, "{n}");
            let h = o.iter().fold(0u64, |h, &x| h.wrapping_mul(1000003).wrapping_add(x));
            assert_eq!(h, want, "{n}");
        }
        let s = (0..100_000).fold(0.0f64, |s, i| s * 1.0000001 + f64::from(element(i)));
        assert_eq!(s, 351931.52990715916);
    }

    #[test]
    fn references_and_checks() {
        let v: Vec<f32> = (0..10).map(|i| i as f32).collect();
        assert_eq!(fixed_reference(&v, 4), vec![6.0, 22.0, 17.0]);
        assert_eq!(offsets_reference(&v, &[0, 2, 2, 10]), vec![1.0, 0.0, 44.0]);
        assert_eq!(fixed_segments(10, 4), 3);
        assert!(check_sums(&[6.0, 22.0, 17.0, 99.0], &[6.0, 22.0, 17.0]).is_ok());
        assert_eq!(
            check_sums(&[6.0, 21.0, 16.0], &[6.0, 22.0, 17.0]).unwrap_err(),
            "segment 1 is 21 not 22 (and 1 more)"
        );
        assert!(check_sums(&[6.0], &[6.0, 1.0]).is_err());
        assert!(matches(3.0e7, 3.0e7 + 100.0) && !matches(3.0e7, 3.0e7 + 1000.0));
        assert!(!matches(100.0, 101.0), "small sums are exact");
    }
}
