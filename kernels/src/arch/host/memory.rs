//! Fences, scoped atomics, ordered and volatile accesses, and block barriers on the
//! emulator. Atomics are `core::sync::atomic` operations on the same host addresses, with
//! the ordering the PTX semantics names (`.relaxed` -> `Relaxed`, `.acquire` -> `Acquire`,
//! ...); the scope goes to the emulator's race check (a `.cta` atomic or release does not
//! order threads of other blocks). Each
//! access is a switch point of the emulator's scheduler, so a spin on an atomic or
//! volatile flag lets the thread that sets it run.

use core::panic::Location;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::arch::{L2Prefetch, LoadSem, RmwSem, Scope, StoreSem};
use warpsafe_emu::device::{self as emu, BarOp, Order};

/// The contract shared by every atomic and ordered access below.
macro_rules! access_safety_doc {
    () => {
        "# Safety\n\
         `ptr` is aligned to the operand's size and valid for reads and writes for the \
         whole access; every access to the location that may run concurrently with this \
         one is atomic (as on the GPU). A misaligned address ends the launch with a trap."
    };
}

/// A 32- or 64-bit operand and the core atomic that holds its bits.
trait Word: Copy {
    fn to_bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
}

macro_rules! words {
    ($($t:ty: |$x:ident| $to:expr, |$y:ident| $from:expr;)*) => {$(
        impl Word for $t {
            #[inline]
            fn to_bits(self) -> u64 {
                let $x = self;
                $to
            }
            #[inline]
            fn from_bits(bits: u64) -> Self {
                let $y = bits;
                $from
            }
        }
    )*};
}

words! {
    u32: |x| x as u64, |y| y as u32;
    i32: |x| x as u32 as u64, |y| y as u32 as i32;
    f32: |x| x.to_bits() as u64, |y| f32::from_bits(y as u32);
    u64: |x| x, |y| y;
    i64: |x| x as u64, |y| y as i64;
    f64: |x| x.to_bits(), |y| f64::from_bits(y);
}

/// The orderings of a read-modify-write: on success, on failure (never more than the
/// success ordering's load part), and the race check's view.
fn rmw_orderings(sem: RmwSem) -> (Ordering, Ordering, Order) {
    match sem {
        RmwSem::Relaxed => (Ordering::Relaxed, Ordering::Relaxed, Order::Relaxed),
        RmwSem::Acquire => (Ordering::Acquire, Ordering::Acquire, Order::Acquire),
        RmwSem::Release => (Ordering::Release, Ordering::Relaxed, Order::Release),
        RmwSem::AcqRel => (Ordering::AcqRel, Ordering::Acquire, Order::AcqRel),
    }
}

fn store_sem(sem: StoreSem) -> RmwSem {
    match sem {
        StoreSem::Relaxed => RmwSem::Relaxed,
        StoreSem::Release => RmwSem::Release,
    }
}

/// Checks `ptr`'s alignment for a `T`-sized atomic or volatile access (a trap otherwise,
/// as the GPU faults on a misaligned access).
#[track_caller]
fn aligned<T>(ptr: *const T) -> usize {
    let addr = ptr as usize;
    let bytes = core::mem::size_of::<T>();
    if !addr.is_multiple_of(bytes) {
        emu::misaligned(addr, bytes, Location::caller());
    }
    addr
}

/// The value an atomic or a store writes: the emulator reports it if it carries an
/// undefined value.
#[inline]
#[track_caller]
fn operand<T: Word>(value: T) {
    let bits = value.to_bits().to_le_bytes();
    emu::check_stored(&bits[..core::mem::size_of::<T>()], Location::caller());
}

