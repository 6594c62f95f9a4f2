//! Scoped atomics, ordered loads and stores, and volatile accesses.
//!
//! An atomic's *scope* is the set of threads it is atomic with respect to, and it is part
//! of the type: [`BlockAtomicU32`] (PTX `.cta`, the threads of one block),
//! [`DeviceAtomicU32`] (`.gpu`, every thread on this GPU) and [`SystemAtomicU32`] (`.sys`,
//! every thread of the program: all GPUs and the host), and likewise for `i32`, `u64`,
//! `i64`, `f32` and `f64`. A narrower scope is cheaper: a block-scope atomic on shared
//! memory never leaves the SM.
//!
//! The *ordering* is a marker value passed to each method, and the compiler rejects the
//! orderings PTX does not have: [`Relaxed`] or [`Acquire`] for loads, [`Relaxed`] or
//! [`Release`] for stores and for the reductions (`red`, the methods that return
//! nothing), any of [`Relaxed`], [`Acquire`], [`Release`], [`AcqRel`] for the
//! read-modify-write methods (`atom`, the `fetch_*`, `swap` and `compare_exchange`).
//! PTX has no sequentially consistent access; put a `fence::*_sc` before one where
//! sequential consistency is needed (see [`crate::fence`]).
//!
//! Every method is one instruction, on a generic address (so global and shared memory
//! both work), needs sm_70+ and is named in its documentation:
//!
//! | CUDA | warpsafe | PTX |
//! | --- | --- | --- |
//! | `atomicAdd(p, v)` | `DeviceAtomicU32::from_ptr(p).fetch_add(v, Relaxed)` | `atom.relaxed.gpu.add.u32` |
//! | `atomicAdd_block(p, v)` | `BlockAtomicU32::from_ptr(p).fetch_add(v, Relaxed)` | `atom.relaxed.cta.add.u32` |
//! | `atomicAdd_system(p, v)` | `SystemAtomicU32::from_ptr(p).fetch_add(v, Relaxed)` | `atom.relaxed.sys.add.u32` |
//! | `atomicAdd(p, v)`, result unused | `.add(v, Relaxed)` | `red.relaxed.gpu.add.u32` |
//! | `atomicMin`/`atomicMax` | `.fetch_min`/`.fetch_max` | `atom.*.min.u32`/`.s32`/`.u64`/`.s64` |
//! | `atomicAnd`/`Or`/`Xor` | `.fetch_and`/`.fetch_or`/`.fetch_xor` | `atom.*.and.b32`/`.b64`, ... |
//! | `atomicExch` | `.swap` | `atom.*.exch.b32`/`.b64` |
//! | `atomicCAS` | `.compare_exchange` | `atom.*.cas.b32`/`.b64` |
//! | `atomicInc`/`atomicDec` | `.fetch_inc`/`.fetch_dec` (`u32` only) | `atom.*.inc.u32`/`.dec.u32` |
//! | `cuda::atomic_ref<T, scope>::load(acquire)` | `.load(Acquire)` | `ld.acquire.gpu.b32` |
//! | `cuda::atomic_ref<T, scope>::store(v, release)` | `.store(v, Release)` | `st.release.gpu.b32` |
//! | a `volatile` read / write | [`load_volatile`] / [`store_volatile`] | `ld.volatile` / `st.volatile` |
//!
//! `core::sync::atomic` must not be used on this target for synchronisation: it drops the
//! ordering (rust-lang/rust#136480) and knows no scopes.

use core::cell::UnsafeCell;
use core::marker::PhantomData;

use crate::arch::{self, LoadSem, RmwSem, Scope, StoreSem};

mod sealed {
    pub trait Sealed {}
}
use sealed::Sealed;

/// The scope of an [`Atomic`]: [`Block`], [`Device`] or [`System`]. Sealed.
pub trait AtomicScope: Sealed {
    /// The PTX scope.
    const SCOPE: Scope;
}

/// Block scope (`.cta`): atomic with respect to the threads of the executing block only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Block;
/// Device scope (`.gpu`): atomic with respect to every thread on the same GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Device;
/// System scope (`.sys`): atomic with respect to every thread of the program, on any GPU
/// or the host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct System;

