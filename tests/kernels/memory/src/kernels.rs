//! The kernels.

use warpsafe::atomic::{
    load_volatile, store_volatile, AcqRel, Acquire, Atomic, AtomicScope, Block, Device, Relaxed, Release,
    System,
};
use warpsafe::{barrier, fence, thread};

/// `&Atomic` over `base[k]`.
///
/// # Safety
/// As for [`Atomic::from_ptr`] on `base.add(k)`.
#[inline(always)]
unsafe fn at<'a, T, S: AtomicScope>(base: *mut T, k: usize) -> &'a Atomic<T, S> {
    // SAFETY: forwarded from the caller.
    unsafe { Atomic::from_ptr(base.add(k)) }
}

// ---------------------------------------------------------------------------------------
// PTX probes: every method with every ordering it accepts, in the order the PTX test
// expects them.

macro_rules! probe_int {
    ($t:ty, $($name:ident: $scope:ty),*) => {$(
        warpsafe::kernel! {
            /// Every integer atomic method on `*p`, results to `out[0..]`.
            ///
            /// # Safety
            /// `p` is one aligned element, `out` holds 64; one thread.
            pub unsafe fn $name(p: *mut $t, v: $t, out: *mut $t) {
                // SAFETY: the caller passes valid pointers and launches one thread.
                let a = unsafe { Atomic::<$t, $scope>::from_ptr(p) };
                let results = [
                    a.load(Relaxed), a.load(Acquire),
                    { a.store(v, Relaxed); a.store(v, Release); v },
                    a.fetch_add(v, Relaxed), a.fetch_add(v, Acquire), a.fetch_add(v, Release), a.fetch_add(v, AcqRel),
                    { a.add(v, Relaxed); a.add(v, Release); v },
                    a.fetch_min(v, Relaxed), a.fetch_min(v, Acquire), a.fetch_min(v, Release), a.fetch_min(v, AcqRel),
                    { a.min(v, Relaxed); a.min(v, Release); v },
                    a.fetch_max(v, Relaxed), a.fetch_max(v, Acquire), a.fetch_max(v, Release), a.fetch_max(v, AcqRel),
                    { a.max(v, Relaxed); a.max(v, Release); v },
                    a.fetch_and(v, Relaxed), a.fetch_and(v, Acquire), a.fetch_and(v, Release), a.fetch_and(v, AcqRel),
                    { a.and(v, Relaxed); a.and(v, Release); v },
                    a.fetch_or(v, Relaxed), a.fetch_or(v, Acquire), a.fetch_or(v, Release), a.fetch_or(v, AcqRel),
                    { a.or(v, Relaxed); a.or(v, Release); v },
                    a.fetch_xor(v, Relaxed), a.fetch_xor(v, Acquire), a.fetch_xor(v, Release), a.fetch_xor(v, AcqRel),
                    { a.xor(v, Relaxed); a.xor(v, Release); v },
                    a.swap(v, Relaxed), a.swap(v, Acquire), a.swap(v, Release), a.swap(v, AcqRel),
                    a.compare_exchange(v, 3, Relaxed).unwrap_or(0),
                    a.compare_exchange(v, 3, Acquire).unwrap_or(1),
                    a.compare_exchange(v, 3, Release).unwrap_or(2),
                    a.compare_exchange(v, 3, AcqRel).unwrap_or(3),
                ];
                for (k, r) in results.into_iter().enumerate() {
                    // SAFETY: k < 64, the length of `out`.
                    unsafe { *out.add(k) = r };
                }
            }
        }
    )*};
}

probe_int!(u32, mem_probe_u32_block: Block, mem_probe_u32_device: Device, mem_probe_u32_system: System);
probe_int!(i32, mem_probe_i32_block: Block, mem_probe_i32_device: Device, mem_probe_i32_system: System);
probe_int!(u64, mem_probe_u64_block: Block, mem_probe_u64_device: Device, mem_probe_u64_system: System);
probe_int!(i64, mem_probe_i64_block: Block, mem_probe_i64_device: Device, mem_probe_i64_system: System);

