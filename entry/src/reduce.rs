//! warpsafe's grid-reduction kernels, which `warpsafe_host::reduce::Reducer` launches:
//! for every built-in operator and element type, the three strategies of
//! `warpsafe::reduce::grid` and the element-wise fold of `warpsafe::reduce::copies` that
//! `warpsafe_host::collective` combines gathered copies with (declared with `warpsafe::reduce_kernels!`, whose
//! documentation gives the parameter lists). Sum, min and max exist for `i32`, `u32`,
//! `i64`, `u64`, `f32`, `f64`; and, or and xor for the four integer types.
//!
//! Names: `warpsafe_reduce_<op>_<type>_<kernel>`, kernel `two_pass`, `last_block`,
//! `cooperative` or `fold_copies`.

use warpsafe::op::{BitAnd, BitOr, BitXor, Max, Min, Sum};

warpsafe::reduce_kernels! {
    f32, Sum => warpsafe_reduce_sum_f32_two_pass, warpsafe_reduce_sum_f32_last_block, warpsafe_reduce_sum_f32_cooperative, warpsafe_reduce_sum_f32_fold_copies;
    f64, Sum => warpsafe_reduce_sum_f64_two_pass, warpsafe_reduce_sum_f64_last_block, warpsafe_reduce_sum_f64_cooperative, warpsafe_reduce_sum_f64_fold_copies;
    i32, Sum => warpsafe_reduce_sum_i32_two_pass, warpsafe_reduce_sum_i32_last_block, warpsafe_reduce_sum_i32_cooperative, warpsafe_reduce_sum_i32_fold_copies;
    u32, Sum => warpsafe_reduce_sum_u32_two_pass, warpsafe_reduce_sum_u32_last_block, warpsafe_reduce_sum_u32_cooperative, warpsafe_reduce_sum_u32_fold_copies;
    i64, Sum => warpsafe_reduce_sum_i64_two_pass, warpsafe_reduce_sum_i64_last_block, warpsafe_reduce_sum_i64_cooperative, warpsafe_reduce_sum_i64_fold_copies;
    u64, Sum => warpsafe_reduce_sum_u64_two_pass, warpsafe_reduce_sum_u64_last_block, warpsafe_reduce_sum_u64_cooperative, warpsafe_reduce_sum_u64_fold_copies;

    f32, Min => warpsafe_reduce_min_f32_two_pass, warpsafe_reduce_min_f32_last_block, warpsafe_reduce_min_f32_cooperative, warpsafe_reduce_min_f32_fold_copies;
    f64, Min => warpsafe_reduce_min_f64_two_pass, warpsafe_reduce_min_f64_last_block, warpsafe_reduce_min_f64_cooperative, warpsafe_reduce_min_f64_fold_copies;
    i32, Min => warpsafe_reduce_min_i32_two_pass, warpsafe_reduce_min_i32_last_block, warpsafe_reduce_min_i32_cooperative, warpsafe_reduce_min_i32_fold_copies;
    u32, Min => warpsafe_reduce_min_u32_two_pass, warpsafe_reduce_min_u32_last_block, warpsafe_reduce_min_u32_cooperative, warpsafe_reduce_min_u32_fold_copies;
    i64, Min => warpsafe_reduce_min_i64_two_pass, warpsafe_reduce_min_i64_last_block, warpsafe_reduce_min_i64_cooperative, warpsafe_reduce_min_i64_fold_copies;
    u64, Min => warpsafe_reduce_min_u64_two_pass, warpsafe_reduce_min_u64_last_block, warpsafe_reduce_min_u64_cooperative, warpsafe_reduce_min_u64_fold_copies;

    f32, Max => warpsafe_reduce_max_f32_two_pass, warpsafe_reduce_max_f32_last_block, warpsafe_reduce_max_f32_cooperative, warpsafe_reduce_max_f32_fold_copies;
    f64, Max => warpsafe_reduce_max_f64_two_pass, warpsafe_reduce_max_f64_last_block, warpsafe_reduce_max_f64_cooperative, warpsafe_reduce_max_f64_fold_copies;
    i32, Max => warpsafe_reduce_max_i32_two_pass, warpsafe_reduce_max_i32_last_block, warpsafe_reduce_max_i32_cooperative, warpsafe_reduce_max_i32_fold_copies;
    u32, Max => warpsafe_reduce_max_u32_two_pass, warpsafe_reduce_max_u32_last_block, warpsafe_reduce_max_u32_cooperative, warpsafe_reduce_max_u32_fold_copies;
    i64, Max => warpsafe_reduce_max_i64_two_pass, warpsafe_reduce_max_i64_last_block, warpsafe_reduce_max_i64_cooperative, warpsafe_reduce_max_i64_fold_copies;
    u64, Max => warpsafe_reduce_max_u64_two_pass, warpsafe_reduce_max_u64_last_block, warpsafe_reduce_max_u64_cooperative, warpsafe_reduce_max_u64_fold_copies;

    i32, BitAnd => warpsafe_reduce_and_i32_two_pass, warpsafe_reduce_and_i32_last_block, warpsafe_reduce_and_i32_cooperative, warpsafe_reduce_and_i32_fold_copies;
    u32, BitAnd => warpsafe_reduce_and_u32_two_pass, warpsafe_reduce_and_u32_last_block, warpsafe_reduce_and_u32_cooperative, warpsafe_reduce_and_u32_fold_copies;
    i64, BitAnd => warpsafe_reduce_and_i64_two_pass, warpsafe_reduce_and_i64_last_block, warpsafe_reduce_and_i64_cooperative, warpsafe_reduce_and_i64_fold_copies;
    u64, BitAnd => warpsafe_reduce_and_u64_two_pass, warpsafe_reduce_and_u64_last_block, warpsafe_reduce_and_u64_cooperative, warpsafe_reduce_and_u64_fold_copies;

    i32, BitOr => warpsafe_reduce_or_i32_two_pass, warpsafe_reduce_or_i32_last_block, warpsafe_reduce_or_i32_cooperative, warpsafe_reduce_or_i32_fold_copies;
    u32, BitOr => warpsafe_reduce_or_u32_two_pass, warpsafe_reduce_or_u32_last_block, warpsafe_reduce_or_u32_cooperative, warpsafe_reduce_or_u32_fold_copies;
    i64, BitOr => warpsafe_reduce_or_i64_two_pass, warpsafe_reduce_or_i64_last_block, warpsafe_reduce_or_i64_cooperative, warpsafe_reduce_or_i64_fold_copies;
    u64, BitOr => warpsafe_reduce_or_u64_two_pass, warpsafe_reduce_or_u64_last_block, warpsafe_reduce_or_u64_cooperative, warpsafe_reduce_or_u64_fold_copies;

    i32, BitXor => warpsafe_reduce_xor_i32_two_pass, warpsafe_reduce_xor_i32_last_block, warpsafe_reduce_xor_i32_cooperative, warpsafe_reduce_xor_i32_fold_copies;
    u32, BitXor => warpsafe_reduce_xor_u32_two_pass, warpsafe_reduce_xor_u32_last_block, warpsafe_reduce_xor_u32_cooperative, warpsafe_reduce_xor_u32_fold_copies;
    i64, BitXor => warpsafe_reduce_xor_i64_two_pass, warpsafe_reduce_xor_i64_last_block, warpsafe_reduce_xor_i64_cooperative, warpsafe_reduce_xor_i64_fold_copies;
    u64, BitXor => warpsafe_reduce_xor_u64_two_pass, warpsafe_reduce_xor_u64_last_block, warpsafe_reduce_xor_u64_cooperative, warpsafe_reduce_xor_u64_fold_copies;
}
