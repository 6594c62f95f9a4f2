//! Test kernels for `warpsafe::warp`'s raw collectives.
//!
//! Conventions shared with `tests/tests/warp_launch.rs`:
//! - threads are numbered `t = block_linear * block_threads + linear_thread_idx`, warps
//!   `w = block_linear * ceil(block_threads / 32) + warp_idx` (the last warp of a block
//!   whose size is not a multiple of 32 has fewer lanes);
//! - `masks[w]` (from the host) names the lanes of warp `w` that call the collective; the
//!   other lanes skip it and write nothing, so their outputs keep the host's poison value.
//!   Every such kernel therefore calls its collectives only inside `if member { ... }`,
//!   the divergent shape whose codegen `tests/tests/warp_ptx.rs` checks.
#![no_std]

pub use kernels::*;

mod kernels {
    use warpsafe::{thread, warp};

    /// A 12-byte `Pod` struct with sub-4-byte fields, the shape of CCCL issue #10958
    /// (ptxas once miscompiled a word-split shuffle of such a struct). Shuffled as three
    /// words; the host sees it as 12 bytes.
    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct Tagged12 {
        value: i16,
        tag: u8,
        flags: u8,
        index: i32,
        weight: f32,
    }

    /// `(t, w, lane)`: this thread's index, its warp's index (see the crate docs) and its
    /// lane.
    #[inline(always)]
    fn coordinates() -> (usize, usize, u32) {
        let b = thread::block_idx();
        let g = thread::grid_dim();
        let block_linear = (b.x + b.y * g.x + b.z * g.x * g.y) as usize;
        let threads = thread::block_threads() as usize;
        let t = block_linear * threads + thread::linear_thread_idx() as usize;
        let w = block_linear * threads.div_ceil(32) + thread::warp_idx() as usize;
        (t, w, warp::lane_id())
    }

    /// Whether `lane` is in `mask`.
    #[inline(always)]
    fn member(mask: u32, lane: u32) -> bool {
        (mask >> lane) & 1 != 0
    }

    /// Writes `values` to `out[0..N]` with one store each (an array loop kept the
    /// array on the stack).
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

    macro_rules! shuffle_kernels {
        ($($name:ident: $t:ty, $plain:ident, $with_p:ident;)*) => {$(
            warpsafe::kernel! {
                /// For each lane of `masks[w]`: `out[t]` = the plain shuffle of `input[t]`
                /// with lane argument `lane_args[t]` and width `widths[w]`; `out_p[t]` and
                /// `predicates[t]` (0 or 1) = the `_p` variant's value and predicate.
                ///
                /// # Safety
                /// Every buffer indexed by `t` holds one element per thread and `masks` and
                /// `widths` one per warp; `masks[w]` names only existing lanes, `widths[w]`
                /// is a power of two in 1..=32, and every lane argument selects a source
                /// lane in `masks[w]` (or one out of range, which reads the caller's own).
                pub unsafe fn $name(
                    masks: *const u32,
                    widths: *const u32,
                    lane_args: *const u32,
                    input: *const $t,
                    out: *mut $t,
                    out_p: *mut $t,
                    predicates: *mut u32,
                ) {
                    let (t, w, lane) = coordinates();
                    // SAFETY: w < number of warps, the length of `masks` and `widths`.
                    let (mask, width) = unsafe { (*masks.add(w), *widths.add(w)) };
                    if member(mask, lane) {
                        // SAFETY: t < number of threads, the length of these buffers.
                        let (value, arg) = unsafe { (*input.add(t), *lane_args.add(t)) };
                        // SAFETY: exactly the lanes of `mask` take this branch and none
                        // returns before; the host chose every lane argument so that the
                        // source lane is in `mask` (the launch contract).
                        let moved = unsafe { warp::$plain(mask, value, arg, width) };
                        // SAFETY: as for the shuffle above.
                        let (moved_p, in_range) = unsafe { warp::$with_p(mask, value, arg, width) };
                        // SAFETY: t < number of threads.
                        unsafe {
                            *out.add(t) = moved;
                            *out_p.add(t) = moved_p;
                            *predicates.add(t) = in_range as u32;
                        }
                    }
                }
            }
        )*};
    }