macro_rules! probe_u32_wrapping {
    ($($name:ident: $scope:ty),*) => {$(
        warpsafe::kernel! {
            /// `fetch_inc`/`inc`/`fetch_dec`/`dec` on `*p` with wrap limit `limit`.
            ///
            /// # Safety
            /// `p` is one aligned element, `out` holds 8; one thread.
            pub unsafe fn $name(p: *mut u32, limit: u32, out: *mut u32) {
                // SAFETY: the caller passes valid pointers and launches one thread.
                let a = unsafe { Atomic::<u32, $scope>::from_ptr(p) };
                let results = [
                    a.fetch_inc(limit, Relaxed), a.fetch_inc(limit, Acquire),
                    a.fetch_inc(limit, Release), a.fetch_inc(limit, AcqRel),
                    { a.inc(limit, Relaxed); a.inc(limit, Release); limit },
                    a.fetch_dec(limit, Relaxed), a.fetch_dec(limit, Acquire),
                    a.fetch_dec(limit, Release), a.fetch_dec(limit, AcqRel),
                    { a.dec(limit, Relaxed); a.dec(limit, Release); limit },
                ];
                for (k, r) in results.into_iter().enumerate() {
                    // SAFETY: k < 10, within `out`.
                    unsafe { *out.add(k) = r };
                }
            }
        }
    )*};
}

probe_u32_wrapping!(
    mem_probe_u32_wrapping_block: Block,
    mem_probe_u32_wrapping_device: Device,
    mem_probe_u32_wrapping_system: System
);

macro_rules! probe_float {
    ($t:ty, $($name:ident: $scope:ty),*) => {$(
        warpsafe::kernel! {
            /// Every float atomic method on `*p`.
            ///
            /// # Safety
            /// `p` is one aligned element, `out` holds 8; one thread.
            pub unsafe fn $name(p: *mut $t, v: $t, out: *mut $t) {
                // SAFETY: the caller passes valid pointers and launches one thread.
                let a = unsafe { Atomic::<$t, $scope>::from_ptr(p) };
                let results = [
                    a.load(Relaxed), a.load(Acquire),
                    { a.store(v, Relaxed); a.store(v, Release); v },
                    a.fetch_add(v, Relaxed), a.fetch_add(v, Acquire), a.fetch_add(v, Release), a.fetch_add(v, AcqRel),
                    { a.add(v, Relaxed); a.add(v, Release); v },
                ];
                for (k, r) in results.into_iter().enumerate() {
                    // SAFETY: k < 8, within `out`.
                    unsafe { *out.add(k) = r };
                }
            }
        }
    )*};
}

probe_float!(f32, mem_probe_f32_block: Block, mem_probe_f32_device: Device, mem_probe_f32_system: System);
probe_float!(f64, mem_probe_f64_block: Block, mem_probe_f64_device: Device, mem_probe_f64_system: System);

warpsafe::kernel! {
    /// The six fences, in the order block, device, system, block_sc, device_sc, system_sc.
    ///
    /// # Safety
    /// None: the kernel touches no memory.
    pub unsafe fn mem_probe_fences() {
        fence::block();
        fence::device();
        fence::system();
        fence::block_sc();
        fence::device_sc();
        fence::system_sc();
    }
}

warpsafe::kernel! {
    /// Volatile loads of `u32, i32, f32, u64, i64, f64` from `src`, stored volatile to `dst`.
    ///
    /// # Safety
    /// `src` and `dst` each hold 6 eight-byte slots; one thread.
    pub unsafe fn mem_probe_volatile(src: *mut u64, dst: *mut u64) {
        // SAFETY: slot k of each buffer is 8 bytes, aligned for every type used in it.
        unsafe {
            store_volatile(dst.cast::<u32>(), load_volatile(src.cast::<u32>()));
            store_volatile(dst.add(1).cast::<i32>(), load_volatile(src.add(1).cast::<i32>()));
            store_volatile(dst.add(2).cast::<f32>(), load_volatile(src.add(2).cast::<f32>()));
            store_volatile(dst.add(3), load_volatile(src.add(3)));
            store_volatile(dst.add(4).cast::<i64>(), load_volatile(src.add(4).cast::<i64>()));
            store_volatile(dst.add(5).cast::<f64>(), load_volatile(src.add(5).cast::<f64>()));
        }
    }
}