/// Atomically replaces `*ptr` with `update(*ptr)` and returns the old value.
///
/// # Safety
/// As for the public atomics (`access_safety_doc`).
#[track_caller]
unsafe fn rmw<T: Word>(scope: Scope, ptr: *mut T, sem: RmwSem, update: impl Fn(T) -> T) -> T {
    let addr = aligned(ptr);
    let (success, failure, order) = rmw_orderings(sem);
    emu::memory(addr, core::mem::size_of::<T>(), order, Some(scope), Location::caller(), || {
        let old = if core::mem::size_of::<T>() == 4 {
            // SAFETY: `ptr` is aligned (checked) and valid (caller), and every concurrent
            // access is atomic (caller).
            let atomic = unsafe { AtomicU32::from_ptr(ptr.cast()) };
            let step = |old: u32| Some(update(T::from_bits(old as u64)).to_bits() as u32);
            match atomic.fetch_update(success, failure, step) {
                Ok(old) | Err(old) => old as u64,
            }
        } else {
            // SAFETY: as above, for eight bytes.
            let atomic = unsafe { AtomicU64::from_ptr(ptr.cast()) };
            let step = |old: u64| Some(update(T::from_bits(old)).to_bits());
            match atomic.fetch_update(success, failure, step) {
                Ok(old) | Err(old) => old,
            }
        };
        let new = update(T::from_bits(old)).to_bits();
        (T::from_bits(old), old, true, new != old)
    })
}

/// `atom.add.f32`'s treatment of subnormals: inputs and results are flushed to zero.
fn flush(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

macro_rules! atom_fns {
    ($($name:ident, $red:ident: $t:ty, $ptx:literal, |$old:ident, $v:ident| $new:expr;)*) => {$(
        #[doc = concat!("`atom{.sem}{.scope}.", $ptx, "` on the emulator: atomically replaces \
            `*ptr` and returns the value it replaced.\n\n", access_safety_doc!())]
        #[inline]
        #[track_caller]
        pub unsafe fn $name(scope: Scope, sem: RmwSem, ptr: *mut $t, value: $t) -> $t {
            operand(value);
            // SAFETY: forwarded from the caller.
            unsafe { rmw(scope, ptr, sem, |$old: $t| { let $v = value; $new }) }
        }

        #[doc = concat!("`red{.sem}{.scope}.", $ptx, "` on the emulator: as [`", stringify!($name),
            "`], returning nothing.\n\n", access_safety_doc!())]
        #[inline]
        #[track_caller]
        pub unsafe fn $red(scope: Scope, sem: StoreSem, ptr: *mut $t, value: $t) {
            operand(value);
            // SAFETY: forwarded from the caller.
            unsafe { rmw(scope, ptr, store_sem(sem), |$old: $t| { let $v = value; $new }) };
        }
    )*};
}

atom_fns! {
    atom_add_u32, red_add_u32: u32, "add.u32", |old, v| old.wrapping_add(v);
    atom_add_s32, red_add_s32: i32, "add.s32", |old, v| old.wrapping_add(v);
    atom_add_u64, red_add_u64: u64, "add.u64", |old, v| old.wrapping_add(v);
    atom_add_f32, red_add_f32: f32, "add.f32", |old, v| flush(flush(old) + flush(v));
    atom_add_f64, red_add_f64: f64, "add.f64", |old, v| old + v;
    atom_min_u32, red_min_u32: u32, "min.u32", |old, v| old.min(v);
    atom_min_s32, red_min_s32: i32, "min.s32", |old, v| old.min(v);
    atom_min_u64, red_min_u64: u64, "min.u64", |old, v| old.min(v);
    atom_min_s64, red_min_s64: i64, "min.s64", |old, v| old.min(v);
    atom_max_u32, red_max_u32: u32, "max.u32", |old, v| old.max(v);
    atom_max_s32, red_max_s32: i32, "max.s32", |old, v| old.max(v);
    atom_max_u64, red_max_u64: u64, "max.u64", |old, v| old.max(v);
    atom_max_s64, red_max_s64: i64, "max.s64", |old, v| old.max(v);
    atom_and_b32, red_and_b32: u32, "and.b32", |old, v| old & v;
    atom_and_b64, red_and_b64: u64, "and.b64", |old, v| old & v;
    atom_or_b32, red_or_b32: u32, "or.b32", |old, v| old | v;
    atom_or_b64, red_or_b64: u64, "or.b64", |old, v| old | v;
    atom_xor_b32, red_xor_b32: u32, "xor.b32", |old, v| old ^ v;
    atom_xor_b64, red_xor_b64: u64, "xor.b64", |old, v| old ^ v;
    atom_inc_u32, red_inc_u32: u32, "inc.u32", |old, v| if old >= v { 0 } else { old + 1 };
    atom_dec_u32, red_dec_u32: u32, "dec.u32", |old, v| if old == 0 || old > v { v } else { old - 1 };
}

