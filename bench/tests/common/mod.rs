//! What the benchmarks' emulator dry-run tests share.

use std::path::PathBuf;
use std::process::Command;

/// Runs the benchmark `exe` with `--emulator`, `args` and one timed call per measurement,
/// into a fresh folder `<name>-<pid>` in the temporary directory; panics unless it
/// succeeds. Returns the folder.
pub fn dry_run(exe: &str, name: &str, args: &[&str]) -> PathBuf {
    let out = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let status = Command::new(exe)
        .arg("--emulator")
        .args(args)
        .args(["--reps", "1", "--min-calls", "1", "--min-batch-ms", "0", "--out"])
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("running {exe}: {e}"));
    assert!(status.success(), "{name}: {exe} --emulator failed: {status}");
    out
}