warpsafe::kernel! {
    /// `barrier::sync`, `sync_named(1, 64)`, `sync_count`, `sync_and`, `sync_or`, in that
    /// order; results to `out[3 * thread ..]`.
    ///
    /// # Safety
    /// One block of exactly 64 threads; `out` holds 192 elements.
    pub unsafe fn mem_probe_barriers(out: *mut u32) {
        let t = thread::thread_idx().x;
        // SAFETY: all 64 threads of the single block run every barrier below, unconditionally.
        let results = unsafe {
            barrier::sync();
            barrier::sync_named(1, 64);
            [
                barrier::sync_count(t.is_multiple_of(3)),
                barrier::sync_and(t < 60) as u32,
                barrier::sync_or(t == 5) as u32,
            ]
        };
        for (k, r) in results.into_iter().enumerate() {
            // SAFETY: 3 * t + k < 192.
            unsafe { *out.add(3 * t as usize + k) = r };
        }
    }
}

// ---------------------------------------------------------------------------------------
// Message passing between blocks.

/// Data words per channel, each on its own 128-byte line.
const MP_WORDS: usize = 4;
/// Stride, in `u32`s, between any two words the protocol touches (one 128-byte line).
const MP_STRIDE: usize = 32;

/// How a producer publishes round `r` and how a consumer observes the flag.
trait Handoff {
    type Scope: AtomicScope;
    /// Whether a consumer reads its own block's channel (else the next block's).
    const SAME_BLOCK: bool;
    /// Whether the data words are plain (non-atomic) loads and stores, as in ordinary
    /// code, rather than relaxed atomics. Plain loads may hit a stale line in the
    /// consumer's L1 cache: only an acquire (fence or load) invalidates it.
    const PLAIN_DATA: bool = false;
    fn publish(flag: &Atomic<u32, Self::Scope>, round: u32);
    /// Reads the flag; everything read after this returns must be ordered after it.
    fn observe(flag: &Atomic<u32, Self::Scope>) -> u32;
}

/// `st.release.gpu` / `ld.acquire.gpu`.
struct ReleaseAcquire;
impl Handoff for ReleaseAcquire {
    type Scope = Device;
    const SAME_BLOCK: bool = false;
    fn publish(flag: &Atomic<u32, Device>, round: u32) {
        flag.store(round, Release);
    }
    fn observe(flag: &Atomic<u32, Device>) -> u32 {
        flag.load(Acquire)
    }
}

/// `fence.acq_rel.gpu` + `st.volatile` / `ld.volatile` + `fence.acq_rel.gpu`.
struct FenceVolatile;
impl Handoff for FenceVolatile {
    type Scope = Device;
    const SAME_BLOCK: bool = false;
    fn publish(flag: &Atomic<u32, Device>, round: u32) {
        fence::device();
        // SAFETY: the flag is only ever accessed atomically or volatile.
        unsafe { store_volatile(flag.as_ptr(), round) };
    }
    fn observe(flag: &Atomic<u32, Device>) -> u32 {
        // SAFETY: as above.
        let seen = unsafe { load_volatile(flag.as_ptr()) };
        fence::device();
        seen
    }
}

/// `fence.sc.sys` + `st.relaxed.sys` / `ld.relaxed.sys` + `fence.sc.sys`.
struct FenceScSystem;
impl Handoff for FenceScSystem {
    type Scope = System;
    const SAME_BLOCK: bool = false;
    fn publish(flag: &Atomic<u32, System>, round: u32) {
        fence::system_sc();
        flag.store(round, Relaxed);
    }
    fn observe(flag: &Atomic<u32, System>) -> u32 {
        let seen = flag.load(Relaxed);
        fence::system_sc();
        seen
    }
}

/// `st.release.cta` / `ld.acquire.cta`, producer and consumer warps of the same block.
struct BlockReleaseAcquire;
impl Handoff for BlockReleaseAcquire {
    type Scope = Block;
    const SAME_BLOCK: bool = true;
    fn publish(flag: &Atomic<u32, Block>, round: u32) {
        flag.store(round, Release);
    }
    fn observe(flag: &Atomic<u32, Block>) -> u32 {
        flag.load(Acquire)
    }
}