impl Sealed for Block {}
impl Sealed for Device {}
impl Sealed for System {}
impl AtomicScope for Block {
    const SCOPE: Scope = Scope::Cta;
}
impl AtomicScope for Device {
    const SCOPE: Scope = Scope::Gpu;
}
impl AtomicScope for System {
    const SCOPE: Scope = Scope::Sys;
}

/// `.relaxed`: the access is atomic but orders no other access of the thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Relaxed;
/// `.acquire` (loads and read-modify-writes): no later memory access of this thread is
/// performed before this one. Pairs with a [`Release`] write (or a release fence) whose
/// value this access reads: everything written before that release is then visible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acquire;
/// `.release` (stores, reductions and read-modify-writes): no earlier memory access of
/// this thread is performed after this one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Release;
/// `.acq_rel` (read-modify-writes): both [`Acquire`] and [`Release`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AcqRel;

impl Sealed for Relaxed {}
impl Sealed for Acquire {}
impl Sealed for Release {}
impl Sealed for AcqRel {}

/// An ordering a load accepts: [`Relaxed`] or [`Acquire`]. Sealed.
pub trait LoadOrdering: Sealed {
    /// The PTX semantics.
    const SEM: LoadSem;
}
/// An ordering a store or a reduction accepts: [`Relaxed`] or [`Release`]. Sealed.
pub trait StoreOrdering: Sealed {
    /// The PTX semantics.
    const SEM: StoreSem;
}
/// An ordering a read-modify-write accepts: any of [`Relaxed`], [`Acquire`], [`Release`],
/// [`AcqRel`]. Sealed.
pub trait RmwOrdering: Sealed {
    /// The PTX semantics.
    const SEM: RmwSem;
}

impl LoadOrdering for Relaxed {
    const SEM: LoadSem = LoadSem::Relaxed;
}
impl LoadOrdering for Acquire {
    const SEM: LoadSem = LoadSem::Acquire;
}
impl StoreOrdering for Relaxed {
    const SEM: StoreSem = StoreSem::Relaxed;
}
impl StoreOrdering for Release {
    const SEM: StoreSem = StoreSem::Release;
}
impl RmwOrdering for Relaxed {
    const SEM: RmwSem = RmwSem::Relaxed;
}
impl RmwOrdering for Acquire {
    const SEM: RmwSem = RmwSem::Acquire;
}
impl RmwOrdering for Release {
    const SEM: RmwSem = RmwSem::Release;
}
impl RmwOrdering for AcqRel {
    const SEM: RmwSem = RmwSem::AcqRel;
}

/// A `T` in global or shared memory that is accessed atomically at scope `S`.
///
/// Obtained from a pointer with [`Atomic::from_ptr`]; use the aliases
/// ([`DeviceAtomicU32`], ...). It has the size and alignment of `T`.
#[repr(transparent)]
pub struct Atomic<T, S> {
    value: UnsafeCell<T>,
    scope: PhantomData<S>,
}

// SAFETY: every access through a shared `Atomic` is an atomic instruction, and
// `from_ptr`'s contract makes every thread that uses it fall within the scope.
unsafe impl<T: Send, S> Sync for Atomic<T, S> {}

