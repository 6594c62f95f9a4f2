//! warpsafe's device-wide scan and selection kernels, which `warpsafe_host::scan`'s
//! `Scanner` and `Selector` launch (declared with `warpsafe::scan_kernels!` and
//! `warpsafe::select_kernels!`, whose documentation gives the parameter lists).
//!
//! Scans: sum, min and max over `i32`, `u32`, `i64`, `u64`, `f32`, `f64`, named
//! `warpsafe_scan_<op>_<type>`. Selections: by `LessThan` and `GreaterThan` over the same
//! types (the flagged form and partition are modes of the same kernels), named
//! `warpsafe_select_<less|greater>_<type>`.

use warpsafe::op::{Max, Min, Sum};
use warpsafe::scan::select::{GreaterThan, LessThan};

warpsafe::scan_kernels! {
    f32, Sum => warpsafe_scan_sum_f32;
    f64, Sum => warpsafe_scan_sum_f64;
    i32, Sum => warpsafe_scan_sum_i32;
    u32, Sum => warpsafe_scan_sum_u32;
    i64, Sum => warpsafe_scan_sum_i64;
    u64, Sum => warpsafe_scan_sum_u64;

    f32, Min => warpsafe_scan_min_f32;
    f64, Min => warpsafe_scan_min_f64;
    i32, Min => warpsafe_scan_min_i32;
    u32, Min => warpsafe_scan_min_u32;
    i64, Min => warpsafe_scan_min_i64;
    u64, Min => warpsafe_scan_min_u64;

    f32, Max => warpsafe_scan_max_f32;
    f64, Max => warpsafe_scan_max_f64;
    i32, Max => warpsafe_scan_max_i32;
    u32, Max => warpsafe_scan_max_u32;
    i64, Max => warpsafe_scan_max_i64;
    u64, Max => warpsafe_scan_max_u64;
}

warpsafe::select_kernels! {
    f32, LessThan<f32> => warpsafe_select_less_f32;
    f64, LessThan<f64> => warpsafe_select_less_f64;
    i32, LessThan<i32> => warpsafe_select_less_i32;
    u32, LessThan<u32> => warpsafe_select_less_u32;
    i64, LessThan<i64> => warpsafe_select_less_i64;
    u64, LessThan<u64> => warpsafe_select_less_u64;

    f32, GreaterThan<f32> => warpsafe_select_greater_f32;
    f64, GreaterThan<f64> => warpsafe_select_greater_f64;
    i32, GreaterThan<i32> => warpsafe_select_greater_i32;
    u32, GreaterThan<u32> => warpsafe_select_greater_u32;
    i64, GreaterThan<i64> => warpsafe_select_greater_i64;
    u64, GreaterThan<u64> => warpsafe_select_greater_u64;
}