/// `st.relaxed.gpu` / `ld.relaxed.gpu` and no fence: allowed to show stale data.
struct Unfenced;
impl Handoff for Unfenced {
    type Scope = Device;
    const SAME_BLOCK: bool = false;
    fn publish(flag: &Atomic<u32, Device>, round: u32) {
        flag.store(round, Relaxed);
    }
    fn observe(flag: &Atomic<u32, Device>) -> u32 {
        flag.load(Relaxed)
    }
}

/// Plain data words, `fence.acq_rel.gpu` before publishing and after observing a relaxed
/// flag: the fence-fence pattern that orders ordinary memory accesses.
struct PlainDataFenced;
impl Handoff for PlainDataFenced {
    type Scope = Device;
    const SAME_BLOCK: bool = false;
    const PLAIN_DATA: bool = true;
    fn publish(flag: &Atomic<u32, Device>, round: u32) {
        fence::device();
        flag.store(round, Relaxed);
    }
    fn observe(flag: &Atomic<u32, Device>) -> u32 {
        let seen = flag.load(Relaxed);
        fence::device();
        seen
    }
}

/// The same with both fences removed: the consumer's plain loads may be served from its
/// L1 cache with data older than the flag it saw.
struct PlainDataUnfenced;
impl Handoff for PlainDataUnfenced {
    type Scope = Device;
    const SAME_BLOCK: bool = false;
    const PLAIN_DATA: bool = true;
    fn publish(flag: &Atomic<u32, Device>, round: u32) {
        flag.store(round, Relaxed);
    }
    fn observe(flag: &Atomic<u32, Device>) -> u32 {
        flag.load(Relaxed)
    }
}

/// Warp 0 of each block produces on its 32 channels (`block * 32 + lane`): for each
/// round `r` in `1..=rounds` it writes `r` to the channel's data words, then publishes
/// flag = `r`. Warp 1 consumes the channels of the next block (or of its own): whenever
/// it observes a new flag value `f`, every data word must read `>= f` (a smaller value
/// is a write it should have seen but did not: a violation). A consumer gives up after
/// `spin_limit` polls that saw nothing new (a timeout), so it ends even when its producer
/// never runs. Writes `[violations, timed out (0/1), last flag seen]` to
/// `out[3 * (block * 32 + lane) ..]`.
///
/// # Safety
/// Blocks of 64 threads; `flags` holds `32 * MP_STRIDE * blocks` and `data`
/// `MP_WORDS * 32 * MP_STRIDE * blocks` zeroed `u32`s; `out` `96 * blocks`.
#[inline(always)]
unsafe fn message_passing<H: Handoff>(
    flags: *mut u32,
    data: *mut u32,
    out: *mut u32,
    rounds: u32,
    spin_limit: u32,
) {
    let blocks = thread::grid_dim().x as usize;
    let block = thread::block_idx().x as usize;
    let lane = thread::lane_id() as usize;
    let channels = 32 * blocks;
    let word = |channel: usize, k: usize| (k * channels + channel) * MP_STRIDE;
    match thread::warp_idx() {
        0 => {
            let channel = block * 32 + lane;
            // SAFETY: the channel's flag and words are within the buffers, and are only
            // accessed atomically, by threads of this grid (and of this block for the
            // block-scope protocol).
            let flag = unsafe { at::<u32, H::Scope>(flags, channel * MP_STRIDE) };
            for round in 1..=rounds {
                for k in 0..MP_WORDS {
                    if H::PLAIN_DATA {
                        // SAFETY: in bounds; only this producer writes the word.
                        unsafe { data.add(word(channel, k)).write(round) };
                    } else {
                        // SAFETY: as above.
                        unsafe { at::<u32, H::Scope>(data, word(channel, k)) }.store(round, Relaxed);
                    }
                }
                H::publish(flag, round);
            }
        }
        1 => {
            let source = if H::SAME_BLOCK { block } else { (block + 1) % blocks };
            let channel = source * 32 + lane;
            // SAFETY: as for the producer.
            let flag = unsafe { at::<u32, H::Scope>(flags, channel * MP_STRIDE) };
            let (mut seen, mut violations, mut idle, mut timed_out) = (0u32, 0u32, 0u32, 0u32);
            while seen < rounds {
                let now = H::observe(flag);
                if now > seen {
                    for k in 0..MP_WORDS {
                        let value = if H::PLAIN_DATA {
                            // SAFETY: in bounds; a racing plain read of a u32 (the
                            // producer writes it), which is what this kernel measures.
                            unsafe { data.add(word(channel, k)).read() }
                        } else {
                            // SAFETY: as above.
                            unsafe { at::<u32, H::Scope>(data, word(channel, k)) }.load(Relaxed)
                        };
                        violations += u32::from(value < now);
                    }
                    seen = now;
                } else {
                    idle += 1;
                    if idle >= spin_limit {
                        timed_out = 1;
                        break;
                    }
                }
            }
            let slot = 3 * (block * 32 + lane);
            // SAFETY: slot + 2 < 96 * blocks; each consumer writes its own three.
            unsafe {
                *out.add(slot) = violations;
                *out.add(slot + 1) = timed_out;
                *out.add(slot + 2) = seen;
            }
        }
        _ => {}
    }
}