    shuffle_kernels! {
        warp_shfl_idx_u8: u8, shfl_idx_sync, shfl_idx_sync_p;
        warp_shfl_up_u8: u8, shfl_up_sync, shfl_up_sync_p;
        warp_shfl_down_u8: u8, shfl_down_sync, shfl_down_sync_p;
        warp_shfl_xor_u8: u8, shfl_xor_sync, shfl_xor_sync_p;
        warp_shfl_idx_i16: i16, shfl_idx_sync, shfl_idx_sync_p;
        warp_shfl_up_i16: i16, shfl_up_sync, shfl_up_sync_p;
        warp_shfl_down_i16: i16, shfl_down_sync, shfl_down_sync_p;
        warp_shfl_xor_i16: i16, shfl_xor_sync, shfl_xor_sync_p;
        warp_shfl_idx_u32: u32, shfl_idx_sync, shfl_idx_sync_p;
        warp_shfl_up_u32: u32, shfl_up_sync, shfl_up_sync_p;
        warp_shfl_down_u32: u32, shfl_down_sync, shfl_down_sync_p;
        warp_shfl_xor_u32: u32, shfl_xor_sync, shfl_xor_sync_p;
        warp_shfl_idx_i64: i64, shfl_idx_sync, shfl_idx_sync_p;
        warp_shfl_up_i64: i64, shfl_up_sync, shfl_up_sync_p;
        warp_shfl_down_i64: i64, shfl_down_sync, shfl_down_sync_p;
        warp_shfl_xor_i64: i64, shfl_xor_sync, shfl_xor_sync_p;
        warp_shfl_idx_u128: u128, shfl_idx_sync, shfl_idx_sync_p;
        warp_shfl_up_u128: u128, shfl_up_sync, shfl_up_sync_p;
        warp_shfl_down_u128: u128, shfl_down_sync, shfl_down_sync_p;
        warp_shfl_xor_u128: u128, shfl_xor_sync, shfl_xor_sync_p;
        warp_shfl_idx_f32: f32, shfl_idx_sync, shfl_idx_sync_p;
        warp_shfl_up_f32: f32, shfl_up_sync, shfl_up_sync_p;
        warp_shfl_down_f32: f32, shfl_down_sync, shfl_down_sync_p;
        warp_shfl_xor_f32: f32, shfl_xor_sync, shfl_xor_sync_p;
        warp_shfl_idx_f64: f64, shfl_idx_sync, shfl_idx_sync_p;
        warp_shfl_up_f64: f64, shfl_up_sync, shfl_up_sync_p;
        warp_shfl_down_f64: f64, shfl_down_sync, shfl_down_sync_p;
        warp_shfl_xor_f64: f64, shfl_xor_sync, shfl_xor_sync_p;
        warp_shfl_idx_tagged12: Tagged12, shfl_idx_sync, shfl_idx_sync_p;
        warp_shfl_up_tagged12: Tagged12, shfl_up_sync, shfl_up_sync_p;
        warp_shfl_down_tagged12: Tagged12, shfl_down_sync, shfl_down_sync_p;
        warp_shfl_xor_tagged12: Tagged12, shfl_xor_sync, shfl_xor_sync_p;
    }

    warpsafe::kernel! {
        /// Full warps, widths known at compile time (so the PTX shows the `c` operand): with
        /// `v = data[t]`, `out[4t..4t+4]` = `[shfl_idx(v, 3, 8), shfl_up(v, 1, 8),
        /// shfl_down(v, 2, 8), shfl_xor(v, 4, 8)]`.
        ///
        /// # Safety
        /// Blocks are a multiple of 32 threads; `data` holds one element per thread, `out`
        /// four.
        pub unsafe fn warp_shfl_width8(data: *const u32, out: *mut u32) {
            let (t, _, _) = coordinates();
            // SAFETY: t < number of threads.
            let v = unsafe { *data.add(t) };
            // SAFETY: blocks are a multiple of 32 and no lane has left: all 32 lanes run these
            // four shuffles, and every source lane exists.
            let moved = unsafe {
                [
                    warp::shfl_idx_sync(u32::MAX, v, 3, 8),
                    warp::shfl_up_sync(u32::MAX, v, 1, 8),
                    warp::shfl_down_sync(u32::MAX, v, 2, 8),
                    warp::shfl_xor_sync(u32::MAX, v, 4, 8),
                ]
            };
            // SAFETY: 4t + 3 < 4 * number of threads.
            unsafe { store(out.add(4 * t), moved) };
        }
    }