impl<T, S: AtomicScope> Atomic<T, S> {
    /// Views `*ptr` as an atomic of scope `S` for the lifetime `'a`.
    ///
    /// # Safety
    /// - `ptr` is a generic address of global or shared memory, aligned to
    ///   `size_of::<T>()`, valid for reads and writes for all of `'a`.
    /// - During `'a` the location is accessed only atomically: through an `Atomic` of the
    ///   same size, [`load_volatile`]/[`store_volatile`], or `arch`'s atomic functions;
    ///   never by a plain read or write that may run concurrently with an atomic one (plain
    ///   accesses ordered before or after by a barrier, a kernel boundary or an
    ///   acquire/release pair are fine).
    /// - Scope: every thread that accesses the location during `'a` lies within the scope
    ///   of every atomic access to it. For [`Block`] all of them are threads of one block
    ///   (always so for shared memory); for [`Device`] all run on this GPU (no host or
    ///   peer-GPU access at the same time); [`System`] allows any thread, the host's too, as
    ///   long as those accesses are atomic as well. Accesses outside the scope race, and
    ///   what they read is undefined.
    #[inline(always)]
    pub unsafe fn from_ptr<'a>(ptr: *mut T) -> &'a Self {
        // SAFETY: `Atomic<T, S>` is a `repr(transparent)` `UnsafeCell<T>`, so it has `T`'s
        // layout; validity, alignment and the access rules are the caller's contract.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The address of the value.
    #[inline(always)]
    pub fn as_ptr(&self) -> *mut T {
        self.value.get()
    }
}

/// Converts a value to and from the operand type of the PTX instruction that handles it
/// (`i32` bitwise ops work on `.b32`, `f32` loads on `.b32`, ...).
trait Bits<R>: Copy {
    fn into_bits(value: Self) -> R;
    fn from_bits(raw: R) -> Self;
}

macro_rules! bits {
    ($($t:ty => $r:ty: |$x:ident| $to:expr, |$y:ident| $from:expr;)*) => {$(
        impl Bits<$r> for $t {
            #[inline(always)]
            fn into_bits($x: Self) -> $r {
                $to
            }
            #[inline(always)]
            fn from_bits($y: $r) -> Self {
                $from
            }
        }
    )*};
}

bits! {
    u32 => u32: |x| x, |y| y;
    i32 => i32: |x| x, |y| y;
    i32 => u32: |x| x as u32, |y| y as i32;
    u64 => u64: |x| x, |y| y;
    i64 => i64: |x| x, |y| y;
    i64 => u64: |x| x as u64, |y| y as i64;
    f32 => f32: |x| x, |y| y;
    f32 => u32: |x| x.to_bits(), |y| f32::from_bits(y);
    f64 => f64: |x| x, |y| y;
    f64 => u64: |x| x.to_bits(), |y| f64::from_bits(y);
}

/// Methods every atomic type has: `load`, `store`, `fetch_add`, `add`.
macro_rules! common_methods {
    ($t:ty, $bits:ty, $ld:ident, $st:ident, $add_raw:ty, $atom_add:ident, $red_add:ident) => {
        /// Atomic load (`ld.relaxed` or `ld.acquire`, at this type's scope).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn load<O: LoadOrdering>(&self, _order: O) -> $t {
            // SAFETY: `from_ptr`'s contract: a valid, aligned, atomically accessed address.
            let raw = unsafe { arch::$ld(S::SCOPE, O::SEM, self.as_ptr().cast::<$bits>()) };
            <$t as Bits<$bits>>::from_bits(raw)
        }

        /// Atomic store (`st.relaxed` or `st.release`).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn store<O: StoreOrdering>(&self, value: $t, _order: O) {
            let raw = <$t as Bits<$bits>>::into_bits(value);
            // SAFETY: as for `load`.
            unsafe { arch::$st(S::SCOPE, O::SEM, self.as_ptr().cast::<$bits>(), raw) }
        }

        /// Adds `value` (wrapping for integers) and returns the previous value (`atom.add`).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn fetch_add<O: RmwOrdering>(&self, value: $t, _order: O) -> $t {
            let raw = <$t as Bits<$add_raw>>::into_bits(value);
            // SAFETY: as for `load`.
            let old = unsafe { arch::$atom_add(S::SCOPE, O::SEM, self.as_ptr().cast::<$add_raw>(), raw) };
            <$t as Bits<$add_raw>>::from_bits(old)
        }

        /// Adds `value`, returning nothing (`red.add`, which need not wait for the old value).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn add<O: StoreOrdering>(&self, value: $t, _order: O) {
            let raw = <$t as Bits<$add_raw>>::into_bits(value);
            // SAFETY: as for `load`.
            unsafe { arch::$red_add(S::SCOPE, O::SEM, self.as_ptr().cast::<$add_raw>(), raw) }
        }
    };
}

