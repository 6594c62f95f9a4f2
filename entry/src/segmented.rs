//! warpsafe's segmented-reduce kernels, which `warpsafe_host::segmented::SegmentedReducer`
//! launches (declared with `warpsafe::segmented_reduce_kernels!`, whose documentation gives
//! the parameter list): sum, min and max over `i32`, `u32`, `i64`, `u64`, `f32`, `f64`,
//! five strategies each, and the three kernels of the balanced strategy.
//!
//! Names: `warpsafe_segreduce_<op>_<type>_<strategy>`, strategy `thread`, `tile4`,
//! `tile16`, `warp` or `block`, or `batches`, `chunks` and `small` (balanced).

use warpsafe::op::{Max, Min, Sum};

warpsafe::segmented_reduce_kernels! {
    f32, Sum => warpsafe_segreduce_sum_f32_thread, warpsafe_segreduce_sum_f32_tile4, warpsafe_segreduce_sum_f32_tile16, warpsafe_segreduce_sum_f32_warp, warpsafe_segreduce_sum_f32_block, warpsafe_segreduce_sum_f32_batches, warpsafe_segreduce_sum_f32_chunks, warpsafe_segreduce_sum_f32_small;
    f64, Sum => warpsafe_segreduce_sum_f64_thread, warpsafe_segreduce_sum_f64_tile4, warpsafe_segreduce_sum_f64_tile16, warpsafe_segreduce_sum_f64_warp, warpsafe_segreduce_sum_f64_block, warpsafe_segreduce_sum_f64_batches, warpsafe_segreduce_sum_f64_chunks, warpsafe_segreduce_sum_f64_small;
    i32, Sum => warpsafe_segreduce_sum_i32_thread, warpsafe_segreduce_sum_i32_tile4, warpsafe_segreduce_sum_i32_tile16, warpsafe_segreduce_sum_i32_warp, warpsafe_segreduce_sum_i32_block, warpsafe_segreduce_sum_i32_batches, warpsafe_segreduce_sum_i32_chunks, warpsafe_segreduce_sum_i32_small;
    u32, Sum => warpsafe_segreduce_sum_u32_thread, warpsafe_segreduce_sum_u32_tile4, warpsafe_segreduce_sum_u32_tile16, warpsafe_segreduce_sum_u32_warp, warpsafe_segreduce_sum_u32_block, warpsafe_segreduce_sum_u32_batches, warpsafe_segreduce_sum_u32_chunks, warpsafe_segreduce_sum_u32_small;
    i64, Sum => warpsafe_segreduce_sum_i64_thread, warpsafe_segreduce_sum_i64_tile4, warpsafe_segreduce_sum_i64_tile16, warpsafe_segreduce_sum_i64_warp, warpsafe_segreduce_sum_i64_block, warpsafe_segreduce_sum_i64_batches, warpsafe_segreduce_sum_i64_chunks, warpsafe_segreduce_sum_i64_small;
    u64, Sum => warpsafe_segreduce_sum_u64_thread, warpsafe_segreduce_sum_u64_tile4, warpsafe_segreduce_sum_u64_tile16, warpsafe_segreduce_sum_u64_warp, warpsafe_segreduce_sum_u64_block, warpsafe_segreduce_sum_u64_batches, warpsafe_segreduce_sum_u64_chunks, warpsafe_segreduce_sum_u64_small;

    f32, Min => warpsafe_segreduce_min_f32_thread, warpsafe_segreduce_min_f32_tile4, warpsafe_segreduce_min_f32_tile16, warpsafe_segreduce_min_f32_warp, warpsafe_segreduce_min_f32_block, warpsafe_segreduce_min_f32_batches, warpsafe_segreduce_min_f32_chunks, warpsafe_segreduce_min_f32_small;
    f64, Min => warpsafe_segreduce_min_f64_thread, warpsafe_segreduce_min_f64_tile4, warpsafe_segreduce_min_f64_tile16, warpsafe_segreduce_min_f64_warp, warpsafe_segreduce_min_f64_block, warpsafe_segreduce_min_f64_batches, warpsafe_segreduce_min_f64_chunks, warpsafe_segreduce_min_f64_small;
    i32, Min => warpsafe_segreduce_min_i32_thread, warpsafe_segreduce_min_i32_tile4, warpsafe_segreduce_min_i32_tile16, warpsafe_segreduce_min_i32_warp, warpsafe_segreduce_min_i32_block, warpsafe_segreduce_min_i32_batches, warpsafe_segreduce_min_i32_chunks, warpsafe_segreduce_min_i32_small;
    u32, Min => warpsafe_segreduce_min_u32_thread, warpsafe_segreduce_min_u32_tile4, warpsafe_segreduce_min_u32_tile16, warpsafe_segreduce_min_u32_warp, warpsafe_segreduce_min_u32_block, warpsafe_segreduce_min_u32_batches, warpsafe_segreduce_min_u32_chunks, warpsafe_segreduce_min_u32_small;
    i64, Min => warpsafe_segreduce_min_i64_thread, warpsafe_segreduce_min_i64_tile4, warpsafe_segreduce_min_i64_tile16, warpsafe_segreduce_min_i64_warp, warpsafe_segreduce_min_i64_block, warpsafe_segreduce_min_i64_batches, warpsafe_segreduce_min_i64_chunks, warpsafe_segreduce_min_i64_small;
    u64, Min => warpsafe_segreduce_min_u64_thread, warpsafe_segreduce_min_u64_tile4, warpsafe_segreduce_min_u64_tile16, warpsafe_segreduce_min_u64_warp, warpsafe_segreduce_min_u64_block, warpsafe_segreduce_min_u64_batches, warpsafe_segreduce_min_u64_chunks, warpsafe_segreduce_min_u64_small;

    f32, Max => warpsafe_segreduce_max_f32_thread, warpsafe_segreduce_max_f32_tile4, warpsafe_segreduce_max_f32_tile16, warpsafe_segreduce_max_f32_warp, warpsafe_segreduce_max_f32_block, warpsafe_segreduce_max_f32_batches, warpsafe_segreduce_max_f32_chunks, warpsafe_segreduce_max_f32_small;
    f64, Max => warpsafe_segreduce_max_f64_thread, warpsafe_segreduce_max_f64_tile4, warpsafe_segreduce_max_f64_tile16, warpsafe_segreduce_max_f64_warp, warpsafe_segreduce_max_f64_block, warpsafe_segreduce_max_f64_batches, warpsafe_segreduce_max_f64_chunks, warpsafe_segreduce_max_f64_small;
    i32, Max => warpsafe_segreduce_max_i32_thread, warpsafe_segreduce_max_i32_tile4, warpsafe_segreduce_max_i32_tile16, warpsafe_segreduce_max_i32_warp, warpsafe_segreduce_max_i32_block, warpsafe_segreduce_max_i32_batches, warpsafe_segreduce_max_i32_chunks, warpsafe_segreduce_max_i32_small;
    u32, Max => warpsafe_segreduce_max_u32_thread, warpsafe_segreduce_max_u32_tile4, warpsafe_segreduce_max_u32_tile16, warpsafe_segreduce_max_u32_warp, warpsafe_segreduce_max_u32_block, warpsafe_segreduce_max_u32_batches, warpsafe_segreduce_max_u32_chunks, warpsafe_segreduce_max_u32_small;
    i64, Max => warpsafe_segreduce_max_i64_thread, warpsafe_segreduce_max_i64_tile4, warpsafe_segreduce_max_i64_tile16, warpsafe_segreduce_max_i64_warp, warpsafe_segreduce_max_i64_block, warpsafe_segreduce_max_i64_batches, warpsafe_segreduce_max_i64_chunks, warpsafe_segreduce_max_i64_small;
    u64, Max => warpsafe_segreduce_max_u64_thread, warpsafe_segreduce_max_u64_tile4, warpsafe_segreduce_max_u64_tile16, warpsafe_segreduce_max_u64_warp, warpsafe_segreduce_max_u64_block, warpsafe_segreduce_max_u64_batches, warpsafe_segreduce_max_u64_chunks, warpsafe_segreduce_max_u64_small;
}