macro_rules! exch_cas_fns {
    ($($exch:ident, $cas:ident: $t:ty, $ptx:literal;)*) => {$(
        #[doc = concat!("`atom{.sem}{.scope}.exch.", $ptx, "` on the emulator: stores `value`, \
            returns the value it replaced.\n\n", access_safety_doc!())]
        #[inline]
        #[track_caller]
        pub unsafe fn $exch(scope: Scope, sem: RmwSem, ptr: *mut $t, value: $t) -> $t {
            operand(value);
            // SAFETY: forwarded from the caller.
            unsafe { rmw(scope, ptr, sem, |_| value) }
        }

        #[doc = concat!("`atom{.sem}{.scope}.cas.", $ptx, "` on the emulator: stores `new` if \
            `*ptr == expected`; returns the value `*ptr` held before.\n\n", access_safety_doc!())]
        #[inline]
        #[track_caller]
        pub unsafe fn $cas(scope: Scope, sem: RmwSem, ptr: *mut $t, expected: $t, new: $t) -> $t {
            operand(new);
            // SAFETY: forwarded from the caller.
            unsafe { rmw(scope, ptr, sem, |old| if old == expected { new } else { old }) }
        }
    )*};
}

exch_cas_fns! {
    atom_exch_b32, atom_cas_b32: u32, "b32";
    atom_exch_b64, atom_cas_b64: u64, "b64";
}

macro_rules! ld_st_fns {
    ($($ld:ident, $st:ident: $t:ty, $atomic:ty, $ptx:literal;)*) => {$(
        #[doc = concat!("`ld.relaxed` / `ld.acquire{.scope}.", $ptx, "` on the emulator: an \
            atomic load with `Relaxed` or `Acquire` ordering.\n\n", access_safety_doc!())]
        #[inline]
        #[track_caller]
        pub unsafe fn $ld(scope: Scope, sem: LoadSem, ptr: *const $t) -> $t {
            let addr = aligned(ptr);
            let (ordering, order) = match sem {
                LoadSem::Relaxed => (Ordering::Relaxed, Order::Relaxed),
                LoadSem::Acquire => (Ordering::Acquire, Order::Acquire),
            };
            emu::memory(addr, core::mem::size_of::<$t>(), order, Some(scope), Location::caller(), || {
                // SAFETY: aligned (checked), valid and atomically accessed (caller).
                let value = unsafe { <$atomic>::from_ptr(ptr.cast_mut()) }.load(ordering);
                (value, value as u64, true, false)
            })
        }

        #[doc = concat!("`st.relaxed` / `st.release{.scope}.", $ptx, "` on the emulator: an \
            atomic store with `Relaxed` or `Release` ordering.\n\n", access_safety_doc!())]
        #[inline]
        #[track_caller]
        pub unsafe fn $st(scope: Scope, sem: StoreSem, ptr: *mut $t, value: $t) {
            operand(value);
            let addr = aligned(ptr);
            let (ordering, order) = match sem {
                StoreSem::Relaxed => (Ordering::Relaxed, Order::Relaxed),
                StoreSem::Release => (Ordering::Release, Order::Release),
            };
            emu::memory(addr, core::mem::size_of::<$t>(), order, Some(scope), Location::caller(), || {
                // SAFETY: aligned (checked), valid and atomically accessed (caller).
                unsafe { <$atomic>::from_ptr(ptr) }.store(value, ordering);
                ((), value as u64, false, true)
            })
        }
    )*};
}

ld_st_fns! {
    ld_b32, st_b32: u32, AtomicU32, "b32";
    ld_b64, st_b64: u64, AtomicU64, "b64";
}