macro_rules! mp_kernels {
    ($($name:ident: $handoff:ty;)*) => {$(
        warpsafe::kernel! {
            /// Message passing with this hand-off protocol; see `message_passing`.
            ///
            /// # Safety
            /// See `message_passing`.
            pub unsafe fn $name(flags: *mut u32, data: *mut u32, out: *mut u32, rounds: u32, spin_limit: u32) {
                // SAFETY: forwarded from the caller.
                unsafe { message_passing::<$handoff>(flags, data, out, rounds, spin_limit) }
            }
        }
    )*};
}

mp_kernels! {
    mem_mp_release_acquire: ReleaseAcquire;
    mem_mp_fence_volatile: FenceVolatile;
    mem_mp_fence_sc_system: FenceScSystem;
    mem_mp_block_release_acquire: BlockReleaseAcquire;
    mem_mp_unfenced: Unfenced;
    mem_mp_plain_data_fenced: PlainDataFenced;
    mem_mp_plain_data_unfenced: PlainDataUnfenced;
}

// ---------------------------------------------------------------------------------------
// Atomic counters.

/// Counters of the integer test: 0-1 add, 2-3 min, 4-5 max, 6-7 and, 8-9 or, 10-11 xor
/// (each `fetch_*` then the `red` form), 12 swap, 13 compare-exchange increment loop;
/// `u32` adds 14-15 inc and 16-17 dec with limit [`WRAP_LIMIT`].
const INT_COUNTERS: usize = 14;
/// Counters of the `u32` test.
const U32_COUNTERS: usize = 18;
/// Counters of the float test: 0 `fetch_add`, 1 `add`.
const FLOAT_COUNTERS: usize = 2;
/// The wrap limit of the inc/dec counters.
const WRAP_LIMIT: u32 = 37;

macro_rules! int_ops {
    ($($name:ident: $t:ty;)*) => {$(
        /// Applies every operation with this thread's `v` to `base[0..14]`; returns the
        /// value the swap replaced.
        ///
        /// # Safety
        /// `base` holds the counters, accessed only atomically, within `S`.
        #[inline(always)]
        unsafe fn $name<S: AtomicScope>(base: *mut $t, v: $t) -> $t {
            let one: $t = 1;
            let bit = one << (v.count_ones().wrapping_mul(7) % <$t>::BITS);
            // SAFETY: forwarded from the caller, for every index below 14.
            unsafe {
                at::<$t, S>(base, 0).fetch_add(v, Relaxed);
                at::<$t, S>(base, 1).add(v, Release);
                at::<$t, S>(base, 2).fetch_min(v, Acquire);
                at::<$t, S>(base, 3).min(v, Relaxed);
                at::<$t, S>(base, 4).fetch_max(v, AcqRel);
                at::<$t, S>(base, 5).max(v, Release);
                at::<$t, S>(base, 6).fetch_and(!bit, Relaxed);
                at::<$t, S>(base, 7).and(!bit, Release);
                at::<$t, S>(base, 8).fetch_or(bit, Acquire);
                at::<$t, S>(base, 9).or(bit, Relaxed);
                at::<$t, S>(base, 10).fetch_xor(v, AcqRel);
                at::<$t, S>(base, 11).xor(v, Relaxed);
                let counter = at::<$t, S>(base, 13);
                let mut current = counter.load(Relaxed);
                while let Err(now) = counter.compare_exchange(current, current.wrapping_add(1), AcqRel) {
                    current = now;
                }
                at::<$t, S>(base, 12).swap(v, AcqRel)
            }
        }
    )*};
}

