//! Element-wise folds of several equal-length copies of an array: `out[i]` is the
//! combination of element `i` of every copy, in copy order.
//!
//! This is the combining step of a cross-device all-reduce for an operator the transport
//! cannot apply itself (a bitwise or user-defined operator under NCCL, which only sums,
//! multiplies, takes minima and maxima): the devices all-gather their arrays into one
//! buffer of `copies * len` elements, copy `r` at offset `r * len`, and each device folds
//! them with [`fold_copies`]. Every device folds the same bytes in the same order, so all
//! of them hold bit-identical results, for floats too.

use bytemuck::Pod;

use crate::global::{DisjointSlice, Slice};
use crate::op::Operator;
use crate::thread;

/// `out[i] = combine(... combine(combine(copies[i], copies[len + i]), copies[2 len + i]) ...)`
/// over the `count` copies of `len = out.len()` elements laid end to end in `copies`, in
/// copy order (so `op` need not commute). A grid-stride loop: any grid covers any length.
///
/// `copies` must hold at least `count * out.len()` elements; the host checks it, and a
/// shorter one is an index past the end, reported and trapped like every checked read.
/// `count` 0 writes the identity.
#[inline(always)]
pub fn fold_copies<T: Pod, O: Operator<T>>(copies: Slice<T>, count: u32, out: DisjointSlice<T>, op: O) {
    let len = out.len();
    for i in thread::grid_stride(len) {
        let at = i.get();
        let mut value = op.identity();
        for copy in 0..count as usize {
            value = op.combine(value, copies[copy * len + at]);
        }
        out.write(i, value);
    }
}
