//! The poison word that marks undefined values, and the record of where a launch
//! produced them (see `undefined` for the checks that use them).

use std::string::String;
use std::vec::Vec;

use super::site::Tid;

/// The poison word: `0xfffa5a5a`, a quiet NaN as an `f32` and as an `f64`'s upper half.
pub const POISON: u32 = 0xfffa_5a5a;

/// How many origins a launch keeps for its messages.
pub(crate) const ORIGINS_KEPT: usize = 64;

/// Where an undefined value came from.
pub(crate) struct Origin {
    pub thread: Tid,
    /// "block (0, 0, 0), warp 0, lane 3 (...) read element 7 of `S` (declared at ...) at
    /// file:line before any thread wrote it".
    pub what: String,
}

/// The undefined values a launch produced.
#[derive(Default)]
pub(crate) struct Undefined {
    pub origins: Vec<Origin>,
}

/// Whether `bytes` hold the poison word at a 4-byte-aligned offset.
pub(crate) fn contains_poison(bytes: &[u8]) -> bool {
    bytes.chunks_exact(4).any(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) == POISON)
}

/// `bytes` of memory filled with the poison word (its bytes in order, from offset 0).
pub(crate) fn fill(bytes: &mut [u8]) {
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = POISON.to_le_bytes()[i % 4];
    }
}
