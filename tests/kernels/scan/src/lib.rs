//! Test kernels for `warpsafe::scan` and `warpsafe::reduce::segmented`: segmented reductions
//! over the non-commutative composition of affine maps, scans over two user-defined operators (one that does
//! not commute, over an 8-byte type; one over a 12-byte type, which moves one element at
//! a time), a selection by a user predicate, and the library's scan over two hand-made
//! status protocols that pass values beside a separate flag: one correct (release and
//! acquire), one planted bug (the flag published without release, so it may be seen
//! before its value); and histogram kernels for a layout warpsafe does not build in
//! (`f32` samples in 2 channels, both counted).
#![no_std]

use core::marker::PhantomData;

use warpsafe::atomic::{Acquire, DeviceAtomicU32, LoadOrdering, Relaxed, Release, StoreOrdering};
use warpsafe::global::UnsafeSlice;
use warpsafe::op::{Operator, Sum};
use warpsafe::scan::lookback::{Slot, TileStatus};
use warpsafe::scan::select::Predicate;

/// The affine map `x -> a * x + b` over wrapping `u32`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Affine {
    /// The factor.
    pub a: u32,
    /// The offset.
    pub b: u32,
}

/// Composition, the left operand applied first: associative, not commutative, so a scan
/// that reorders operands gives a different answer.
#[derive(Clone, Copy, Debug, Default)]
pub struct Then;

impl Operator<Affine> for Then {
    fn identity(self) -> Affine {
        Affine { a: 1, b: 0 }
    }
    fn combine(self, first: Affine, second: Affine) -> Affine {
        Affine { a: second.a.wrapping_mul(first.a), b: second.a.wrapping_mul(first.b).wrapping_add(second.b) }
    }
}

/// The map an input value stands for in the tests.
pub fn affine_of(x: u32) -> Affine {
    Affine { a: (x & 0xff) | 1, b: x >> 8 }
}

/// Three wrapping `u32` sums side by side: 12 bytes, a size that does not divide 16.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Triple(pub [u32; 3]);

/// Element-wise wrapping sum.
#[derive(Clone, Copy, Debug, Default)]
pub struct TripleSum;

impl Operator<Triple> for TripleSum {
    const COMMUTATIVE: bool = true;
    fn identity(self) -> Triple {
        Triple([0; 3])
    }
    fn combine(self, a: Triple, b: Triple) -> Triple {
        Triple(core::array::from_fn(|i| a.0[i].wrapping_add(b.0[i])))
    }
}

/// The triple an input value stands for in the tests.
pub fn triple_of(x: u32) -> Triple {
    Triple([x, x.rotate_left(11), !x])
}

/// Keeps the values whose lowest bit is `self.0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Parity(pub u32);

impl Predicate<u32> for Parity {
    fn keep(self, value: u32) -> bool {
        value & 1 == self.0
    }
}

warpsafe::scan_kernels! {
    Affine, Then => scan_affine;
    Triple, TripleSum => scan_triple;
}

/// Keeps the bytes below `self.0` (a selection of one-byte elements; 255 keeps nearly all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct ByteBelow(pub u8);

impl Predicate<u8> for ByteBelow {
    fn keep(self, value: u8) -> bool {
        value < self.0
    }
}

warpsafe::select_kernels! {
    u32, Parity => select_parity;
    u8, ByteBelow => select_byte_below;
}

warpsafe::segmented_reduce_kernels! {
    Affine, Then => segreduce_affine_thread, segreduce_affine_tile4, segreduce_affine_tile16, segreduce_affine_warp, segreduce_affine_block, segreduce_affine_batches, segreduce_affine_chunks, segreduce_affine_small, segreduce_affine_scan;
}

warpsafe::histogram_kernels! {
    f32, 2, 2 => even [histogram_even_f32_2c2], range histogram_range_f32_2c2;
}

