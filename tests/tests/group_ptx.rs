//! PTX checks for `warpsafe::group` (no GPU needed): the kernels assemble without spills,
//! every group collective is preceded by the presence check, which only a group made
//! unchecked in code (`Group::assume_present`) leaves out, and the fast and general
//! reduction paths use the intended instructions (`redux.sync` for a `u32` sum from sm_80;
//! on sm_70 an unrolled butterfly for a full warp; a rank tree with `fns` otherwise).

use warpsafe_tests::{assemble, kernel_body, test_ptx};

#[test]
fn group_kernels_assemble_for_sm70_sm80_sm90_without_spills() {
    for sm in [70, 80, 90] {
        let report = assemble(test_ptx("group", sm), sm).unwrap_or_else(|e| panic!("sm_{sm}: {e}"));
        for line in report.lines().filter(|l| l.contains("spill")) {
            assert!(line.contains("0 bytes spill stores, 0 bytes spill loads"), "sm_{sm}: {line}");
        }
    }
}

#[test]
fn checked_groups_test_activemask_and_trap_with_a_message() {
    for sm in [70, 90] {
        let ptx = test_ptx("group", sm);
        let body = kernel_body(ptx, "group_reduce_where");
        assert!(body.contains("activemask.b32"), "sm_{sm}: no presence check");
        // The cold path is one out-of-line function: message, then trap.
        assert!(body.contains("report_missing_lanes"), "sm_{sm}: the check does not report");
        let report = &ptx[ptx.find(".func _RNvNtCs").unwrap_or(0)..];
        let report = &report[report.find("report_missing_lanes(").expect("report function")..];
        let report = &report[..report.find("\n}\n").unwrap()];
        assert!(
            report.contains("vprintf") && report.contains("trap;"),
            "sm_{sm}: report must print and trap"
        );
        // No panic machinery: the group code has no reachable panics.
        assert!(!ptx.contains("panic"), "sm_{sm}: a panic path leaked into group code");
        // A `u32` sum: one `redux.sync.add` on sm_90 (any mask); on sm_70 a full warp
        // reduces with the unrolled butterfly (constant distances 1..16 over mask -1) and a
        // partial last warp with a looped butterfly over its segment.
        if sm >= 80 {
            assert!(body.contains("redux.sync.add.s32"), "sm_{sm}: no redux.sync");
            assert!(!body.contains("shfl.sync"), "sm_{sm}: shuffles beside redux.sync");
        } else {
            for d in [1, 2, 4, 8, 16] {
                let step = format!(", {d}, 31, -1;");
                assert!(
                    body.lines().any(|l| l.contains("shfl.sync.bfly.b32") && l.ends_with(&step)),
                    "sm_{sm}: no unrolled butterfly step {d}"
                );
            }
        }
        // Coalesced groups (kind 7) take the general path over ranks.
        let collectives = kernel_body(ptx, "group_collectives");
        assert!(collectives.contains("fns.b32") && collectives.contains("shfl.sync.idx.b32"));
    }
}

/// `Group::assume_present` is the only way to drop the check, and it drops exactly the
/// check: the unchecked kernel has no `activemask`, no report and no `trap`, and the same
/// shuffles as the checked one, in the same build (no cfg flag involved).
#[test]
fn assume_present_removes_the_checks_and_nothing_else() {
    for sm in [70, 90] {
        let ptx = test_ptx("group", sm);
        let checked = kernel_body(ptx, "group_reduce_where");
        let unchecked = kernel_body(ptx, "group_reduce_where_unchecked");
        assert!(checked.contains("activemask.b32"), "sm_{sm}: the checked group has no presence check");
        assert!(checked.contains("report_missing_lanes"), "sm_{sm}: the checked group does not report");
        assert!(!unchecked.contains("activemask"), "sm_{sm}: check still present:\n{unchecked}");
        assert!(
            !unchecked.contains("report_missing_lanes") && !unchecked.contains("trap;"),
            "sm_{sm}: trap path still present:\n{unchecked}"
        );
        let count = |body: &str, insn: &str| body.matches(insn).count();
        for insn in ["shfl.sync.bfly.b32", "shfl.sync.idx.b32", "redux.sync"] {
            assert_eq!(count(unchecked, insn), count(checked, insn), "sm_{sm}: {insn}");
        }
    }
}