    warpsafe::kernel! {
        /// For each lane of `masks[w]`, with `p = predicates[t] != 0`: `out[5t..5t+5]` =
        /// `[ballot, any, all, uni, active_mask()]`.
        ///
        /// # Safety
        /// `predicates` holds one element per thread, `out` five, `masks` one per warp and
        /// names only existing lanes.
        pub unsafe fn warp_vote(masks: *const u32, predicates: *const u32, out: *mut u32) {
            let (t, w, lane) = coordinates();
            // SAFETY: w < number of warps.
            let mask = unsafe { *masks.add(w) };
            if member(mask, lane) {
                // SAFETY: t < number of threads.
                let p = unsafe { *predicates.add(t) } != 0;
                // SAFETY: exactly the lanes of `mask` take this branch and run these four
                // votes in the same order.
                let votes = unsafe {
                    [
                        warp::ballot_sync(mask, p),
                        warp::any_sync(mask, p) as u32,
                        warp::all_sync(mask, p) as u32,
                        warp::uni_sync(mask, p) as u32,
                    ]
                };
                let active = warp::active_mask();
                // SAFETY: 5t + 4 < 5 * number of threads.
                unsafe { store(out.add(5 * t), votes) };
                // SAFETY: as above.
                unsafe { *out.add(5 * t + 4) = active };
            }
        }
    }

    warpsafe::kernel! {
        /// Every thread writes `[lane_id, lanemask_eq, lt, le, gt, ge]` at `out[6t..6t+6]`.
        ///
        /// # Safety
        /// `out` holds six elements per thread.
        pub unsafe fn warp_lanes(out: *mut u32) {
            let (t, _, lane) = coordinates();
            let values = [
                lane,
                warp::lanemask_eq(),
                warp::lanemask_lt(),
                warp::lanemask_le(),
                warp::lanemask_gt(),
                warp::lanemask_ge(),
            ];
            // SAFETY: 6t + 5 < 6 * number of threads.
            unsafe { store(out.add(6 * t), values) };
        }
    }

    macro_rules! match_kernels {
        ($($name:ident: $t:ty;)*) => {$(
            warpsafe::kernel! {
                /// For each lane of `masks[w]`: `out[3t..3t+3]` = `[match_any, 1 if
                /// match_all is Some, match_all's mask or 0]` of `input[t]`.
                ///
                /// # Safety
                /// `input` holds one element per thread, `out` three, `masks` one per warp
                /// and names only existing lanes.
                pub unsafe fn $name(masks: *const u32, input: *const $t, out: *mut u32) {
                    let (t, w, lane) = coordinates();
                    // SAFETY: w < number of warps.
                    let mask = unsafe { *masks.add(w) };
                    if member(mask, lane) {
                        // SAFETY: t < number of threads.
                        let value = unsafe { *input.add(t) };
                        // SAFETY: exactly the lanes of `mask` take this branch and run both
                        // matches in the same order.
                        let (any, all) =
                            unsafe { (warp::match_any_sync(mask, value), warp::match_all_sync(mask, value)) };
                        // SAFETY: 3t + 2 < 3 * number of threads.
                        unsafe {
                            *out.add(3 * t) = any;
                            *out.add(3 * t + 1) = all.is_some() as u32;
                            *out.add(3 * t + 2) = all.unwrap_or(0);
                        }
                    }
                }
            }
        )*};
    }

    match_kernels! {
        warp_match_u32: u32;
        warp_match_i32: i32;
        warp_match_f32: f32;
        warp_match_u64: u64;
        warp_match_i64: i64;
        warp_match_f64: f64;
    }

    warpsafe::kernel! {
        /// For each lane of `masks[w]`: `out[8t..8t+8]` = the reductions of `input[t]` over
        /// the mask: `[add, min u32, max u32, min i32, max i32, and, or, xor]`.
        ///
        /// # Safety
        /// `input` holds one element per thread, `out` eight, `masks` one per warp and names
        /// only existing lanes.
        pub unsafe fn warp_redux(masks: *const u32, input: *const u32, out: *mut u32) {
            let (t, w, lane) = coordinates();
            // SAFETY: w < number of warps.
            let mask = unsafe { *masks.add(w) };
            if member(mask, lane) {
                // SAFETY: t < number of threads.
                let v = unsafe { *input.add(t) };
                // SAFETY: exactly the lanes of `mask` (not empty: this lane is in it) take
                // this branch and run the eight reductions in the same order.
                let results = unsafe {
                    [
                        warp::reduce_add_sync(mask, v),
                        warp::reduce_min_sync_u32(mask, v),
                        warp::reduce_max_sync_u32(mask, v),
                        warp::reduce_min_sync_i32(mask, v as i32) as u32,
                        warp::reduce_max_sync_i32(mask, v as i32) as u32,
                        warp::reduce_and_sync(mask, v),
                        warp::reduce_or_sync(mask, v),
                        warp::reduce_xor_sync(mask, v),
                    ]
                };
                // SAFETY: 8t + 7 < 8 * number of threads.
                unsafe { store(out.add(8 * t), results) };
            }
        }
    }