int_ops! {
    ops_u32: u32;
    ops_i32: i32;
    ops_u64: u64;
    ops_i64: i64;
}

/// `ops_u32` plus inc/dec on `base[14..18]`.
///
/// # Safety
/// As for `ops_u32`, with 18 counters.
#[inline(always)]
unsafe fn ops_u32_wrapping<S: AtomicScope>(base: *mut u32, v: u32) -> u32 {
    // SAFETY: forwarded from the caller.
    unsafe {
        at::<u32, S>(base, 14).fetch_inc(WRAP_LIMIT, Relaxed);
        at::<u32, S>(base, 15).inc(WRAP_LIMIT, Release);
        at::<u32, S>(base, 16).fetch_dec(WRAP_LIMIT, AcqRel);
        at::<u32, S>(base, 17).dec(WRAP_LIMIT, Relaxed);
        ops_u32::<S>(base, v)
    }
}

macro_rules! float_ops {
    ($($name:ident: $t:ty;)*) => {$(
        /// `fetch_add(v)` on `base[0]`, `add(v)` on `base[1]`; returns `fetch_add`'s old value.
        ///
        /// # Safety
        /// As for `ops_u32`, with 2 counters.
        #[inline(always)]
        unsafe fn $name<S: AtomicScope>(base: *mut $t, v: $t) -> $t {
            // SAFETY: forwarded from the caller.
            unsafe {
                at::<$t, S>(base, 1).add(v, Release);
                at::<$t, S>(base, 0).fetch_add(v, AcqRel)
            }
        }
    )*};
}

float_ops! {
    ops_f32: f32;
    ops_f64: f64;
}

/// Kernels `(vals, counters, olds)` for one type: thread `gid` applies `vals[gid]` to its
/// group's counters and writes what its swap (or float `fetch_add`) returned to
/// `olds[gid]`. One group per block at block scope (`counters[block * N ..]`; `_block` in
/// shared memory, copied in and out by thread 0 around `barrier::sync`; `_block_global`
/// directly in global memory), one group for the grid at device and system scope.
macro_rules! counter_kernels {
    ($t:ty, $n:expr, $ops:ident, $block:ident, $block_global:ident, $device:ident, $system:ident) => {
        warpsafe::kernel! {
            /// Block-scope counters in shared memory.
            ///
            /// # Safety
            /// 1-D launch; `vals` and `olds` hold one element per thread, `counters` `N` per
            /// block.
            pub unsafe fn $block(vals: *const $t, counters: *mut $t, olds: *mut $t) {
                let gid = thread::global_index_x() as usize;
                let group = thread::block_idx().x as usize * $n;
                let first = thread::thread_idx().x == 0;
                warpsafe::shared! {
                    static COUNTERS: [$t; $n];
                }
                let shared = COUNTERS.slice().as_mut_ptr();
                // SAFETY: the buffers have the sizes above; the shared counters are accessed
                // plainly only by thread 0, separated from the atomics by block barriers that
                // every thread reaches unconditionally.
                unsafe {
                    if first {
                        for k in 0..$n {
                            *shared.add(k) = *counters.add(group + k);
                        }
                    }
                    barrier::sync();
                    *olds.add(gid) = $ops::<Block>(shared, *vals.add(gid));
                    barrier::sync();
                    if first {
                        for k in 0..$n {
                            *counters.add(group + k) = *shared.add(k);
                        }
                    }
                }
            }
        }

        warpsafe::kernel! {
            /// Block-scope counters in per-block global memory.
            ///
            /// # Safety
            /// As for the shared-memory kernel.
            pub unsafe fn $block_global(vals: *const $t, counters: *mut $t, olds: *mut $t) {
                let gid = thread::global_index_x() as usize;
                let group = thread::block_idx().x as usize * $n;
                // SAFETY: only this block's threads touch counters[group..group + N].
                unsafe { *olds.add(gid) = $ops::<Block>(counters.add(group), *vals.add(gid)) };
            }
        }

        warpsafe::kernel! {
            /// Device-scope counters shared by the grid.
            ///
            /// # Safety
            /// 1-D launch; `vals` and `olds` hold one element per thread, `counters` `N`.
            pub unsafe fn $device(vals: *const $t, counters: *mut $t, olds: *mut $t) {
                let gid = thread::global_index_x() as usize;
                // SAFETY: all accesses are device-scope atomics from this grid.
                unsafe { *olds.add(gid) = $ops::<Device>(counters, *vals.add(gid)) };
            }
        }

        warpsafe::kernel! {
            /// System-scope counters shared by the grid.
            ///
            /// # Safety
            /// As for the device-scope kernel.
            pub unsafe fn $system(vals: *const $t, counters: *mut $t, olds: *mut $t) {
                let gid = thread::global_index_x() as usize;
                // SAFETY: all accesses are system-scope atomics.
                unsafe { *olds.add(gid) = $ops::<System>(counters, *vals.add(gid)) };
            }
        }
    };
}

