//! `scan-bench --emulator`: the whole benchmark path (inputs, warpsafe's inclusive and
//! exclusive sums through `Scanner::scan_on`, select-if and select-flagged through
//! `Selector::select_on`, the timing loop, the checks, the tables, CSV and SVG) runs on the
//! CPU emulator at tiny sizes (an empty input, one element, a partial second tile, four
//! tiles of f32), and every output matches the host reference. Times on the emulator mean
//! nothing and are not looked at.

mod common;

use warpsafe_bench::data::ElemType;
use warpsafe_bench::report::Check;
use warpsafe_bench::scan::report::{self, Algorithm, WARPSAFE};

#[test]
fn dry_run_on_the_emulator_checks_every_output() {
    let out =
        common::dry_run(env!("CARGO_BIN_EXE_scan-bench"), "scan-bench-emu", &["--counts", "0,1,4097,16384"]);
    let csv = std::fs::read_to_string(out.join("scan.csv")).unwrap();
    let results = report::from_csv(&csv).unwrap();
    assert!(results.meta("gpu").is_some_and(|g| g.contains("emulator")));
    for ty in ElemType::ALL {
        for n in [0u64, 1, 4097, 16384] {
            for algorithm in Algorithm::MEASURED {
                let row = results
                    .find(WARPSAFE, algorithm, ty, n)
                    .unwrap_or_else(|| panic!("{algorithm} {ty} {n} not measured"));
                assert_eq!(row.check, Check::Ok, "{algorithm} {ty} {n}");
                // About half kept (exactly: the reference agreed on the count).
                if algorithm.selects() && n > 1000 {
                    let kept = row.selected.unwrap() as f64 / n as f64;
                    assert!((0.4..0.6).contains(&kept), "{algorithm} {ty} {n}: {kept}");
                }
            }
        }
    }
    assert_eq!(results.rows.len(), 3 * 4 * 4, "warpsafe's rows only: no CUB, no copy");
    let svg = std::fs::read_to_string(out.join("scan.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains(">\nf32 inclusive_sum\n</text>"),
        "the plot with its legend"
    );
    let text = std::fs::read_to_string(out.join("scan.txt")).unwrap();
    assert!(text.contains("#### select_flagged") && text.contains("| i32 | 4097 |"), "the tables");
    assert!(text.contains("targets (H100; warpsafe / CUB):"));
    assert!(!text.contains("WRONG RESULT") && !text.contains("FAILED"));
    std::fs::remove_dir_all(&out).ok();
}