/// An atomic read-modify-write method pair: `fetch_<op>` (`atom`) and `<op>` (`red`).
macro_rules! rmw_pair {
    ($t:ty, $raw:ty, $fetch:ident = $atom:ident, $red_name:ident = $red:ident, $what:literal) => {
        #[doc = concat!("Atomically replaces the value with ", $what, ".")]
        ///
        /// Returns the previous value (`atom`).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn $fetch<O: RmwOrdering>(&self, value: $t, _order: O) -> $t {
            let raw = <$t as Bits<$raw>>::into_bits(value);
            // SAFETY: `from_ptr`'s contract: a valid, aligned, atomically accessed address.
            let old = unsafe { arch::$atom(S::SCOPE, O::SEM, self.as_ptr().cast::<$raw>(), raw) };
            <$t as Bits<$raw>>::from_bits(old)
        }

        #[doc = concat!("Atomically replaces the value with ", $what, ".")]
        ///
        /// Returns nothing (`red`, which need not wait for the old value).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn $red_name<O: StoreOrdering>(&self, value: $t, _order: O) {
            let raw = <$t as Bits<$raw>>::into_bits(value);
            // SAFETY: as above.
            unsafe { arch::$red(S::SCOPE, O::SEM, self.as_ptr().cast::<$raw>(), raw) }
        }
    };
}

/// The integer atomics.
macro_rules! int_atomic {
    ($t:ty, $bits:ty, $ld:ident, $st:ident, add: $add_raw:ty, $atom_add:ident, $red_add:ident,
     minmax: $mm_raw:ty, $atom_min:ident, $red_min:ident, $atom_max:ident, $red_max:ident,
     $atom_and:ident, $red_and:ident, $atom_or:ident, $red_or:ident, $atom_xor:ident, $red_xor:ident,
     $atom_exch:ident, $atom_cas:ident) => {
        impl<S: AtomicScope> Atomic<$t, S> {
            common_methods!($t, $bits, $ld, $st, $add_raw, $atom_add, $red_add);
            rmw_pair!($t, $mm_raw, fetch_min = $atom_min, min = $red_min, "the minimum of it and `value`");
            rmw_pair!($t, $mm_raw, fetch_max = $atom_max, max = $red_max, "the maximum of it and `value`");
            rmw_pair!($t, $bits, fetch_and = $atom_and, and = $red_and, "its bitwise AND with `value`");
            rmw_pair!($t, $bits, fetch_or = $atom_or, or = $red_or, "its bitwise OR with `value`");
            rmw_pair!($t, $bits, fetch_xor = $atom_xor, xor = $red_xor, "its bitwise XOR with `value`");

            /// Atomically stores `value` and returns the previous value (`atom.exch`).
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub fn swap<O: RmwOrdering>(&self, value: $t, _order: O) -> $t {
                let raw = <$t as Bits<$bits>>::into_bits(value);
                // SAFETY: `from_ptr`'s contract: a valid, aligned, atomically accessed address.
                let old = unsafe { arch::$atom_exch(S::SCOPE, O::SEM, self.as_ptr().cast::<$bits>(), raw) };
                <$t as Bits<$bits>>::from_bits(old)
            }

            /// Atomically stores `new` if the value equals `current` (`atom.cas`). Returns
            /// `Ok(previous)` when it stored, `Err(previous)` otherwise. PTX applies `order` whether
            /// or not it stores.
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub fn compare_exchange<O: RmwOrdering>(
                &self,
                current: $t,
                new: $t,
                _order: O,
            ) -> Result<$t, $t> {
                let expected = <$t as Bits<$bits>>::into_bits(current);
                let new = <$t as Bits<$bits>>::into_bits(new);
                // SAFETY: as above.
                let old = unsafe {
                    arch::$atom_cas(S::SCOPE, O::SEM, self.as_ptr().cast::<$bits>(), expected, new)
                };
                if old == expected {
                    Ok(<$t as Bits<$bits>>::from_bits(old))
                } else {
                    Err(<$t as Bits<$bits>>::from_bits(old))
                }
            }
        }
    };
}

