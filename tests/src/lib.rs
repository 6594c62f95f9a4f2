//! Helpers shared by warpsafe's integration tests.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use warpsafe_host::{Error, Gpu};

/// The PTX of `examples/third-party-kernels` for sm_70, built by this crate's `build.rs`.
pub const THIRD_PARTY_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/third_party_kernels.sm_70.ptx"));

/// `(crate directory name under tests/kernels, sm, PTX text, path of the optimised LLVM IR)`
/// for every test-kernel crate and architecture that `build.rs` compiled.
pub const TEST_KERNELS: &[(&str, u32, &str, &str)] = include!(concat!(env!("OUT_DIR"), "/test_kernels.rs"));

/// The PTX of test-kernel crate `name` (its directory under `tests/kernels`) for `sm_<sm>`.
///
/// # Panics
/// When that crate or architecture was not built: a test asking for it is wrong.
pub fn test_ptx(name: &str, sm: u32) -> &'static str {
    TEST_KERNELS
        .iter()
        .find(|(n, s, _, _)| *n == name && *s == sm)
        .map(|(_, _, ptx, _)| *ptx)
        .unwrap_or_else(|| panic!("no test kernels {name:?} for sm_{sm}"))
}

/// The optimised LLVM IR the PTX of test-kernel crate `name` for `sm_<sm>` came from.
///
/// # Panics
/// When that crate or architecture was not built.
pub fn test_llvm_ir(name: &str, sm: u32) -> String {
    let path = TEST_KERNELS
        .iter()
        .find(|(n, s, _, _)| *n == name && *s == sm)
        .map(|(_, _, _, ir)| *ir)
        .unwrap_or_else(|| panic!("no test kernels {name:?} for sm_{sm}"));
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// The body of kernel `name` in `ptx`: from its `.entry` line to the closing brace.
///
/// # Panics
/// When `ptx` has no such kernel.
pub fn kernel_body<'p>(ptx: &'p str, name: &str) -> &'p str {
    let start = ptx.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("no .entry {name} in the PTX"));
    let rest = &ptx[start..];
    let end = rest.find("\n}\n").map_or(rest.len(), |e| e + 3);
    &rest[..end]
}

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is inside the workspace").to_path_buf()
}

/// The nested cargo target directory that `warpsafe-host`'s build script also uses, so tests
/// that call the builder reuse its compiled `core`.
pub fn nvptx_target_dir() -> PathBuf {
    workspace_root().join("target/warpsafe-build")
}

/// The GPU, or `None` after printing a visible `skipped: no CUDA device` line when there is
/// none. With `WARPSAFE_REQUIRE_GPU=1` a missing GPU fails the test instead, so a GPU run
/// cannot pass by skipping. Any error other than "no device" fails the test.
pub fn gpu_or_skip(test: &str) -> Option<Gpu> {
    match Gpu::new() {
        Ok(gpu) => Some(gpu),
        Err(Error::NoDevice { reason }) => {
            if std::env::var("WARPSAFE_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("{test}: WARPSAFE_REQUIRE_GPU=1 but no CUDA device: {reason}");
            }
            // Straight to the process's stderr: libtest captures print! and eprint!, and
            // this line must show in a passing run.
            let _ = writeln!(std::io::stderr(), "skipped: no CUDA device ({test}: {reason})");
            None
        }
        Err(other) => panic!("{test}: opening the GPU failed: {other}"),
    }
}

/// `ptxas` from `scripts/setup` (`.tools/bin/ptxas`), or `$WARPSAFE_PTXAS`.
///
/// # Panics
/// When neither exists: the PTX checks cannot run, and must not pass silently.
pub fn ptxas() -> PathBuf {
    let path = std::env::var_os("WARPSAFE_PTXAS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".tools/bin/ptxas"));
    assert!(
        path.is_file(),
        "ptxas not found at {}: run scripts/setup (or set WARPSAFE_PTXAS)",
        path.display()
    );
    path
}

/// Assembles `ptx` for `sm_<sm>` with `ptxas -v` and returns its resource report.
///
/// # Errors
/// ptxas's own error output when it rejects the PTX.
pub fn assemble(ptx: &str, sm: u32) -> Result<String, String> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let unique = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("warpsafe-ptxas-{}-{unique}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let input = dir.join("in.ptx");
    std::fs::write(&input, ptx).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(ptxas())
        .arg(format!("-arch=sm_{sm}"))
        .arg("-v")
        .arg(&input)
        .arg("-o")
        .arg(dir.join("out.cubin"))
        .output()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&dir);
    let report = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(report)
    } else {
        Err(report)
    }
}