counter_kernels!(
    u32,
    U32_COUNTERS,
    ops_u32_wrapping,
    mem_counters_u32_block,
    mem_counters_u32_block_global,
    mem_counters_u32_device,
    mem_counters_u32_system
);
counter_kernels!(
    i32,
    INT_COUNTERS,
    ops_i32,
    mem_counters_i32_block,
    mem_counters_i32_block_global,
    mem_counters_i32_device,
    mem_counters_i32_system
);
counter_kernels!(
    u64,
    INT_COUNTERS,
    ops_u64,
    mem_counters_u64_block,
    mem_counters_u64_block_global,
    mem_counters_u64_device,
    mem_counters_u64_system
);
counter_kernels!(
    i64,
    INT_COUNTERS,
    ops_i64,
    mem_counters_i64_block,
    mem_counters_i64_block_global,
    mem_counters_i64_device,
    mem_counters_i64_system
);
counter_kernels!(
    f32,
    FLOAT_COUNTERS,
    ops_f32,
    mem_counters_f32_block,
    mem_counters_f32_block_global,
    mem_counters_f32_device,
    mem_counters_f32_system
);
counter_kernels!(
    f64,
    FLOAT_COUNTERS,
    ops_f64,
    mem_counters_f64_block,
    mem_counters_f64_block_global,
    mem_counters_f64_device,
    mem_counters_f64_system
);

// ---------------------------------------------------------------------------------------
// Barriers.

/// The largest block the barrier kernels accept.
const MAX_BLOCK: usize = 1024;

warpsafe::kernel! {
    /// For each round `r < rounds`, with `p = preds[r * total + gid] != 0`, writes
    /// `[sync_count(p), sync_and(p), sync_or(p)]` to `out[3 * (r * total + gid) ..]`.
    ///
    /// # Safety
    /// 1-D launch; `preds` holds `rounds * total` and `out` `3 * rounds * total` elements,
    /// `total` being the grid's thread count.
    pub unsafe fn mem_barrier_reductions(preds: *const u32, out: *mut u32, rounds: u32) {
        let gid = thread::global_index_x() as usize;
        let total = thread::grid_threads_x() as usize;
        for r in 0..rounds as usize {
            let i = r * total + gid;
            // SAFETY: i < rounds * total; every thread of the block runs every round, so all
            // reach each barrier (rounds is uniform).
            unsafe {
                let p = *preds.add(i) != 0;
                let count = barrier::sync_count(p);
                let all = barrier::sync_and(p);
                let any = barrier::sync_or(p);
                *out.add(3 * i) = count;
                *out.add(3 * i + 1) = all as u32;
                *out.add(3 * i + 2) = any as u32;
            }
        }
    }
}