int_atomic!(u32, u32, ld_b32, st_b32, add: u32, atom_add_u32, red_add_u32,
    minmax: u32, atom_min_u32, red_min_u32, atom_max_u32, red_max_u32,
    atom_and_b32, red_and_b32, atom_or_b32, red_or_b32, atom_xor_b32, red_xor_b32, atom_exch_b32, atom_cas_b32);
int_atomic!(i32, u32, ld_b32, st_b32, add: i32, atom_add_s32, red_add_s32,
    minmax: i32, atom_min_s32, red_min_s32, atom_max_s32, red_max_s32,
    atom_and_b32, red_and_b32, atom_or_b32, red_or_b32, atom_xor_b32, red_xor_b32, atom_exch_b32, atom_cas_b32);
int_atomic!(u64, u64, ld_b64, st_b64, add: u64, atom_add_u64, red_add_u64,
    minmax: u64, atom_min_u64, red_min_u64, atom_max_u64, red_max_u64,
    atom_and_b64, red_and_b64, atom_or_b64, red_or_b64, atom_xor_b64, red_xor_b64, atom_exch_b64, atom_cas_b64);
int_atomic!(i64, u64, ld_b64, st_b64, add: u64, atom_add_u64, red_add_u64,
    minmax: i64, atom_min_s64, red_min_s64, atom_max_s64, red_max_s64,
    atom_and_b64, red_and_b64, atom_or_b64, red_or_b64, atom_xor_b64, red_xor_b64, atom_exch_b64, atom_cas_b64);

impl<S: AtomicScope> Atomic<u32, S> {
    /// Atomically increments the value, wrapping to 0 once it reaches `limit`
    /// (`if v >= limit { 0 } else { v + 1 }`), and returns the previous value
    /// (`atom.inc.u32`; CUDA's `atomicInc`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_inc<O: RmwOrdering>(&self, limit: u32, _order: O) -> u32 {
        // SAFETY: `from_ptr`'s contract: a valid, aligned, atomically accessed address.
        unsafe { arch::atom_inc_u32(S::SCOPE, O::SEM, self.as_ptr(), limit) }
    }

    /// As [`fetch_inc`](Self::fetch_inc), returning nothing (`red.inc.u32`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn inc<O: StoreOrdering>(&self, limit: u32, _order: O) {
        // SAFETY: as above.
        unsafe { arch::red_inc_u32(S::SCOPE, O::SEM, self.as_ptr(), limit) }
    }

    /// Atomically decrements the value, wrapping to `limit` at 0 or above `limit`
    /// (`if v == 0 || v > limit { limit } else { v - 1 }`), and returns the previous value
    /// (`atom.dec.u32`; CUDA's `atomicDec`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn fetch_dec<O: RmwOrdering>(&self, limit: u32, _order: O) -> u32 {
        // SAFETY: as above.
        unsafe { arch::atom_dec_u32(S::SCOPE, O::SEM, self.as_ptr(), limit) }
    }

    /// As [`fetch_dec`](Self::fetch_dec), returning nothing (`red.dec.u32`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn dec<O: StoreOrdering>(&self, limit: u32, _order: O) {
        // SAFETY: as above.
        unsafe { arch::red_dec_u32(S::SCOPE, O::SEM, self.as_ptr(), limit) }
    }
}

impl Atomic<u32, Block> {
    /// Adds `value` (wrapping), returning nothing, to a location in shared memory:
    /// `red.relaxed.cta.shared.add.u32`, the shared-memory form of `add(value, Relaxed)`,
    /// which never tests the generic address's window at run time.
    ///
    /// # Safety
    /// The atomic lies in the executing block's shared memory (made by
    /// [`Atomic::from_ptr`] from a shared address, or by `SharedArray::atomic`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn add_shared(&self, value: u32) {
        // SAFETY: `from_ptr`'s contract (a valid, aligned, atomically accessed address) and
        // the caller's (in this block's shared memory).
        unsafe { arch::red_shared_add_u32(self.as_ptr(), value) }
    }
}

impl<S: AtomicScope> Atomic<f32, S> {
    common_methods!(f32, u32, ld_b32, st_b32, f32, atom_add_f32, red_add_f32);
}

impl<S: AtomicScope> Atomic<f64, S> {
    common_methods!(f64, u64, ld_b64, st_b64, f64, atom_add_f64, red_add_f64);
}