macro_rules! volatile_fns {
    ($($ld:ident, $st:ident: $t:ty, $ptx:literal;)*) => {$(
        #[doc = concat!("`ld.volatile.", $ptx, "` on the emulator: a volatile read, and a \
            switch point (so a spin on it lets the writer run).\n\n", access_safety_doc!())]
        #[inline]
        #[track_caller]
        pub unsafe fn $ld(ptr: *const $t) -> $t {
            let addr = aligned(ptr);
            emu::memory(addr, core::mem::size_of::<$t>(), Order::Relaxed, None, Location::caller(), || {
                // SAFETY: forwarded from the caller.
                let value = unsafe { core::ptr::read_volatile(ptr) };
                (value, value as u64, true, false)
            })
        }

        #[doc = concat!("`st.volatile.", $ptx, "` on the emulator: a volatile write, and a \
            switch point.\n\n", access_safety_doc!())]
        #[inline]
        #[track_caller]
        pub unsafe fn $st(ptr: *mut $t, value: $t) {
            operand(value);
            let addr = aligned(ptr);
            emu::memory(addr, core::mem::size_of::<$t>(), Order::Relaxed, None, Location::caller(), || {
                // SAFETY: forwarded from the caller.
                unsafe { core::ptr::write_volatile(ptr, value) };
                ((), value as u64, false, true)
            })
        }
    )*};
}

volatile_fns! {
    ld_volatile_b32, st_volatile_b32: u32, "b32";
    ld_volatile_b64, st_volatile_b64: u64, "b64";
}

/// `fence.sc.{cta,gpu,sys}` on the emulator: `fence(SeqCst)`, and a switch point.
#[inline]
#[track_caller]
pub fn fence_sc(scope: Scope) {
    emu::fence(Ordering::SeqCst, scope, Location::caller());
}

/// `fence.acq_rel.{cta,gpu,sys}` on the emulator: `fence(AcqRel)`, and a switch point.
#[inline]
#[track_caller]
pub fn fence_acq_rel(scope: Scope) {
    emu::fence(Ordering::AcqRel, scope, Location::caller());
}

/// `barrier.sync id` on the emulator: waits until every thread of the block that has not
/// exited has arrived at barrier `id`.
///
/// # Safety
/// As on the GPU: `id < 16`, and every thread of the block that has not exited reaches
/// barrier `id`; otherwise the launch ends with `warpsafe_emu::ErrorKind::BarrierMismatch`.
#[inline]
#[track_caller]
pub unsafe fn barrier_sync(id: u32) {
    emu::barrier(id, BarOp::Sync, None, false, Location::caller());
}

/// `barrier.sync id, count` on the emulator: completes once `count` threads arrived.
///
/// # Safety
/// As on the GPU: `id < 16`, `count` a non-zero multiple of 32 and at most the block's
/// size rounded up to whole warps, and exactly `count` threads arrive each time.
#[inline]
#[track_caller]
pub unsafe fn barrier_sync_count(id: u32, count: u32) {
    emu::barrier(id, BarOp::Sync, Some(count), false, Location::caller());
}

/// `barrier.red.popc.u32` on the emulator: [`barrier_sync`], returning the number of
/// threads whose `predicate` is true.
///
/// # Safety
/// As for [`barrier_sync`]; every thread at the barrier uses this same reduction.
#[inline]
#[track_caller]
pub unsafe fn barrier_red_popc(id: u32, predicate: bool) -> u32 {
    emu::barrier(id, BarOp::Popc, None, predicate, Location::caller()).0 as u32
}

/// `barrier.red.and.pred` on the emulator.
///
/// # Safety
/// As for [`barrier_red_popc`].
#[inline]
#[track_caller]
pub unsafe fn barrier_red_and(id: u32, predicate: bool) -> bool {
    emu::barrier(id, BarOp::And, None, predicate, Location::caller()).1
}

/// `barrier.red.or.pred` on the emulator.
///
/// # Safety
/// As for [`barrier_red_popc`].
#[inline]
#[track_caller]
pub unsafe fn barrier_red_or(id: u32, predicate: bool) -> bool {
    emu::barrier(id, BarOp::Or, None, predicate, Location::caller()).1
}

/// `red.relaxed.cta.shared.add.u32` on the emulator: [`red_add_u32`] at block scope,
/// relaxed, after checking that `ptr` lies in the block's shared memory
/// (`warpsafe_emu::device::check_shared_bounds`: `SharedOutOfBounds` if not).
///
/// # Safety
/// `ptr` is the executing block's shared memory, 4-byte aligned, and every access to the
/// location that may run concurrently is atomic.
#[inline]
#[track_caller]
pub unsafe fn red_shared_add_u32(ptr: *mut u32, value: u32) {
    emu::check_shared_bounds(ptr as usize, 4, Location::caller());
    // SAFETY: forwarded from the caller (and the address checked above).
    unsafe { red_add_u32(Scope::Cta, StoreSem::Relaxed, ptr, value) }
}

