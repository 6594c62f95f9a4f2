//! PTX checks for `warpsafe::group` (no GPU needed): the kernels assemble without spills,
//! every group collective is preceded by the presence check, which `--cfg
//! warpsafe_unchecked` removes, and the fast and general reduction paths use the intended
//! instructions (an unrolled butterfly for a full warp, a rank tree with `fns` otherwise).

use warpsafe_build::{Arch, Builder};
use warpsafe_tests::{assemble, kernel_body, nvptx_target_dir, test_ptx, workspace_root};

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
        // A full warp reduces with the unrolled butterfly (constant distances 1..16 over
        // mask -1); a partial last warp takes a looped butterfly over its segment.
        for d in [1, 2, 4, 8, 16] {
            let step = format!(", {d}, 31, -1;");
            assert!(
                body.lines().any(|l| l.contains("shfl.sync.bfly.b32") && l.ends_with(&step)),
                "sm_{sm}: no unrolled butterfly step {d}"
            );
        }
        // Coalesced groups (kind 7) take the general path over ranks.
        let collectives = kernel_body(ptx, "group_collectives");
        assert!(collectives.contains("fns.b32") && collectives.contains("shfl.sync.idx.b32"));
    }
}

#[test]
fn warpsafe_unchecked_removes_the_checks_and_nothing_else() {
    let out = std::env::temp_dir().join(format!("warpsafe-unchecked-{}", std::process::id()));
    let built = Builder::new(workspace_root().join("tests/kernels/group"))
        .arch(Arch::SM_90)
        .cfg("warpsafe_unchecked")
        .out_dir(&out)
        .target_dir(nvptx_target_dir().join("unchecked"))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let unchecked = std::fs::read_to_string(&built.ptx[0].path).unwrap();
    let body = kernel_body(&unchecked, "group_reduce_where");
    assert!(!body.contains("activemask"), "check still present:\n{body}");
    assert!(!body.contains("trap;") && !unchecked.contains("vprintf"), "trap path still present");
    let checked = kernel_body(test_ptx("group", 90), "group_reduce_where");
    let count = |ptx: &str, insn: &str| ptx.matches(insn).count();
    assert_eq!(count(body, "shfl.sync.bfly.b32"), count(checked, "shfl.sync.bfly.b32"));
    std::fs::remove_dir_all(&out).unwrap();
}