    warpsafe::kernel! {
        /// For each lane of `masks[w]`: `out[t]` = 1 if `elect_sync(mask)` elected it, else 0.
        ///
        /// # Safety
        /// `out` holds one element per thread, `masks` one per warp and names only existing
        /// lanes.
        pub unsafe fn warp_elect(masks: *const u32, out: *mut u32) {
            let (t, w, lane) = coordinates();
            // SAFETY: w < number of warps.
            let mask = unsafe { *masks.add(w) };
            if member(mask, lane) {
                // SAFETY: exactly the lanes of `mask` take this branch.
                let elected = unsafe { warp::elect_sync(mask) };
                // SAFETY: t < number of threads.
                unsafe { *out.add(t) = elected as u32 };
            }
        }
    }

    warpsafe::kernel! {
        /// Elects leaders one at a time: in round `r` the lanes of `masks[w]` not yet elected
        /// elect one, which writes `r` to `out[t]` and leaves; the others learn who it was with
        /// a ballot and go on with a smaller mask. Every lane of the mask ends with a distinct
        /// round in `0..popcount(mask)`.
        ///
        /// # Safety
        /// As for [`warp_elect`].
        pub unsafe fn warp_elect_rounds(masks: *const u32, out: *mut u32) {
            let (t, w, lane) = coordinates();
            // SAFETY: w < number of warps.
            let mask = unsafe { *masks.add(w) };
            if member(mask, lane) {
                let mut remaining = mask;
                let mut round = 0u32;
                loop {
                    // SAFETY: `remaining` is the same in every lane not yet elected, and
                    // exactly those lanes are in this loop (the elected one left after the
                    // previous round's ballot).
                    let (elected, leader) = unsafe {
                        let elected = warp::elect_sync(remaining);
                        (elected, warp::ballot_sync(remaining, elected))
                    };
                    if elected {
                        // SAFETY: t < number of threads.
                        unsafe { *out.add(t) = round };
                        break;
                    }
                    remaining &= !leader;
                    round += 1;
                }
            }
        }
    }

    warpsafe::kernel! {
        /// The warp-synchronous butterfly sum of the CUDA programming guide's
        /// independent-thread-scheduling section, in global memory: each lane keeps its
        /// partial sum in `scratch[t]`, reads its partner's (`lane ^ d`) partial, and adds it,
        /// with `sync_warp` between every read and write. Every lane ends with the wrapping
        /// sum of its warp's `data`, written to `out[t]`.
        ///
        /// # Safety
        /// Blocks are a multiple of 32 threads; `data`, `scratch` and `out` hold one element
        /// per thread.
        pub unsafe fn warp_its_butterfly(data: *const u32, scratch: *mut u32, out: *mut u32) {
            let (t, _, lane) = coordinates();
            let base = t - lane as usize;
            // SAFETY: t < number of threads; every lane of the (full) warp writes its slot.
            unsafe { *scratch.add(t) = *data.add(t) };
            // SAFETY: blocks are a multiple of 32 and no lane has left: all 32 lanes arrive.
            unsafe { warp::sync_warp(u32::MAX) };
            let mut d = 16;
            while d > 0 {
                // SAFETY: base + (lane ^ d) is a thread of this warp; the barrier above
                // ordered its write before this read.
                let theirs = unsafe { *scratch.add(base + (lane ^ d) as usize) };
                // SAFETY: all 32 lanes run the same number of steps.
                unsafe { warp::sync_warp(u32::MAX) };
                // SAFETY: t < number of threads; no lane reads this slot until the next
                // barrier.
                unsafe { *scratch.add(t) = (*scratch.add(t)).wrapping_add(theirs) };
                // SAFETY: as above.
                unsafe { warp::sync_warp(u32::MAX) };
                d /= 2;
            }
            // SAFETY: t < number of threads.
            unsafe { *out.add(t) = *scratch.add(t) };
        }
    }

