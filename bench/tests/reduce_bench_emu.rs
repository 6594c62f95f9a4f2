//! `reduce-bench --emulator`: the whole benchmark path (inputs, every warpsafe strategy
//! through `Reducer::reduce_on`, the roofline kernels, the checks, the table, CSV and SVG)
//! runs on the CPU emulator, and every result matches the host reference. Times on the
//! emulator mean nothing and are not looked at.

mod common;

use warpsafe_bench::data::{ElemType, Op};
use warpsafe_bench::report::{self, Check, ROOFLINE, WARPSAFE};

#[test]
fn dry_run_on_the_emulator_checks_every_result() {
    let out = common::dry_run(env!("CARGO_BIN_EXE_reduce-bench"), "reduce-bench-emu", &["--sizes", "4,10"]);
    let csv = std::fs::read_to_string(out.join("reduce-bench.csv")).unwrap();
    let results = report::from_csv(&csv).unwrap();
    assert!(results.meta("gpu").is_some_and(|g| g.contains("emulator")));
    for ty in ElemType::ALL {
        for n in [16u64, 1024] {
            for op in Op::ALL {
                for name in WARPSAFE {
                    let row =
                        results.find(name, ty, Some(op), n).unwrap_or_else(|| panic!("{name} {ty} {op} {n}"));
                    assert_eq!(row.check, Check::Ok, "{name} {ty} {op} {n}");
                }
            }
            assert!(results.find(ROOFLINE, ty, None, n).is_some(), "roofline {ty} {n}");
        }
    }
    let svg = std::fs::read_to_string(out.join("reduce-bench.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains(">\nauto\n</text>"), "the plot with auto's line");
    let text = std::fs::read_to_string(out.join("reduce-bench.txt")).unwrap();
    assert!(text.contains("targets (H100; warpsafe = auto):"));
    std::fs::remove_dir_all(&out).ok();
}