/// `exchange_value(t, r)` of the barrier tests: what thread `t` writes in round `r`.
#[inline(always)]
fn exchange_value(t: u32, r: u32) -> u32 {
    t.wrapping_mul(0x9e37_79b9) ^ r.wrapping_mul(0x85eb_ca6b)
}

warpsafe::kernel! {
    /// Whole-block exchange through shared memory: in round `r` thread `t` writes
    /// `exchange_value(t, r)` to `shared[t]`, `barrier::sync`, reads `shared[(t + r + 1) % n]`,
    /// folds it into `acc = acc * 31 + read`, `barrier::sync`. `out[gid] = acc`.
    ///
    /// # Safety
    /// 1-D launch of blocks of at most 1024 threads; `out` holds one element per thread.
    pub unsafe fn mem_barrier_exchange(out: *mut u32, rounds: u32) {
        warpsafe::shared! {
            static EXCHANGE: [u32; MAX_BLOCK];
        }
        let shared = EXCHANGE.slice().as_mut_ptr();
        let t = thread::thread_idx().x;
        let n = thread::block_dim().x;
        let mut acc = 0u32;
        for r in 0..rounds {
            // SAFETY: t and the index read are below n <= 1024; every thread runs every round
            // and both barriers; the barriers separate the writes from the reads.
            unsafe {
                *shared.add(t as usize) = exchange_value(t, r);
                barrier::sync();
                acc = acc.wrapping_mul(31).wrapping_add(*shared.add(((t + r + 1) % n) as usize));
                barrier::sync();
            }
        }
        // SAFETY: one element per thread.
        unsafe { *out.add(thread::global_index_x() as usize) = acc };
    }
}

warpsafe::kernel! {
    /// Named barriers: the block's full warps form two groups, warps `[0, h)` on barrier 1
    /// and `[h, full)` on barrier 2 (`h = ceil(full / 2)`), each synchronising with
    /// `sync_named(id, 32 * warps)`; the threads of a partial last warp take part in neither
    /// and write `u32::MAX - t`. A group member does the exchange of `mem_barrier_exchange`
    /// within its group (`shared[start + (local + r + 1) % len]`).
    ///
    /// # Safety
    /// As for `mem_barrier_exchange`.
    pub unsafe fn mem_barrier_named(out: *mut u32, rounds: u32) {
        warpsafe::shared! {
            static NAMED: [u32; MAX_BLOCK];
        }
        let shared = NAMED.slice().as_mut_ptr();
        let t = thread::thread_idx().x;
        let gid = thread::global_index_x() as usize;
        let full = thread::block_dim().x / 32;
        let warp = t / 32;
        let half = full.div_ceil(2);
        if warp >= full {
            // SAFETY: one element per thread.
            unsafe { *out.add(gid) = u32::MAX - t };
            return;
        }
        let (id, start, len) = if warp < half { (1, 0, 32 * half) } else { (2, 32 * half, 32 * (full - half)) };
        let local = t - start;
        let mut acc = 0u32;
        for r in 0..rounds {
            // SAFETY: exactly the `len` threads of whole warps of this group reach each of
            // the group's barriers, every round; indices stay below the block size.
            unsafe {
                *shared.add(t as usize) = exchange_value(t, r);
                barrier::sync_named(id, len);
                acc = acc.wrapping_mul(31).wrapping_add(*shared.add((start + (local + r + 1) % len) as usize));
                barrier::sync_named(id, len);
            }
        }
        // SAFETY: one element per thread.
        unsafe { *out.add(gid) = acc };
    }
}

warpsafe::kernel! {
    /// Each thread of a block of up to 32 reads its own slot of a shared array that
    /// nothing writes (whatever the block before left there: garbage, which safe code may
    /// read) and stores whether it was zero. The read must stay a `ld.shared`: an array
    /// the builder declared with an `undef` initialiser alone would let LLVM fold it to
    /// `undef`, and the comparison to undefined behaviour.
    pub fn mem_read_unwritten_shared(out: warpsafe::global::DisjointSlice<u32>) {
        warpsafe::shared! {
            static UNWRITTEN: [u32; 32];
        }
        if let Some(mine) = out.get(warpsafe::thread::index()) {
            out.write(mine, u32::from(UNWRITTEN.read_own() == 0));
        }
    }
}
