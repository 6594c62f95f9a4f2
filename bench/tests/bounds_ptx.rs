//! Where the bounds checks of safe kernels end up in the PTX (sm_90, as `bounds-checks`
//! times them): in a grid-stride loop bounded by the view's own length LLVM proves every
//! index and removes the check; an index bounded by another length keeps one compare and
//! a branch to the cold reporting call per access. The second case is what shows that the
//! search below finds a check when there is one.

/// The benchmark kernels' PTX for sm_90, as `build.rs` compiled it.
const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/warpsafe_bench_kernels.sm_90.ptx"));

/// The body of kernel `name`: from its `.entry` line to the closing brace.
fn body(name: &str) -> &'static str {
    let start = PTX.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("no .entry {name}"));
    let rest = &PTX[start..];
    &rest[..rest.find("\n}\n").map_or(rest.len(), |e| e + 3)]
}

/// Call sites of the out-of-bounds report (`warpsafe::global::out_of_bounds`) in `name`.
fn bounds_reports(name: &str) -> usize {
    body(name).lines().filter(|l| l.contains("call") && l.contains("out_of_bounds")).count()
}

#[test]
fn checks_bounded_by_the_views_own_length_are_removed() {
    // sum: `input[i]` for i in grid_stride(input.len()).
    assert_eq!(bounds_reports("bench_sum_checked"), 0, "{}", body("bench_sum_checked"));
    assert_eq!(bounds_reports("bench_sum_unchecked"), 0);
    // The checked loop is the unchecked one: same compares, same branches.
    let count = |name: &str, what: &str| body(name).matches(what).count();
    for what in ["setp.", "bra", "ld."] {
        assert_eq!(count("bench_sum_checked", what), count("bench_sum_unchecked", what), "{what}");
    }
}

#[test]
fn a_check_that_cannot_be_proven_stays_and_is_one_branch() {
    // scale: `x[i]` for i in grid_stride(y.len()) cannot be proven; `y.write(i, ..)` can.
    assert_eq!(bounds_reports("bench_scale_checked"), 1, "{}", body("bench_scale_checked"));
    assert_eq!(bounds_reports("bench_scale_unchecked"), 0);
    let count = |name: &str, what: &str| body(name).matches(what).count();
    assert_eq!(count("bench_scale_checked", "setp."), count("bench_scale_unchecked", "setp.") + 1);
}
