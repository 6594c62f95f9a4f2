//! `segreduce-bench --emulator`: the whole benchmark path (inputs, segment patterns,
//! warpsafe's `reduce_fixed_on` and `reduce_offsets_on` with the automatic strategy, the
//! 4-lane tiles and the balanced strategy (on the fixed patterns too), the read ceiling's roofline kernels, the timing loop, the checks, the
//! tables, CSV and SVG) runs on the CPU emulator at tiny sizes (one element, 4097 elements, which
//! no length but 1 divides, and 2^14), and every output matches the host
//! reference. Times on the emulator mean nothing and are not looked at.

mod common;

use warpsafe_bench::report::Check;
use warpsafe_bench::segmented::data::{self, Pattern};
use warpsafe_bench::segmented::report::{self, CEILING};

#[test]
fn dry_run_on_the_emulator_checks_every_output() {
    let out = common::dry_run(
        env!("CARGO_BIN_EXE_segreduce-bench"),
        "segreduce-bench-emu",
        &["--counts", "1,4097,16384", "--strategy", "auto,tile4,balanced"],
    );
    let csv = std::fs::read_to_string(out.join("segmented.csv")).unwrap();
    let results = report::from_csv(&csv).unwrap();
    assert!(results.meta("gpu").is_some_and(|g| g.contains("emulator")));
    let mut points = 0;
    for n in [1u64, 4097, 16384] {
        for pattern in Pattern::DEFAULT {
            if !pattern.fits(n) {
                assert!(results.find("auto", pattern, n).is_none(), "{pattern} {n} is skipped");
                continue;
            }
            points += 1;
            let segments = match pattern {
                Pattern::Fixed(len) => n.div_ceil(len),
                Pattern::PowerLaw => data::power_law_offsets(n).len() as u64 - 1,
            };
            for name in ["auto", "tile4", "balanced"] {
                let row = results.find(name, pattern, n).unwrap_or_else(|| panic!("{name} {pattern} {n}"));
                assert_eq!(row.check, Check::Ok, "{name} {pattern} {n}");
                assert_eq!(row.segments, segments, "{name} {pattern} {n}");
            }
            let ceiling =
                results.find(CEILING, pattern, n).unwrap_or_else(|| panic!("ceiling {pattern} {n}"));
            assert_eq!(ceiling.check, Check::NotChecked);
        }
    }
    assert_eq!(points, 2 + 6 + 6);
    assert_eq!(results.rows.len(), points * 4, "three strategies and the ceiling; no CUB");
    for len in [1, 8, 32, 128] {
        let detail = &results.find("auto", Pattern::Fixed(len), 16384).unwrap().detail;
        assert_eq!(detail, "strategy thread", "auto reads f32 of length {len} in warp rows");
    }
    let detail = &results.find("auto", Pattern::Fixed(1024), 16384).unwrap().detail;
    assert_eq!(detail, "strategy warp", "past 512 bytes auto picks by the average length");
    let detail = &results.find("auto", Pattern::PowerLaw, 16384).unwrap().detail;
    assert_eq!(detail, "strategy balanced", "and the balanced strategy for offsets");
    let svg = std::fs::read_to_string(out.join("segmented.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains(">\npower-law\n</text>"), "the plot with its legend");
    let text = std::fs::read_to_string(out.join("segmented.txt")).unwrap();
    assert!(text.contains("#### f32 sum, L=1024") && text.contains("| 4097 |"), "the tables");
    assert!(text.contains("targets (H100; warpsafe = auto):"));
    assert!(!text.contains("WRONG RESULT") && !text.contains("FAILED"));
    std::fs::remove_dir_all(&out).ok();
}
