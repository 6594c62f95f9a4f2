//! Helpers shared by warpsafe's integration tests.
//!
//! Tests that launch kernels run on every device [`test_devices`] gives: the CPU emulator
//! always, and the GPU when there is one. Per device, [`modules`] loads a test-kernel crate
//! once per GPU architecture asked for (sm_70 to run the fallbacks, the device's own for
//! the hardware paths), or once on the emulator, where the architecture does not matter.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use warpsafe_host::{Backend, Device, Gpu, Module, Program};

/// The PTX of `examples/third-party-kernels` for sm_70, built by this crate's `build.rs`.
pub const THIRD_PARTY_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/third_party_kernels.sm_70.ptx"));

/// `examples/third-party-kernels` as a program, as a user's host crate gets it from the
/// builder (sm_70 PTX; its kernels' host forms are the crate's statics, reached with
/// `Module::kernel`).
pub static THIRD_PARTY: Program = warpsafe_host::include_program!("third_party_kernels");

/// `(crate directory name under tests/kernels, [(sm, PTX text)])` for every test-kernel
/// crate, as `build.rs` compiled it.
const TEST_PROGRAMS: &[(&str, &[(u32, &str)])] = include!(concat!(env!("OUT_DIR"), "/test_programs.rs"));

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

/// The read-only 16-byte vector load that warpsafe's kernels use on `sm_<sm>`
/// (`warpsafe::arch::load_global_nc_16`, and its two-word form for 64-bit elements when
/// `wide`): with `prefetch` (`warpsafe::arch::Prefetch256B`) the `.L2::256B` prefetch
/// hint from sm_90 on, else (`NoPrefetch`, and every load before sm_90) without it.
pub fn read_only_vector_load(sm: u32, wide: bool, prefetch: bool) -> &'static str {
    match (wide, prefetch && sm >= 90) {
        (true, true) => "ld.global.nc.L2::256B.v2.b64",
        (true, false) => "ld.global.nc.v2.b64",
        (false, true) => "ld.global.nc.L2::256B.v4.b32",
        (false, false) => "ld.global.nc.v4.b32",
    }
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

