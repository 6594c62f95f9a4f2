//! Correct kernels: every collective, barrier, atomic and memory pattern the emulator
//! models, with results the tests compute on the host.

use warpsafe::arch::FULL_MASK;
use warpsafe::atomic::{
    load_volatile, store_volatile, AcqRel, Acquire, BlockAtomicU32, DeviceAtomicF32, DeviceAtomicF64,
    DeviceAtomicI32, DeviceAtomicU32, DeviceAtomicU64, Relaxed, Release,
};
use warpsafe::global::{DisjointSlice, Slice, UnsafeSlice};
use warpsafe::group::{Coalesced, Group, Warp};
use warpsafe::op::Sum;
use warpsafe::{barrier, fence, shared, thread, warp};

/// Values each thread writes in [`collectives`].
pub const COLLECTIVE_RESULTS: usize = 28;

/// Writes `values` at `out[0..N]`.
///
/// # Safety
/// `out` is valid for `N` writes.
#[inline(always)]
unsafe fn store<const N: usize>(out: *mut u32, values: [u32; N]) {
    let mut k = 0;
    while k < N {
        // SAFETY: k < N.
        unsafe { *out.add(k) = values[k] };
        k += 1;
    }
}

warpsafe::kernel! {
    /// Each thread writes its butterfly partner's lane.
    ///
    /// # Safety
    /// `out` holds one element per thread; blocks are whole warps.
    pub unsafe fn smoke(out: *mut u32) {
        let t = thread::global_index_x();
        let lane = warp::lane_id();
        // SAFETY: whole warps, every lane arrives.
        let v = unsafe { warp::shfl_xor_sync(FULL_MASK, lane, 1, 32) };
        // SAFETY: t is in range.
        unsafe { *out.add(t as usize) = v };
    }

    /// Every warp collective once (see `tests/tests/emu_collectives.rs` for the expected
    /// values): thread `t` writes [`COLLECTIVE_RESULTS`] values at
    /// `out[t * COLLECTIVE_RESULTS..]`.
    ///
    /// # Safety
    /// `out` holds `COLLECTIVE_RESULTS` elements per thread; blocks are whole warps.
    pub unsafe fn collectives(out: *mut u32) {
        let t = thread::global_index_x() as usize;
        let l = warp::lane_id();
        let w = Warp::this();
        // SAFETY: whole warps; every lane runs every collective below, none in a branch.
        let values = unsafe {
            let (up, up_p) = warp::shfl_up_sync_p(FULL_MASK, l, 3, 8);
            let (down, down_p) = warp::shfl_down_sync_p(FULL_MASK, l, 5, 16);
            let (xor, xor_p) = warp::shfl_xor_sync_p(FULL_MASK, l, 6, 32);
            let elected = warp::elect_sync(FULL_MASK);
            let wide = warp::shfl_xor_sync(FULL_MASK, ((l as u64) << 40) | l as u64, 1, 32);
            warp::sync_warp(FULL_MASK);
            [
                warp::shfl_idx_sync(FULL_MASK, l * 10, 31 - l, 32),
                warp::shfl_idx_sync(FULL_MASK, l * 10, 3, 8),
                up,
                up_p as u32,
                down,
                down_p as u32,
                xor,
                xor_p as u32,
                warp::ballot_sync(FULL_MASK, l.is_multiple_of(3)),
                warp::any_sync(FULL_MASK, l == 7) as u32,
                warp::all_sync(FULL_MASK, l < 31) as u32,
                warp::uni_sync(FULL_MASK, true) as u32,
                warp::match_any_sync(FULL_MASK, l / 4),
                warp::match_all_sync(FULL_MASK, 5u64).unwrap_or(0),
                warp::reduce_add_sync(FULL_MASK, l),
                warp::reduce_min_sync_i32(FULL_MASK, l as i32 - 10) as u32,
                warp::reduce_max_sync_u32(FULL_MASK, l),
                warp::reduce_and_sync(FULL_MASK, l | 0x100),
                warp::reduce_or_sync(FULL_MASK, l),
                warp::reduce_xor_sync(FULL_MASK, l),
                warp::ballot_sync(FULL_MASK, elected).count_ones(),
                warp::lanemask_lt(),
                w.reduce(l, Sum),
                w.tiles::<8>().inclusive_scan(1u32, Sum),
                w.exclusive_scan(l, Sum),
                (warp::active_mask() >> l) & 1,
                (wide >> 40) as u32 + wide as u32,
                warp::match_all_sync(FULL_MASK, l).map_or(7, |m| m),
            ]
        };
        // SAFETY: the slot is in range (contract).
        unsafe { store(out.add(t * COLLECTIVE_RESULTS), values) };
    }

    /// The safe group layer on a partial last warp: `out[t]` is the size of the caller's
    /// warp, as `Warp::this().reduce(1)` computes it.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn partial_warp(out: *mut u32) {
        let t = thread::global_index_x() as usize;
        let size = Warp::this().reduce(1u32, Sum);
        // SAFETY: t is in range.
        unsafe { *out.add(t) = size };
    }

    /// Warp-aggregated atomics in a divergent branch: the even lanes add their count to
    /// `*counter` with one atomic per coalesced group, whatever groups `activemask` gives.
    ///
    /// # Safety
    /// `counter` is a valid `u32`.
    pub unsafe fn aggregated(counter: *mut u32) {
        if warp::lane_id().is_multiple_of(2) {
            let g = Coalesced::active();
            if g.thread_rank() == 0 {
                // SAFETY: `counter` is valid and only accessed atomically.
                unsafe { DeviceAtomicU32::from_ptr(counter) }.add(g.size(), Relaxed);
            }
        }
    }

    /// Block barriers: thread `t` writes 4 values at `out[4 t..]` (a barrier-ordered sum of
    /// shared values, `sync_count`, `sync_and`/`sync_or`, a partner's value through a named
    /// barrier). Blocks of 128 threads.
    ///
    /// # Safety
    /// `out` holds 4 elements per thread; blocks have 128 threads.
    pub unsafe fn block_barriers(out: *mut u32) {
        shared! {
            static VALUES: [u32; 128];
        }
        shared! {
            static NAMED: [u32; 128];
        }
        let t = thread::global_index_x() as usize;
        let tid = thread::linear_thread_idx();
        // SAFETY: every thread writes its own element, then all meet at the barriers
        // (every thread of the block reaches each of them); warps 0-1 and 2-3 meet at
        // named barriers 1 and 2 with 64 threads each.
        unsafe {
            VALUES.write(tid as usize, tid * 2);
            barrier::sync();
            let mut sum = 0;
            for i in 0..VALUES.len() {
                sum += VALUES.read(i);
            }
            let count = barrier::sync_count(tid.is_multiple_of(3));
            let and = barrier::sync_and(tid < 200);
            let or = barrier::sync_or(tid == 5);
            NAMED.write(tid as usize, tid + 1);
            barrier::sync_named(1 + tid / 64, 64);
            let partner = NAMED.read((tid ^ 32) as usize);
            store(out.add(4 * t), [sum, count, and as u32 * 2 + or as u32, partner]);
        }
    }

    /// Dynamic shared memory: each thread writes its linear index, and after a barrier
    /// reads the mirrored one into `out[block * threads + index]`. Launched with 4 bytes
    /// of dynamic shared memory per thread, 1-D grids of blocks of any shape.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn dynamic_mirror(out: *mut u32) {
        let window = warpsafe::shared::dynamic::<u32>();
        let tid = thread::linear_thread_idx() as usize;
        let n = thread::block_threads() as usize;
        // SAFETY: own element before the barrier, any element after it.
        let mirrored = unsafe {
            window.write(tid, tid as u32);
            barrier::sync();
            window.read(n - 1 - tid)
        };
        let slot = thread::block_idx().x as usize * n + tid;
        // SAFETY: in range.
        unsafe { *out.add(slot) = mirrored };
    }

    /// Every kind of atomic: `cells` holds (as u64 words) u32 add, i32 min, i32 max, u64
    /// add, f32 add, f64 add, u32 and, or, xor, inc (limit 1000), dec (limit 1000), exch
    /// (count of distinct swaps), and a CAS-loop counter.
    ///
    /// # Safety
    /// `cells` holds 13 u64 words, initialised as the test does.
    pub unsafe fn atomics(cells: *mut u64) {
        let t = thread::global_index_x() as u32;
        let word = |k: usize| cells.wrapping_add(k);
        // SAFETY: each cell is valid and only accessed atomically during the launch.
        unsafe {
            DeviceAtomicU32::from_ptr(word(0).cast()).fetch_add(t, Relaxed);
            DeviceAtomicI32::from_ptr(word(1).cast()).fetch_min(t as i32 - 50, AcqRel);
            DeviceAtomicI32::from_ptr(word(2).cast()).max(t as i32 - 50, Release);
            DeviceAtomicU64::from_ptr(word(3)).add(1 << 33, Relaxed);
            DeviceAtomicF32::from_ptr(word(4).cast()).fetch_add(0.5, Relaxed);
            DeviceAtomicF64::from_ptr(word(5).cast()).add(0.25, Relaxed);
            DeviceAtomicU32::from_ptr(word(6).cast()).fetch_and(!(1 << (t % 32)), Relaxed);
            DeviceAtomicU32::from_ptr(word(7).cast()).or(1 << (t % 32), Relaxed);
            DeviceAtomicU32::from_ptr(word(8).cast()).fetch_xor(t, Acquire);
            DeviceAtomicU32::from_ptr(word(9).cast()).fetch_inc(1000, Relaxed);
            DeviceAtomicU32::from_ptr(word(10).cast()).dec(1000, Relaxed);
            DeviceAtomicU32::from_ptr(word(11).cast()).swap(t, Relaxed);
            let cas = DeviceAtomicU32::from_ptr(word(12).cast());
            let mut current = cas.load(Relaxed);
            while let Err(seen) = cas.compare_exchange(current, current + 3, AcqRel) {
                current = seen;
            }
        }
    }

    /// `order[ticket] = t`, with tickets from one atomic counter: the order in which the
    /// threads reached it (the scheduler's interleaving).
    ///
    /// # Safety
    /// `counter` is a valid zeroed `u32`, `order` holds one element per thread.
    pub unsafe fn tickets(order: *mut u32, counter: *mut u32) {
        let t = thread::global_index_x() as u32;
        // SAFETY: `counter` is valid and only accessed atomically; tickets are distinct
        // and below the thread count.
        unsafe {
            let ticket = DeviceAtomicU32::from_ptr(counter).fetch_add(1, Relaxed);
            *order.add(ticket as usize) = t;
        }
    }

    /// Inter-block message passing: the last block writes `data[0..32]`, fences and sets
    /// `*flag`; block 0, started first, spins on the flag, fences and copies the data to
    /// `out`. Blocks of 32 threads; every block in between does nothing.
    ///
    /// # Safety
    /// `data` and `out` hold 32 elements, `flag` is a valid zeroed `u32`; all blocks of
    /// the grid are resident at once.
    pub unsafe fn message_passing(data: *mut u32, flag: *mut u32, out: *mut u32) {
        let b = thread::block_idx().x;
        let lane = warp::lane_id() as usize;
        if b + 1 == thread::grid_dim().x {
            // SAFETY: each lane writes its own element; the flag is only accessed
            // volatilely; the warp syncs before lane 0 publishes.
            unsafe {
                *data.add(lane) = lane as u32 * 7 + 1;
                warp::sync_warp(FULL_MASK);
                if lane == 0 {
                    fence::device();
                    store_volatile(flag, 1u32);
                }
            }
        } else if b == 0 {
            // SAFETY: the flag is only accessed volatilely; the data is read after the
            // flag and a fence.
            unsafe {
                while load_volatile(flag) == 0 {}
                fence::device();
                *out.add(lane) = *data.add(lane);
            }
        }
    }

    /// A cooperative grid barrier from an atomic counter and fences: every block writes
    /// `data[block] = block + 1`, all meet, then every block sums all of `data` into
    /// `out[block]`. Blocks of 64 threads.
    ///
    /// # Safety
    /// `arrived` is a valid zeroed `u32`; `data` and `out` hold one element per block;
    /// the launch is cooperative.
    pub unsafe fn grid_barrier(arrived: *mut u32, data: *mut u32, out: *mut u32) {
        let b = thread::block_idx().x as usize;
        let blocks = thread::grid_dim().x;
        let first = thread::linear_thread_idx() == 0;
        // SAFETY: each block's thread 0 writes its own element; the counter is only
        // accessed atomically; every thread of each block reaches both barriers; the
        // reads of `data` follow everyone's release and this block's acquire.
        unsafe {
            if first {
                *data.add(b) = b as u32 + 1;
            }
            barrier::sync();
            if first {
                let counter = DeviceAtomicU32::from_ptr(arrived);
                fence::device_sc();
                counter.fetch_add(1, Release);
                while counter.load(Acquire) < blocks {}
            }
            barrier::sync();
            if first {
                let mut sum = 0;
                for i in 0..blocks as usize {
                    sum += *data.add(i);
                }
                *out.add(b) = sum;
            }
        }
    }

    /// The shared-memory butterfly sum with `syncwarp` between the writes and the reads
    /// of every step: every lane ends with the sum of `1..=32`. Blocks of 32 threads.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn butterfly_synced(out: *mut u32) {
        shared! {
            static EXCHANGE: [u32; 32];
        }
        let lane = warp::lane_id();
        let mut v = lane + 1;
        let mut d = 1;
        while d < 32 {
            // SAFETY: the syncwarps order every write before the partner's read and
            // every read before the next step's writes.
            unsafe {
                EXCHANGE.write(lane as usize, v);
                warp::sync_warp(FULL_MASK);
                v += EXCHANGE.read((lane ^ d) as usize);
                warp::sync_warp(FULL_MASK);
            }
            d *= 2;
        }
        // SAFETY: in range.
        unsafe { *out.add(thread::global_index_x() as usize) = v };
    }

    /// Publishing through shared memory with a block-scope release store and an acquire
    /// load: lane 0 writes `DATA`, lane 1 waits for the flag and copies `DATA` to `out`.
    ///
    /// # Safety
    /// `out` holds 4 elements; blocks of 32 threads.
    pub unsafe fn shared_publish(out: *mut u32) {
        shared! {
            static DATA: [u32; 4];
        }
        shared! {
            static FLAG: [u32; 1];
        }
        let lane = warp::lane_id();
        // SAFETY: the flag is only accessed atomically (initialised before the syncwarp);
        // DATA is written before the release store and read after the acquire load.
        unsafe {
            let flag = BlockAtomicU32::from_ptr(FLAG.slice().as_mut_ptr());
            if lane == 0 {
                flag.store(0, Relaxed);
            }
            warp::sync_warp(FULL_MASK);
            if lane == 0 {
                for i in 0..4 {
                    DATA.write(i, i as u32 + 40);
                }
                flag.store(1, Release);
            } else if lane == 1 {
                while flag.load(Acquire) == 0 {}
                for i in 0..4 {
                    *out.add(i) = DATA.read(i);
                }
            }
        }
    }

    /// Threads past `live` return at once; the others exchange values through shared
    /// memory across a block barrier, which the exited threads no longer hold up under
    /// PTX's rule for `exit` (correct PTX, but CUDA C++'s `__syncthreads` rule forbids
    /// it: the emulator reports it unless `Options::exits_release_barriers` is set):
    /// `out[t] = live - 1 - t` for `t < live`. Blocks of 64.
    ///
    /// # Safety
    /// `out` holds 64 elements per block; `live <= 64`.
    pub unsafe fn barrier_after_early_exit(out: *mut u32, live: u32) {
        shared! {
            static VALUES: [u32; 64];
        }
        let tid = thread::linear_thread_idx();
        if tid >= live {
            return;
        }
        // SAFETY: own element before the barrier, any live thread's element after it.
        unsafe {
            VALUES.write(tid as usize, tid);
            barrier::sync();
            let mirrored = VALUES.read((live - 1 - tid) as usize);
            *out.add(thread::global_index_x() as usize) = mirrored;
        }
    }

    /// The CUDA programming guide's partial-warp reduction: the first `n` lanes shuffle
    /// down over their own mask and add what they read only when the source lane is below
    /// `n`, so the undefined values read from lanes outside the mask are dropped.
    /// `out[0]` gets the sum of `data[..n]`. One warp.
    ///
    /// # Safety
    /// `1 <= n <= 32`.
    pub unsafe fn guide_partial_reduction(data: Slice<f32>, n: u32, out: DisjointSlice<f32>) {
        let lane = warp::lane_id();
        if lane >= n {
            return;
        }
        let mask = if n == 32 { FULL_MASK } else { (1u32 << n) - 1 };
        let mut v = data[lane as usize];
        let mut offset = 16;
        while offset > 0 {
            // SAFETY: every lane of `mask` (the first n) reaches each shuffle.
            let other = unsafe { warp::shfl_down_sync(mask, v, offset, 32) };
            if lane + offset < n {
                v += other;
            }
            offset /= 2;
        }
        if lane == 0 {
            if let Some(i) = out.get(thread::index()) {
                out.write(i, v);
            }
        }
    }

    /// The correct twin of `misuse::partial_sum_without_identity`: lanes past `n` fill
    /// their slot with 0, the identity of the sum.
    ///
    /// # Safety
    /// `n <= 32`.
    pub unsafe fn partial_sum_with_identity(data: Slice<f32>, n: u32, out: DisjointSlice<f32>) {
        shared! {
            static SLOTS: [f32; 32];
        }
        let lane = warp::lane_id();
        // SAFETY: own slot before the barrier, any slot after it; every thread reaches it.
        unsafe {
            SLOTS.write(lane as usize, if lane < n { data[lane as usize] } else { 0.0 });
            barrier::sync();
        }
        if lane == 0 {
            let mut sum = 0.0;
            for i in 0..32 {
                // SAFETY: after the barrier.
                sum += unsafe { SLOTS.read(i) };
            }
            if let Some(i) = out.get(thread::index()) {
                out.write(i, sum);
            }
        }
    }

    /// A long compute-heavy kernel: each thread makes `rounds` warp reductions and writes
    /// nothing until the end: `out[t] = sum over r of (32 r + 496)`.
    pub fn many_reductions(rounds: u32, out: DisjointSlice<u32>) {
        let w = Warp::this();
        let mut total = 0u32;
        for r in 0..rounds {
            total = total.wrapping_add(w.reduce(r + warp::lane_id(), Sum));
        }
        if let Some(i) = out.get(thread::index()) {
            out.write(i, total);
        }
    }

    /// The last-warp reduction of `misuse::volatile_last_warp` done right: each lane
    /// reads, the warp syncs, each lane writes, the warp syncs. `out[0]` = 2016.
    pub unsafe fn synced_last_warp(out: DisjointSlice<u32>) {
        shared! {
            static SUMS: [u32; 64];
        }
        let t = thread::linear_thread_idx() as usize;
        // SAFETY: own slot, a barrier every thread reaches, then the first warp's reads
        // and writes are separated by syncwarps.
        unsafe {
            SUMS.write(t, t as u32);
            barrier::sync();
            if t < 32 {
                for offset in [32, 16, 8, 4, 2, 1] {
                    let v = SUMS.read(t) + SUMS.read(t + offset);
                    warp::sync_warp(FULL_MASK);
                    SUMS.write(t, v);
                    warp::sync_warp(FULL_MASK);
                }
            }
            if t == 0 {
                if let Some(i) = out.get(thread::index()) {
                    out.write(i, SUMS.read(0));
                }
            }
        }
    }

    /// Lanes exchange values through a global scratch buffer, with `syncwarp` between
    /// the writes and the reads: `out[l] = l ^ 1`.
    pub unsafe fn global_exchange_synced(scratch: UnsafeSlice<u32>, out: DisjointSlice<u32>) {
        let l = warp::lane_id() as usize;
        // SAFETY: each lane writes its own slot; the syncwarp orders the writes before
        // the neighbours' reads.
        let theirs = unsafe {
            scratch.write(l, l as u32);
            warp::sync_warp(FULL_MASK);
            scratch.read(l ^ 1)
        };
        if let Some(i) = out.get(thread::index()) {
            out.write(i, theirs);
        }
    }

    /// A last-block reduction with `fence::device()` before the ticket; the reader side
    /// fences after it when `reader_fence`, and does not (CUDA's threadFenceReduction
    /// sample) otherwise. `out[0]` = the sum of `1..=blocks` (written by the last block only).
    pub unsafe fn last_block_with_fence(partials: UnsafeSlice<u32>, ticket: UnsafeSlice<u32>, reader_fence: u32, out: UnsafeSlice<u32>) {
        if thread::linear_thread_idx() != 0 {
            return;
        }
        let b = thread::block_idx().x as usize;
        // SAFETY: each block writes its own partial and publishes it with the fence and
        // the ticket; the last block reads them after taking the last ticket.
        unsafe {
            partials.write(b, b as u32 + 1);
            fence::device();
            let taken = DeviceAtomicU32::from_ptr(ticket.as_mut_ptr()).fetch_add(1, Relaxed);
            if taken + 1 == thread::grid_dim().x {
                if reader_fence != 0 {
                    fence::device();
                }
                let sum = (0..partials.len()).map(|i| partials.read(i)).sum();
                out.write(0, sum);
            }
        }
    }

    /// Block 1 publishes `data[0] = 42` with a release store of the flag; block 0 spins
    /// with acquire loads, then reads it. Two blocks of 32; cooperative.
    pub unsafe fn flag_with_release(data: UnsafeSlice<u32>, flag: UnsafeSlice<u32>, out: DisjointSlice<u32>) {
        if thread::linear_thread_idx() != 0 {
            return;
        }
        // SAFETY: the flag is only accessed atomically; the release/acquire pair orders
        // the data.
        unsafe {
            let f = DeviceAtomicU32::from_ptr(flag.as_mut_ptr());
            if thread::block_idx().x == 1 {
                data.write(0, 42);
                f.store(1, Release);
            } else {
                while f.load(Acquire) == 0 {}
                let v = data.read(0);
                if let Some(i) = out.get(thread::index()) {
                    out.write(i, v);
                }
            }
        }
    }

    /// Every thread of every block counts into `count[0]` with a device-scope atomic.
    pub unsafe fn device_atomic_across_blocks(count: UnsafeSlice<u32>) {
        // SAFETY: the counter is only accessed atomically.
        unsafe { DeviceAtomicU32::from_ptr(count.as_mut_ptr()).add(1, Relaxed) };
    }

    /// A thread with a 300 KiB local array (CUDA allows up to 512 KiB of stack per
    /// thread): `out[t] = sum over i of (i ^ t)` for `i` in `0..76800`, wrapping.
    pub fn large_local_array(out: DisjointSlice<u32>) {
        let mut scratch = [0u32; 300 * 256];
        let t = thread::global_index_x() as u32;
        for (i, s) in scratch.iter_mut().enumerate() {
            *s = i as u32 ^ t;
        }
        let total = core::hint::black_box(&scratch).iter().fold(0u32, |a, &b| a.wrapping_add(b));
        if let Some(i) = out.get(thread::index()) {
            out.write(i, total);
        }
    }
}