/// Status slots that keep each value in a plain array and announce it with a separate
/// flag word per slot holding the epoch. The flag is stored with ordering `S` after the
/// value and loaded with ordering `L` before it. With `Release`/`Acquire` the value's
/// write happens before its read; with `Relaxed` nothing orders them: the planted bug.
#[derive(Clone, Copy)]
pub struct FlagStatus<S, L> {
    /// One value per slot (`Slot::position`).
    values: UnsafeSlice<u32>,
    /// One flag per value.
    flags: *mut u32,
    epoch: u32,
    order: PhantomData<(S, L)>,
}

impl<S, L> FlagStatus<S, L> {
    fn flag(&self, slot: usize) -> &DeviceAtomicU32 {
        // SAFETY: the kernel's contract: one flag per slot, accessed only atomically.
        unsafe { DeviceAtomicU32::from_ptr(self.flags.add(slot)) }
    }
}

// SAFETY: with `Release`/`Acquire` a value is read only after the flag that announces it,
// whose release store follows the value's write; the `Relaxed` instance breaks that on
// purpose (the emulator must report it), and is launched only there.
unsafe impl<S: StoreOrdering + Copy + Default, L: LoadOrdering + Copy + Default> TileStatus<u32>
    for FlagStatus<S, L>
{
    unsafe fn publish(self, slot: Slot, value: u32) {
        let at = slot.position();
        // SAFETY: the slot is this publication's alone.
        unsafe { self.values.write(at, value) };
        self.flag(at).store(self.epoch, S::default());
    }

    unsafe fn read(self, slot: Slot) -> Option<u32> {
        let at = slot.position();
        if self.flag(at).load(L::default()) != self.epoch {
            return None;
        }
        // SAFETY: announced by the flag (ordered only with Release/Acquire).
        Some(unsafe { self.values.read(at) })
    }
}

/// Runs the library's scan (inclusive `u32` sum) over [`FlagStatus`] slots.
///
/// # Safety
/// As for `warpsafe::scan::device::scan`; `values` and `flags` hold `slots` `u32`s (34 per
/// window of 32 tiles), the flags zeroed or of other epochs.
#[allow(clippy::too_many_arguments)]
unsafe fn scan_with_flags<S: StoreOrdering + Copy + Default, L: LoadOrdering + Copy + Default>(
    input: *const u32,
    output: *mut u32,
    len: u64,
    values: *mut u32,
    slots: u64,
    flags: *mut u32,
    counter: *mut u32,
    epoch: u32,
) {
    let status = FlagStatus::<S, L> {
        // SAFETY: `slots` values (contract).
        values: unsafe { UnsafeSlice::from_raw_parts(values, slots as usize) },
        flags,
        epoch,
        order: PhantomData,
    };
    // SAFETY: forwarded from the launch contract.
    unsafe {
        warpsafe::scan::device::scan::<u32, Sum, _, { warpsafe::scan::device::items_per_thread::<u32>() }>(
            input, output, len, status, counter, false, Sum,
        )
    }
}

warpsafe::kernel! {
    /// The scan over flag-and-value slots, flag published with release, read with acquire.
    ///
    /// # Safety
    /// As for [`scan_with_flags`].
    pub unsafe fn scan_flag_release(
        input: *const u32,
        output: *mut u32,
        len: u64,
        values: *mut u32,
        slots: u64,
        flags: *mut u32,
        counter: *mut u32,
        epoch: u32,
    ) {
        // SAFETY: forwarded.
        unsafe { scan_with_flags::<Release, Acquire>(input, output, len, values, slots, flags, counter, epoch) }
    }

    /// The planted bug: the same, with the flag stored and loaded relaxed.
    ///
    /// # Safety
    /// As for [`scan_with_flags`]; the values race, so launch it only on the emulator.
    pub unsafe fn scan_flag_relaxed(
        input: *const u32,
        output: *mut u32,
        len: u64,
        values: *mut u32,
        slots: u64,
        flags: *mut u32,
        counter: *mut u32,
        epoch: u32,
    ) {
        // SAFETY: forwarded.
        unsafe { scan_with_flags::<Relaxed, Relaxed>(input, output, len, values, slots, flags, counter, epoch) }
    }
}
