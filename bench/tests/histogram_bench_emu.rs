//! `histogram-bench --emulator`: the whole benchmark path (inputs, warpsafe's histogram
//! through `Histogram::compute_on` with the default settings and a sweep of copies, blocks
//! per SM and copies for concentrated samples, the timing loop, the checks, the table, CSV and SVG) runs on the CPU
//! emulator at tiny sizes, and every call's counts match the host reference. Times on the
//! emulator mean nothing and are not looked at.

mod common;

use warpsafe_bench::histogram::{self, Distribution, WARPSAFE};
use warpsafe_bench::report::Check;

#[test]
fn dry_run_on_the_emulator_checks_every_output() {
    let out = common::dry_run(
        env!("CARGO_BIN_EXE_histogram-bench"),
        "histogram-bench-emu",
        &[
            "--counts",
            "0,1,4097,16384",
            "--copies",
            "1,32",
            "--blocks-per-sm",
            "2",
            "--concentrated-copies",
            "1,32",
        ],
    );
    let csv = std::fs::read_to_string(out.join("histogram.csv")).unwrap();
    let results = histogram::from_csv(&csv).unwrap();
    assert!(results.meta("gpu").is_some_and(|g| g.contains("emulator")));
    let names = [
        WARPSAFE,
        "warpsafe copies=1 blocks/SM=2 concentrated=1",
        "warpsafe copies=1 blocks/SM=2 concentrated=32",
        "warpsafe copies=32 blocks/SM=2 concentrated=1",
        "warpsafe copies=32 blocks/SM=2 concentrated=32",
    ];
    for d in Distribution::ALL {
        for n in [0u64, 1, 4097, 16384] {
            for name in names {
                let row = histogram::find(&results, name, d, n)
                    .unwrap_or_else(|| panic!("{name} {d} {n} not measured"));
                assert_eq!(row.check, Check::Ok, "{name} {d} {n}");
            }
        }
    }
    assert_eq!(results.rows.len(), 2 * 4 * names.len(), "warpsafe's rows only: no CUB, no ceiling");
    let svg = std::fs::read_to_string(out.join("histogram.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("warpsafe skewed"), "the plot with its legend");
    let text = std::fs::read_to_string(out.join("histogram.txt")).unwrap();
    assert!(text.contains("#### skewed") && text.contains("| warpsafe | 4097 |"), "the tables");
    assert!(text.contains("targets (H100; warpsafe / CUB):"));
    assert!(!text.contains("WRONG RESULT") && !text.contains("FAILED"));
    std::fs::remove_dir_all(&out).ok();
}