macro_rules! aliases {
    ($($block:ident, $device:ident, $system:ident: $t:ty;)*) => {$(
        #[doc = concat!("A `", stringify!($t), "` atomic at block scope (`.cta`).")]
        pub type $block = Atomic<$t, Block>;
        #[doc = concat!("A `", stringify!($t), "` atomic at device scope (`.gpu`).")]
        pub type $device = Atomic<$t, Device>;
        #[doc = concat!("A `", stringify!($t), "` atomic at system scope (`.sys`).")]
        pub type $system = Atomic<$t, System>;
    )*};
}

aliases! {
    BlockAtomicU32, DeviceAtomicU32, SystemAtomicU32: u32;
    BlockAtomicI32, DeviceAtomicI32, SystemAtomicI32: i32;
    BlockAtomicU64, DeviceAtomicU64, SystemAtomicU64: u64;
    BlockAtomicI64, DeviceAtomicI64, SystemAtomicI64: i64;
    BlockAtomicF32, DeviceAtomicF32, SystemAtomicF32: f32;
    BlockAtomicF64, DeviceAtomicF64, SystemAtomicF64: f64;
}

/// A 32- or 64-bit value that [`load_volatile`] and [`store_volatile`] move in one
/// access: `u32`, `i32`, `f32`, `u64`, `i64`, `f64`. Sealed.
pub trait Volatile: Copy + Sealed {
    /// See [`load_volatile`].
    ///
    /// # Safety
    /// As for [`load_volatile`].
    unsafe fn load(ptr: *const Self) -> Self;
    /// See [`store_volatile`].
    ///
    /// # Safety
    /// As for [`store_volatile`].
    unsafe fn store(ptr: *mut Self, value: Self);
}

macro_rules! volatile {
    ($($t:ty: $bits:ty, $ld:ident, $st:ident;)*) => {$(
        impl Sealed for $t {}
        impl Volatile for $t {
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn load(ptr: *const Self) -> Self {
                // SAFETY: forwarded from `load_volatile`'s caller.
                <$t as Bits<$bits>>::from_bits(unsafe { arch::$ld(ptr.cast::<$bits>()) })
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn store(ptr: *mut Self, value: Self) {
                // SAFETY: forwarded from `store_volatile`'s caller.
                unsafe { arch::$st(ptr.cast::<$bits>(), <$t as Bits<$bits>>::into_bits(value)) }
            }
        }
    )*};
}

volatile! {
    u32: u32, ld_volatile_b32, st_volatile_b32;
    i32: u32, ld_volatile_b32, st_volatile_b32;
    f32: u32, ld_volatile_b32, st_volatile_b32;
    u64: u64, ld_volatile_b64, st_volatile_b64;
    i64: u64, ld_volatile_b64, st_volatile_b64;
    f64: u64, ld_volatile_b64, st_volatile_b64;
}

/// A volatile load (`ld.volatile`, from `core::ptr::read_volatile`): always performed,
/// never merged with another, and with the memory semantics of `ld.relaxed.sys`, so it
/// can poll a flag that another block, GPU or the host writes. It orders nothing else:
/// follow it with a [`fence`](crate::fence) (or use [`Atomic::load`] with [`Acquire`])
/// before reading the data the flag guards.
///
/// # Safety
/// `ptr` is a generic address of global or shared memory, aligned to `size_of::<T>()` and
/// valid for reads; every access to it that may run concurrently is atomic or volatile,
/// of the same size.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_volatile<T: Volatile>(ptr: *const T) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::load(ptr) }
}

/// A volatile store (`st.volatile`, from `core::ptr::write_volatile`): the memory
/// semantics of `st.relaxed.sys`. Precede it with a [`fence`](crate::fence) (or use
/// [`Atomic::store`] with [`Release`]) to publish data written before it.
///
/// # Safety
/// As for [`load_volatile`], with the address valid for writes.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn store_volatile<T: Volatile>(ptr: *mut T, value: T) {
    // SAFETY: forwarded from the caller.
    unsafe { T::store(ptr, value) }
}