/// Prints `line` where a passing run shows it: straight to the process's stderr, since
/// libtest captures `print!` and `eprint!`.
pub fn note(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The command that runs the ignored test `test` of the calling test executable alone in a
/// child process (`--exact --ignored --nocapture`, one thread). Tests whose kernel must
/// fail on the GPU use it: a failed launch leaves the process's CUDA context unusable, so
/// it fails in a process of its own, and the parent checks what the child printed.
pub fn child_test_command(test: &str) -> std::process::Command {
    let mut command =
        std::process::Command::new(std::env::current_exe().expect("the test executable's path"));
    command.args([test, "--exact", "--ignored", "--nocapture", "--test-threads=1"]);
    command
}

/// Runs [`child_test_command`]`(test)` with the variables `env` set, waits for it, and
/// returns what it printed to stdout (the child's `println!` lines and the device's
/// `printf` output).
///
/// # Panics
/// When the child process cannot be started.
pub fn child_test_stdout(test: &str, env: &[(&str, &str)]) -> String {
    let out =
        child_test_command(test).envs(env.iter().copied()).output().expect("starting the child test process");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The GPU, or `None` after printing a visible `skipped: no CUDA device` line when there is
/// none. With `WARPSAFE_REQUIRE_GPU=1` a missing GPU fails the test instead, so a GPU run
/// cannot pass by skipping. Any error other than "no device" fails the test.
pub fn gpu_or_skip(test: &str) -> Option<Gpu> {
    warpsafe_host::testing::test_gpu(test).and_then(|device| device.as_gpu().cloned())
}

/// The devices a kernel test runs on: `warpsafe_host::testing::test_devices` (the
/// emulator, then every GPU; a visible skip line or, with `WARPSAFE_REQUIRE_GPU=1`, a
/// failure without one).
///
/// # Panics
/// As `warpsafe_host::testing::test_devices` does.
pub fn test_devices(test: &str) -> Vec<Device> {
    warpsafe_host::testing::test_devices(test)
}

/// Every GPU, as the devices of a multi-GPU test: `warpsafe_host::testing::test_gpus`.
///
/// # Panics
/// As `warpsafe_host::testing::test_gpus` does.
pub fn gpus_or_skip(test: &str) -> Vec<Device> {
    warpsafe_host::testing::test_gpus(test)
}

/// Whether `device` is the GPU: tests use it to pick sizes (large on the GPU, small
/// enough on the emulator that the emulated suite stays fast on two cores).
pub fn on_gpu(device: &Device) -> bool {
    device.backend() == Backend::Gpu
}

/// Test-kernel crate `name` (its directory under `tests/kernels`) as a program, PTX for
/// sm_70, sm_80 and sm_90.
///
/// # Panics
/// When that crate was not built: a test asking for it is wrong.
pub fn test_program(name: &str) -> Program {
    let (name, ptx) =
        TEST_PROGRAMS.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no test kernels {name:?}"));
    Program::new(name, ptx)
}

/// Test-kernel crate `name` loaded on `device`, labelled for messages: on a GPU once per
/// architecture of `sms` that the GPU can run (`"sm_70"`, ...; one it cannot is reported
/// as skipped on stderr, visible in a passing run), on the emulator once (`"emulator"`).
///
/// # Panics
/// When loading fails.
pub fn modules(device: &Device, name: &str, sms: &[u32], test: &str) -> Vec<(String, Module)> {
    let program = test_program(name);
    let Some(gpu) = device.as_gpu() else {
        let module = device.load(&program).unwrap_or_else(|e| panic!("{test}: {e}"));
        return vec![("emulator".to_string(), module)];
    };
    let (major, minor) = gpu.compute_capability();
    let mut loaded = Vec::new();
    for &sm in sms {
        if major * 10 + minor < sm {
            note(&format!(
                "skipped: {test}: the sm_{sm} variant needs compute capability {}.{}, the device has {major}.{minor}",
                sm / 10,
                sm % 10
            ));
            continue;
        }
        let arch = program.for_arch(sm).unwrap_or_else(|| panic!("{name} was not built for sm_{sm}"));
        loaded
            .push((format!("sm_{sm}"), device.load(&arch).unwrap_or_else(|e| panic!("{test} sm_{sm}: {e}"))));
    }
    loaded
}

/// sm_70 (the fallbacks, on every GPU) and the GPU's own architecture; on the emulator,
/// the one emulator module.
pub fn common_modules(device: &Device, name: &str, test: &str) -> Vec<(String, Module)> {
    let mut sms = vec![70];
    if let Some(gpu) = device.as_gpu() {
        if gpu.ptx_arch() != 70 {
            sms.push(gpu.ptx_arch());
        }
    }
    modules(device, name, &sms, test)
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
/// Reports are kept in `target/ptxas-reports`, named by a hash of the PTX, the target and
/// the ptxas binary (its path, size and modification time, as the builder identifies its
/// LLVM tools), so the entry PTX (about 10 MB per architecture, over a minute of
/// ptxas each) is assembled once per test run although several test files check it.
///
/// # Errors
/// ptxas's own error output when it rejects the PTX.
pub fn assemble(ptx: &str, sm: u32) -> Result<String, String> {
    let ptxas = ptxas();
    let cache = workspace_root().join("target/ptxas-reports");
    let key = {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        let binary = std::fs::metadata(&ptxas).ok().map(|m| (m.len(), m.modified().ok()));
        (ptx, sm, &ptxas, binary).hash(&mut hasher);
        format!("{:016x}", hasher.finish())
    };
    for (suffix, ok) in [("ok", true), ("err", false)] {
        if let Ok(report) = std::fs::read_to_string(cache.join(format!("{key}.{suffix}"))) {
            return if ok { Ok(report) } else { Err(report) };
        }
    }
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let unique = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("warpsafe-ptxas-{}-{unique}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let input = dir.join("in.ptx");
    std::fs::write(&input, ptx).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(&ptxas)
        .arg(format!("-arch=sm_{sm}"))
        .arg("-v")
        .arg(&input)
        .arg("-o")
        .arg(dir.join("out.cubin"))
        .output()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&dir);
    let report = String::from_utf8_lossy(&out.stderr).into_owned();
    let suffix = if out.status.success() { "ok" } else { "err" };
    // Written whole under a unique name, then renamed: a reader sees all of it or none.
    // (A failure to cache only costs the next caller another run.)
    let partial = cache.join(format!("{key}.{}-{unique}", std::process::id()));
    if std::fs::create_dir_all(&cache).is_ok() && std::fs::write(&partial, &report).is_ok() {
        let _ = std::fs::rename(&partial, cache.join(format!("{key}.{suffix}")));
    }
    if out.status.success() {
        Ok(report)
    } else {
        Err(report)
    }
}

/// Declares a unit struct `$name` that applies operator `$op` to `$t` with the kernels
/// `reduce_test_kernels::grid::{$two, $last, $coop, $fold}`, as a user's own
/// [`warpsafe_host::reduce::Reduction`] (the `Reducer` and the collectives of
/// `warpsafe_host::collective` take it). The calling test crate depends on `warpsafe`
/// and `reduce-test-kernels`.
#[macro_export]
macro_rules! user_reduction {
    ($name:ident: $t:ty, $op:ident, $two:ident, $last:ident, $coop:ident, $fold:ident) => {
        /// The test crate's operator, with its kernels.
        #[derive(Clone, Copy, Default)]
        struct $name;
        impl ::warpsafe::op::Operator<$t> for $name {
            const COMMUTATIVE: bool = <$op as ::warpsafe::op::Operator<$t>>::COMMUTATIVE;
            fn identity(self) -> $t {
                ::warpsafe::op::Operator::<$t>::identity($op)
            }
            fn combine(self, a: $t, b: $t) -> $t {
                ::warpsafe::op::Operator::<$t>::combine($op, a, b)
            }
        }
        // SAFETY: the test crate's `reduce_kernels!` kernels of `$t`, each in its field.
        unsafe impl ::warpsafe_host::reduce::Reduction<$t> for $name {
            type Output = $t;
            fn output(value: $t, _len: usize) -> $t {
                value
            }
            fn kernels() -> ::warpsafe_host::reduce::ReduceKernels {
                ::warpsafe_host::reduce::ReduceKernels {
                    program: $crate::test_program("reduce"),
                    two_pass: &::reduce_test_kernels::grid::$two,
                    last_block: &::reduce_test_kernels::grid::$last,
                    cooperative: &::reduce_test_kernels::grid::$coop,
                    fold_copies: &::reduce_test_kernels::grid::$fold,
                }
            }
        }
    };
}