    warpsafe::kernel! {
        /// Even and odd lanes take different branches and shuffle only among themselves
        /// (`lane ^ 2` keeps the parity), each branch with its own mask: the two collectives
        /// run independently, as independent thread scheduling allows. `out[t]` =
        /// `data` of lane `lane ^ 2`.
        ///
        /// # Safety
        /// Blocks are a multiple of 32 threads; `data` and `out` hold one element per thread.
        pub unsafe fn warp_its_even_odd(data: *const u32, out: *mut u32) {
            let (t, _, lane) = coordinates();
            // SAFETY: t < number of threads.
            let v = unsafe { *data.add(t) };
            let moved = if lane % 2 == 0 {
                // SAFETY: all 16 even lanes of the full warp take this branch.
                unsafe { warp::shfl_xor_sync(0x5555_5555, v, 2, 32) }
            } else {
                // SAFETY: all 16 odd lanes of the full warp take this branch.
                unsafe { warp::shfl_xor_sync(0xAAAA_AAAA, v, 2, 32) }
            };
            // SAFETY: t < number of threads.
            unsafe { *out.add(t) = moved };
        }
    }

    warpsafe::kernel! {
        /// The CUDA programming guide's pattern for a partial warp: compute the mask of the
        /// lanes that have data with a full-warp ballot *before* the branch, then reduce
        /// inside the branch with that mask. Lanes with `i < n` write their warp's sum of
        /// `data[..n]` to `out[i]`.
        ///
        /// # Safety
        /// 1-D blocks of a multiple of 32 threads; `data` holds `n` elements, `out` one per
        /// thread.
        pub unsafe fn warp_its_ballot_prefix(data: *const u32, n: u32, out: *mut u32) {
            let i = thread::global_index_x();
            let has_data = i < n as u64;
            // SAFETY: blocks are a multiple of 32 and no lane has left: all 32 lanes vote.
            let mask = unsafe { warp::ballot_sync(u32::MAX, has_data) };
            if has_data {
                // SAFETY: i < n, the length of `data`.
                let v = unsafe { *data.add(i as usize) };
                // SAFETY: exactly the lanes of `mask` (the ballot above) take this branch.
                let total = unsafe { warp::reduce_add_sync(mask, v) };
                // SAFETY: i < number of threads.
                unsafe { *out.add(i as usize) = total };
            }
        }
    }

    warpsafe::kernel! {
        /// A fixpoint loop whose lanes diverge on data: the lanes of `masks[w]` hold
        /// `labels[t]` and, where `links[t] != 0` and lane `lane + 1` is a member too, are
        /// linked to that lane. Each round, every lane publishes its label in `scratch[t]`,
        /// `sync_warp`s, takes the minimum over its linked neighbours (branches that depend on
        /// the data), `sync_warp`s again, and the round repeats while any label changed. Then
        /// `out[t]` is the minimum label of the lane's linked run and `rounds[t]` the number of
        /// rounds.
        ///
        /// # Safety
        /// `labels`, `links`, `scratch`, `out` and `rounds` hold one element per thread,
        /// `masks` one per warp and names only existing lanes.
        pub unsafe fn warp_fixpoint(
            masks: *const u32,
            labels: *const u32,
            links: *const u32,
            scratch: *mut u32,
            out: *mut u32,
            rounds: *mut u32,
        ) {
            let (t, w, lane) = coordinates();
            // SAFETY: w < number of warps.
            let mask = unsafe { *masks.add(w) };
            if member(mask, lane) {
                // SAFETY: t < number of threads; t - 1 is a thread of this warp when lane > 0.
                let (mut label, link_right, link_left) = unsafe {
                    (
                        *labels.add(t),
                        lane < 31 && member(mask, lane + 1) && *links.add(t) != 0,
                        lane > 0 && member(mask, lane - 1) && *links.add(t - 1) != 0,
                    )
                };
                let mut round = 0u32;
                loop {
                    round += 1;
                    // SAFETY: t < number of threads; the barrier at the end of the previous
                    // round ordered the neighbours' reads of this slot before this write.
                    unsafe { *scratch.add(t) = label };
                    // SAFETY: every lane of `mask` runs the same number of rounds (the loop
                    // ends on a vote over `mask`).
                    unsafe { warp::sync_warp(mask) };
                    let mut best = label;
                    if link_left {
                        // SAFETY: lane - 1 is a member, which wrote t - 1 before the barrier.
                        best = best.min(unsafe { *scratch.add(t - 1) });
                    }
                    if link_right {
                        // SAFETY: lane + 1 is a member, which wrote t + 1 before the barrier.
                        best = best.min(unsafe { *scratch.add(t + 1) });
                    }
                    // SAFETY: as for the barrier above.
                    unsafe { warp::sync_warp(mask) };
                    let changed = best != label;
                    label = best;
                    // SAFETY: as for the barrier above.
                    if !unsafe { warp::any_sync(mask, changed) } {
                        break;
                    }
                }
                // SAFETY: t < number of threads.
                unsafe {
                    *out.add(t) = label;
                    *rounds.add(t) = round;
                }
            }
        }
    }
}