/// [`red_shared_add_u32`] at `byte_offset` bytes past `base`.
///
/// # Safety
/// `base + byte_offset` is as [`red_shared_add_u32`] requires of its `ptr`.
#[inline]
#[track_caller]
pub unsafe fn red_shared_add_u32_at(base: *mut u32, byte_offset: u32, value: u32) {
    // SAFETY: forwarded from the caller.
    // `wrapping_byte_add`: an address past the block's shared memory is reported by the
    // bounds check rather than made undefined by the pointer arithmetic.
    unsafe { red_shared_add_u32(base.wrapping_byte_add(byte_offset as usize), value) }
}

/// `ld.global.nc.v4.b32` on the emulator: a plain 16-byte read of host memory (the L2
/// prefetch `P` asks for changes nothing here).
///
/// # Safety
/// `ptr` is 16-byte aligned and readable for 16 bytes, and nothing writes those bytes
/// while the kernel runs.
#[inline]
pub unsafe fn load_global_nc_16<P: L2Prefetch>(ptr: *const [u32; 4]) -> [u32; 4] {
    // SAFETY: the caller's contract.
    unsafe { ptr.read() }
}

/// `ld.global.nc.v2.b64` on the emulator: a plain 16-byte read of host memory.
///
/// # Safety
/// As for [`load_global_nc_16`].
#[inline]
pub unsafe fn load_global_nc_16_b64<P: L2Prefetch>(ptr: *const [u64; 2]) -> [u64; 2] {
    // SAFETY: the caller's contract.
    unsafe { ptr.read() }
}

/// `ld.global.v4.b32` on the emulator: a plain 16-byte read of host memory.
///
/// # Safety
/// `ptr` is 16-byte aligned and readable for 16 bytes, and no other thread writes those
/// bytes during the call.
#[inline]
pub unsafe fn load_global_16(ptr: *const [u32; 4]) -> [u32; 4] {
    // SAFETY: the caller's contract.
    unsafe { ptr.read() }
}

/// `st.global.v4.b32` on the emulator: a plain 16-byte write of host memory.
///
/// # Safety
/// `ptr` is 16-byte aligned and writable for 16 bytes, and no other thread accesses those
/// bytes during the call.
#[inline]
pub unsafe fn store_global_16(ptr: *mut [u32; 4], value: [u32; 4]) {
    // SAFETY: the caller's contract.
    unsafe { ptr.write(value) }
}

/// `cp.async.cg.shared.global [dst], [src], 16` on the emulator: the copy performed at
/// once, as a plain 16-byte read of `src` and a shared-memory write of `dst` through
/// [`shared_write`](super::shared_write) (a switch point, the race check and the
/// undefined-value check see it as this thread's write, at this call). On the GPU the copy
/// may land any time before [`copy_async_wait_all`], so the emulator's view is the earliest
/// legal one.
///
/// # Safety
/// `dst` is the executing block's shared memory and `src` global memory, both 16-byte
/// aligned and valid for 16 bytes; nothing accesses `dst`, and nothing writes `src`, until
/// the thread's next [`copy_async_wait_all`] or covering [`copy_async_wait_group`] (and,
/// for other threads, a barrier after it).
#[inline]
#[track_caller]
pub unsafe fn copy_async_16(dst: *mut [u32; 4], src: *const [u32; 4]) {
    aligned(dst);
    aligned(src);
    // SAFETY: the caller's contract.
    let value = unsafe { load_global_16(src) };
    // SAFETY: the caller's contract: `dst` is this block's shared memory.
    unsafe { super::shared_write(dst, value) }
}

/// `cp.async.commit_group` on the emulator: nothing to group ([`copy_async_16`] copies
/// at once).
#[inline]
pub fn copy_async_commit() {}

/// `cp.async.wait_group N` on the emulator: nothing to wait for; like
/// [`copy_async_wait_all`] it adds no happens-before edge between threads.
#[inline]
pub fn copy_async_wait_group<const N: u32>() {}

/// `cp.async.wait_all` on the emulator: nothing to wait for ([`copy_async_16`] copies at
/// once). It orders nothing between threads (on the GPU neither does the wait alone: a
/// barrier must follow), so it adds no happens-before edge for the race check.
#[inline]
pub fn copy_async_wait_all() {}
