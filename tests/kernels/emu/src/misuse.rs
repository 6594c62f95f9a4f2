//! Kernels with planted bugs: each breaks one rule that the GPU does not check (it hangs,
//! or returns garbage), and that the emulator must report. Blocks of 32 threads unless
//! a kernel says otherwise; `out` holds one element per thread.

use warpsafe::arch::FULL_MASK;
use warpsafe::atomic::{load_volatile, store_volatile};
use warpsafe::atomic::{BlockAtomicU32, DeviceAtomicU32, Relaxed};
use warpsafe::global::{DisjointSlice, Slice, UnsafeSlice};
use warpsafe::group::{Group, Warp};
use warpsafe::op::Sum;
use warpsafe::reduce::grid::GridBarrier;
use warpsafe::{arch, barrier, shared, thread, warp};

/// Writes `value` at `out[global thread index]`.
///
/// # Safety
/// `out` holds one element per thread.
#[inline(always)]
unsafe fn put(out: *mut u32, value: u32) {
    // SAFETY: forwarded from the caller.
    unsafe { *out.add(thread::global_index_x() as usize) = value };
}

warpsafe::kernel! {
    /// Bug: lane 0 votes with a mask that leaves itself out.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn mask_excludes_caller(out: *mut u32) {
        if warp::lane_id() == 0 {
            // SAFETY: none: the planted bug.
            unsafe { put(out, warp::ballot_sync(0xffff_fffe, true)) };
        }
    }

    /// Bug: the lower half-warp shuffles, the upper half votes, both with the full mask.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn different_collectives(out: *mut u32) {
        let lane = warp::lane_id();
        // SAFETY: none: the planted bug.
        let v = unsafe {
            if lane < 16 {
                warp::shfl_idx_sync(FULL_MASK, lane, 0, 32)
            } else {
                warp::ballot_sync(FULL_MASK, true)
            }
        };
        // SAFETY: in range.
        unsafe { put(out, v) };
    }

    /// Bug: lanes 0-15 vote with mask `0x1ffff`, lanes 16-31 with the full mask; each mask
    /// names lanes of the other.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn different_masks(out: *mut u32) {
        let lane = warp::lane_id();
        let mask = if lane < 16 { 0x1_ffff } else { FULL_MASK };
        // SAFETY: none: the planted bug.
        unsafe { put(out, warp::ballot_sync(mask, true)) };
    }

    /// Bug: the upper half-warp returns early; the lower half then shuffles over the full
    /// warp.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn exited_lane(out: *mut u32) {
        let lane = warp::lane_id();
        if lane >= 16 {
            return;
        }
        // SAFETY: none: the planted bug.
        unsafe { put(out, warp::shfl_down_sync(FULL_MASK, lane, 1, 32)) };
    }

    /// Bug: lanes 0-15 shuffle over the full warp while lanes 16-31 wait at the block
    /// barrier.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn lane_waits_at_barrier(out: *mut u32) {
        let lane = warp::lane_id();
        // SAFETY: none: the planted bug.
        unsafe {
            if lane < 16 {
                put(out, warp::shfl_idx_sync(FULL_MASK, lane, 0, 32));
            } else {
                barrier::sync();
            }
        }
    }

    /// Bug: warp 0 waits at `barrier.sync 0`, warp 1 at `barrier.red.popc 0`. Blocks of 64.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn barrier_forms(out: *mut u32) {
        // SAFETY: none: the planted bug.
        unsafe {
            if thread::warp_idx() == 0 {
                barrier::sync();
            } else {
                put(out, barrier::sync_count(true));
            }
        }
    }

    /// Bug: warp 0 waits at the block barrier, warp 1 at named barrier 1 for 64 threads.
    /// Blocks of 64.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn barrier_named_elsewhere(out: *mut u32) {
        // SAFETY: none: the planted bug.
        unsafe {
            if thread::warp_idx() == 0 {
                barrier::sync();
            } else {
                barrier::sync_named(1, 64);
            }
            put(out, 1);
        }
    }

    /// Bug: warp 1 skips the block barrier and spins on a flag that warp 0 sets only
    /// after it. Blocks of 64; `flag` is a zeroed `u32`.
    ///
    /// # Safety
    /// `flag` is valid.
    pub unsafe fn barrier_skipped(flag: *mut u32) {
        // SAFETY: the flag is only accessed volatilely; the barrier is the planted bug.
        unsafe {
            if thread::warp_idx() == 0 {
                barrier::sync();
                store_volatile(flag, 1u32);
            } else {
                while load_volatile(flag) == 0 {}
            }
        }
    }

    /// Bug: every lane writes the shared element after its own; lane 31 writes past the
    /// end.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn shared_out_of_bounds(out: *mut u32) {
        shared! {
            static SLOTS: [u32; 32];
        }
        let lane = warp::lane_id() as usize;
        // SAFETY: each lane writes a distinct element (the bounds are the planted bug).
        unsafe {
            SLOTS.write(lane + 1, 1);
            put(out, 1);
        }
    }

    /// Bug: the CUDA guide's invalid ballot loop: `ballot_sync(FULL_MASK, ..)` inside a
    /// loop whose trip count differs between lanes, so in the last iteration the lanes
    /// that left the loop (and exited) are missing. `n` elements of `data`, one warp.
    ///
    /// # Safety
    /// `data` holds `n` elements, `out` holds `n.div_ceil(32)`.
    pub unsafe fn ballot_divergent_loop(data: *const u32, n: u32, out: *mut u32) {
        let mut i = warp::lane_id();
        while i < n {
            // SAFETY: i < n; the full mask is the planted bug.
            unsafe {
                let bits = warp::ballot_sync(FULL_MASK, *data.add(i as usize) > 0);
                if warp::lane_id() == 0 {
                    *out.add(i as usize / 32) = bits;
                }
            }
            i += 32;
        }
    }

    /// Bug: the reduction from NVIDIA's "Using CUDA warp-level primitives": the mask of
    /// the shuffles is `activemask()` taken inside the branch, assumed to name all lanes
    /// that took it; under independent scheduling it may name fewer, and the shuffles
    /// then read lanes outside it. One warp; `data` holds 32 elements; `out[0]` gets the
    /// sum.
    ///
    /// # Safety
    /// `data` holds 32 elements, `out` one.
    pub unsafe fn activemask_reduction(data: *const u32, n: u32, out: *mut u32) {
        let lane = warp::lane_id();
        if lane < n {
            let mask = warp::active_mask();
            // SAFETY: lane < n <= 32; the mask is the planted bug.
            unsafe {
                let mut v = *data.add(lane as usize);
                let mut offset = 16;
                while offset > 0 {
                    v += warp::shfl_down_sync(mask, v, offset, 32);
                    offset /= 2;
                }
                if lane == 0 {
                    *out = v;
                }
            }
        }
    }

    /// Bug: lanes 0-15 shuffle over mask `0xffff`, reading lanes 16-31 outside it.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn shuffle_outside_mask(out: *mut u32) {
        let lane = warp::lane_id();
        if lane < 16 {
            // SAFETY: none: the planted bug.
            unsafe { put(out, warp::shfl_idx_sync(0xffff, lane, lane + 16, 32)) };
        }
    }

    /// Bug: a safe `Warp` group used inside a branch that half the warp skips (on the GPU
    /// the group's presence check traps; on the emulator it is a deadlock).
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn group_in_branch(out: *mut u32) {
        let w = Warp::this();
        if warp::lane_id() < 16 {
            // SAFETY: in range.
            unsafe { put(out, w.reduce(1u32, Sum)) };
        }
    }

    /// Bug: the shared-memory butterfly without `syncwarp`: lanes read their partner's
    /// slot while the partner may still be writing it (a data race).
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn butterfly_unsynced(out: *mut u32) {
        shared! {
            static EXCHANGE: [u32; 32];
        }
        let lane = warp::lane_id();
        let mut v = lane + 1;
        let mut d = 1;
        while d < 32 {
            // SAFETY: none: the missing syncwarps are the planted bug.
            unsafe {
                EXCHANGE.write(lane as usize, v);
                v = v.wrapping_add(EXCHANGE.read((lane ^ d) as usize));
            }
            d *= 2;
        }
        // SAFETY: in range.
        unsafe { put(out, v) };
    }

    /// Bug: lane 31 panics.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn panics(out: *mut u32) {
        if warp::lane_id() == 31 {
            panic!("lane 31 gave up");
        }
        // SAFETY: in range.
        unsafe { put(out, 1) };
    }

    /// Bug: thread 3 executes `trap`.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn traps(out: *mut u32) {
        if thread::global_index_x() == 3 {
            arch::trap();
        }
        // SAFETY: in range.
        unsafe { put(out, 1) };
    }

    /// Bug: after a block barrier every thread reads its neighbour's slot and then
    /// overwrites its own without a second barrier, so a write races with the
    /// neighbour's read. Blocks of 64.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn race_after_barrier(out: *mut u32) {
        shared! {
            static SLOTS: [u32; 64];
        }
        let tid = thread::linear_thread_idx() as usize;
        // SAFETY: in range; the missing second barrier is the planted bug.
        unsafe {
            SLOTS.write(tid, tid as u32);
            barrier::sync();
            let next = SLOTS.read((tid + 1) % 64);
            SLOTS.write(tid, next);
            put(out, next);
        }
    }

    /// Bug: a block barrier in each arm of a branch on the thread index (two barriers,
    /// each reached by half the block). Blocks of 64.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    #[allow(clippy::if_same_then_else)] // two barriers at two places: the planted bug
    pub unsafe fn barrier_in_branch(out: *mut u32) {
        let t = thread::linear_thread_idx();
        // SAFETY: none: the planted bug.
        unsafe {
            if t < 32 {
                barrier::sync();
            } else {
                barrier::sync();
            }
            put(out, t);
        }
    }

    /// Bug: a barrier in a loop whose trip count differs per thread (`t % 3 + 1`): the
    /// threads that leave first exit while the others wait. Blocks of 64.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn barrier_in_divergent_loop(out: *mut u32) {
        let t = thread::linear_thread_idx();
        for _ in 0..t % 3 + 1 {
            // SAFETY: none: the planted bug.
            unsafe { barrier::sync() };
        }
        // SAFETY: in range.
        unsafe { put(out, t) };
    }

    /// Bug: a shuffle of width 24, which is not a power of two.
    ///
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn bad_shuffle_width(out: *mut u32) {
        let lane = warp::lane_id();
        // SAFETY: the whole warp shuffles; the width is the planted bug.
        unsafe { put(out, warp::shfl_idx_sync(FULL_MASK, lane, 0, 24)) };
    }

    /// Bug: a grid barrier in a launch that is not cooperative.
    ///
    /// # Safety
    /// `word` is a zeroed `u32`; every thread calls the barrier.
    pub unsafe fn grid_barrier_not_cooperative(word: *mut u32) {
        // SAFETY: valid zeroed word; the launch mode is the planted bug.
        unsafe { GridBarrier::from_ptr(word).sync() };
    }

    /// Bug: a partial warp reduced through shared memory without an identity fill: the
    /// first `n` lanes write their slot, then lane 0 sums all 32 slots. One warp;
    /// `out[0]` gets the sum.
    ///
    /// # Safety
    /// `n <= 32`.
    pub unsafe fn partial_sum_without_identity(data: Slice<f32>, n: u32, out: DisjointSlice<f32>) {
        shared! {
            static SLOTS: [f32; 32];
        }
        let lane = warp::lane_id();
        // SAFETY: own slot before the barrier, any slot after it; every thread reaches it.
        unsafe {
            if lane < n {
                SLOTS.write(lane as usize, data[lane as usize]);
            }
            barrier::sync();
        }
        if lane == 0 {
            let mut sum = 0.0;
            for i in 0..32 {
                // SAFETY: after the barrier; the slots past `n` are the planted bug.
                sum += unsafe { SLOTS.read(i) };
            }
            if let Some(i) = out.get(thread::index()) {
                out.write(i, sum);
            }
        }
    }

    /// Bug: lanes 0-15 shuffle over mask `0xffff` from lanes 16-31, outside it, and store
    /// what they read. One warp.
    pub unsafe fn shuffle_outside_mask_stored(out: DisjointSlice<u32>) {
        let lane = warp::lane_id();
        if lane < 16 {
            // SAFETY: none: the planted bug.
            let v = unsafe { warp::shfl_idx_sync(0xffff, lane, lane + 16, 32) };
            if let Some(i) = out.get(thread::index()) {
                out.write(i, v);
            }
        }
    }

    /// Bug: a safe `Warp` reduction called from both arms of a branch: on the GPU each
    /// arm's `activemask` names half the warp and the group's check traps.
    pub unsafe fn group_in_both_arms(out: DisjointSlice<u32>) {
        let w = Warp::this();
        let v = if warp::lane_id() < 16 { w.reduce(1u32, Sum) } else { w.reduce(2u32, Sum) };
        if let Some(i) = out.get(thread::index()) {
            out.write(i, v);
        }
    }

    /// Bug: the classic unrolled last-warp reduction through volatile shared memory,
    /// without `syncwarp`: lane `t` reads lane `t + offset`'s slot while that lane may
    /// still be writing it. One block of 64; `out[0]` gets the sum of `0..64`.
    pub unsafe fn volatile_last_warp(out: DisjointSlice<u32>) {
        shared! {
            static SUMS: [u32; 64];
        }
        let t = thread::linear_thread_idx() as usize;
        let p = SUMS.slice().as_mut_ptr();
        // SAFETY: own slot, then every thread reaches the barrier; the volatile accesses
        // stay in the array; the missing syncwarp is the planted bug.
        unsafe {
            store_volatile(p.add(t), t as u32);
            barrier::sync();
            if t < 32 {
                for offset in [32, 16, 8, 4, 2, 1] {
                    let v = load_volatile(p.add(t)) + load_volatile(p.add(t + offset));
                    store_volatile(p.add(t), v);
                }
            }
        }
        if t == 0 {
            if let Some(i) = out.get(thread::index()) {
                // SAFETY: lane 0's own slot.
                out.write(i, unsafe { load_volatile(p) });
            }
        }
    }

    /// Bug: lanes exchange values through a global scratch buffer without `syncwarp`:
    /// lane `l` writes `scratch[l]`, then reads its neighbour's `scratch[l ^ 1]`.
    pub unsafe fn global_exchange_unsynced(scratch: UnsafeSlice<u32>, out: DisjointSlice<u32>) {
        let l = warp::lane_id() as usize;
        // SAFETY: none for the read: the planted bug.
        let theirs = unsafe {
            scratch.write(l, l as u32);
            scratch.read(l ^ 1)
        };
        if let Some(i) = out.get(thread::index()) {
            out.write(i, theirs);
        }
    }

    /// Bug: thread 0 of every block adds 1 to `total[0]` with a plain read and write.
    pub unsafe fn plain_increment_from_blocks(total: UnsafeSlice<u32>) {
        if thread::linear_thread_idx() == 0 {
            // SAFETY: none: the planted bug.
            unsafe { total.write(0, total.read(0) + 1) };
        }
    }

    /// Bug: a last-block reduction without the fence before the ticket: a block's
    /// partial may not be visible to the block that takes the last ticket.
    /// `partials` holds one element per block, `ticket` one zeroed `u32`.
    pub unsafe fn last_block_without_fence(partials: UnsafeSlice<u32>, ticket: UnsafeSlice<u32>, out: UnsafeSlice<u32>) {
        if thread::linear_thread_idx() != 0 {
            return;
        }
        let b = thread::block_idx().x as usize;
        // SAFETY: each block writes its own partial; the ticket is only accessed
        // atomically; the missing fence is the planted bug.
        unsafe {
            partials.write(b, b as u32 + 1);
            let taken = DeviceAtomicU32::from_ptr(ticket.as_mut_ptr()).fetch_add(1, Relaxed);
            if taken + 1 == thread::grid_dim().x {
                let sum = (0..partials.len()).map(|i| partials.read(i)).sum();
                out.write(0, sum);
            }
        }
    }

    /// Bug: block 1 publishes `data[0]` with a relaxed store of the flag; block 0 spins
    /// on the flag (relaxed) and reads the data. Two blocks of 32; cooperative.
    pub unsafe fn flag_without_release(data: UnsafeSlice<u32>, flag: UnsafeSlice<u32>, out: DisjointSlice<u32>) {
        if thread::linear_thread_idx() != 0 {
            return;
        }
        // SAFETY: the flag is only accessed atomically; the relaxed orderings are the
        // planted bug.
        unsafe {
            let f = DeviceAtomicU32::from_ptr(flag.as_mut_ptr());
            if thread::block_idx().x == 1 {
                data.write(0, 42);
                f.store(1, Relaxed);
            } else {
                while f.load(Relaxed) == 0 {}
                let v = data.read(0);
                if let Some(i) = out.get(thread::index()) {
                    out.write(i, v);
                }
            }
        }
    }

    /// Bug: every thread of every block counts into `count[0]` with a block-scope atomic,
    /// which is atomic only within a block.
    pub unsafe fn block_atomic_across_blocks(count: UnsafeSlice<u32>) {
        // SAFETY: the counter is only accessed atomically; the scope is the planted bug.
        unsafe { BlockAtomicU32::from_ptr(count.as_mut_ptr()).add(1, Relaxed) };
    }

    /// Bug: carves 16 `u32` at byte 0 and 32 `f32` at byte 64 out of the dynamic window;
    /// launched with 128 bytes, the second part does not fit.
    pub unsafe fn dynamic_carved_past_the_end(out: DisjointSlice<f32>) {
        let counts = shared::dynamic_part::<u32>(0, 16);
        let values = shared::dynamic_part::<f32>(64, 32);
        let lane = warp::lane_id() as usize;
        // SAFETY: each lane writes its own elements.
        unsafe {
            if lane < counts.len() {
                counts.write(lane, 1);
            }
            values.write(lane, lane as f32);
        }
        if let Some(i) = out.get(thread::index()) {
            out.write(i, 0.0);
        }
    }

    /// Bug: each lane adds 1 to word `32 + lane` of the dynamic window through a shared
    /// atomic (`red.shared.add.u32`); launched with 128 bytes (32 words), all are past its
    /// end (with 256 bytes, none).
    pub unsafe fn shared_atomic_past_the_window(out: DisjointSlice<u32>) {
        let window = shared::dynamic::<u32>();
        let past = window.as_mut_ptr().wrapping_add(32 + warp::lane_id() as usize);
        // SAFETY: the word is accessed only atomically; its address is the planted bug.
        unsafe { BlockAtomicU32::from_ptr(past).add_shared(1) };
        if let Some(i) = out.get(thread::index()) {
            out.write(i, 0);
        }
    }
}
