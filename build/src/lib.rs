//! # warpsafe-build
//!
//! Compiles a Rust kernel crate to PTX with rustc's own `nvptx64-nvidia-cuda` target, for
//! use from a `build.rs` (as a build-dependency) or from a test.
//!
//! rustc's default link step for that target calls a linker that is not available
//! everywhere, so this crate does the link itself with the LLVM tools that rustup's
//! `llvm-tools` component ships:
//!
//! 0. The pinned nightly ([`PINNED_TOOLCHAIN`], the one this repository's
//!    `rust-toolchain.toml` names) is found through rustup (`rustup which`) and installed
//!    with `rust-src` and `llvm-tools` when it is missing. The build that calls the
//!    builder may be on any toolchain, stable included: the nested build runs that
//!    nightly's own `cargo` and `rustc`, in an environment cleaned of the outer build's
//!    `CARGO`, `RUSTC`, `RUSTUP_TOOLCHAIN`, wrappers and flags.
//! 1. `cargo build --lib --release --target nvptx64-nvidia-cuda -Zbuild-std=core` with
//!    `-C target-cpu=sm_XX -C target-feature=+ptxYY`, in a target directory of its own (so
//!    that the nested cargo never waits on the outer one's lock). On this target every
//!    object file inside an rlib is LLVM bitcode.
//! 2. `llvm-link` of the bitcode of every nvptx rlib (the kernel crate, its dependencies,
//!    `core`, `compiler_builtins`), then of a small IR module of the builder's own that
//!    places the block's shared memory (the dynamic window and every `shared!` array the
//!    crates declare) in the `.shared` address space (`shared_memory_ir`: what Rust cannot
//!    say).
//! 3. `opt`: internalize every symbol except the kernel entry points (functions with the
//!    `ptx_kernel` calling convention, that is `extern "ptx-kernel"`), then `-O3`, which
//!    drops everything the kernels do not reach.
//! 4. `llc -mcpu=sm_XX -mattr=+ptxYY` emits the PTX; entries whose launch bounds the
//!    crates announce (`// warpsafe-launch-bounds NAME THREADS BLOCKS` in module-level
//!    asm, warpsafe's `__warpsafe_launch_bounds!`) get `.maxntid THREADS, 1, 1` and
//!    `.minnctapersm BLOCKS` (`with_launch_bounds`: LLVM has them only as `nvvm`
//!    metadata, which Rust cannot attach).
//!
//! Steps 2-4 take tens of seconds for a large kernel crate, so their output is kept in a
//! content-addressed cache inside the nested target directory,
//! `<target dir>/sm_XX/linked/<key>.{ptx,ll,kernels}`. The key is a SHA-256 of everything
//! that output depends on: the architecture and PTX version, the bytes of every rlib
//! linked (read once, and linked from those same bytes), the `--cfg`s, the kernel crate's
//! name, the toolchain (its name, `rustc -vV`, its sysroot, and the path, size and
//! modification time of each LLVM tool) and this builder's own version and source. A build
//! whose key is there copies the files instead of linking; any other links and then adds
//! its files (written under temporary names and renamed, so a concurrent build never sees
//! half a file). The cache gains one entry per distinct build and is never pruned:
//! `rm -rf <target dir>/sm_*/linked` at any time costs only the next build's link steps.
//! Several outer builds (a workspace's, a `trybuild` run's, a copy of an app's) can share
//! one nested target directory, and so one cache: see [`TARGET_DIR_VARIABLE`].
//!
//! ```no_run
//! // build.rs of a host crate whose kernels live in ../my-kernels
//! let built = warpsafe_build::Builder::new("../my-kernels")
//!     .arch(warpsafe_build::Arch::SM_70)
//!     .build()
//!     .expect("kernel crate failed to build");
//! // OUT_DIR/my_kernels.sm_70.ptx, and OUT_DIR/my_kernels.program.rs for the host:
//! // static MY_KERNELS: warpsafe_host::Program = warpsafe_host::include_program!("my_kernels");
//! # let _ = built;
//! ```
//!
//! The default architecture is sm_70: its PTX runs on every Volta-or-newer GPU, the driver
//! compiling it for the GPU at load time. Name several architectures to get one PTX file
//! each; device code can select paths per architecture with
//! `#[cfg(target_feature = "sm_80")]` (rustc sets every `sm_NN` feature up to the target).

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The rustc target that kernels are compiled for.
pub const NVPTX_TARGET: &str = "nvptx64-nvidia-cuda";

/// The nightly toolchain kernels are compiled with: `-Zbuild-std` and the `ptx-kernel`
/// ABI need a nightly, and this one is the one warpsafe's device crate is tested on (the
/// repository's `rust-toolchain.toml` names the same; a test checks that they agree).
pub const PINNED_TOOLCHAIN: &str = "nightly-2026-05-20";

/// Set to `1` to make a missing toolchain an error (with the command that installs it)
/// instead of installing it.
pub const NO_INSTALL_VARIABLE: &str = "WARPSAFE_BUILD_NO_INSTALL";

/// Set to a directory to make it the nested cargo's target directory of every
/// [`Builder`] that is not given one with [`Builder::target_dir`]. Outer builds that point
/// it at the same directory share the compiled `core` and kernel crates and the link
/// cache. A relative path is taken from the current directory, which in a build script is
/// the package's root.
pub const TARGET_DIR_VARIABLE: &str = "WARPSAFE_BUILD_TARGET_DIR";

/// A GPU architecture (`sm_XX`) to emit PTX for, with the PTX ISA version used for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arch {
    sm: u32,
    ptx: u32,
}

/// `(sm, lowest PTX ISA version that LLVM accepts for it and that rustc supports)`.
/// rustc's nvptx target starts at PTX 7.0; sm_90 gets 8.0 for `elect.sync`.
const KNOWN_ARCHS: &[(u32, u32)] =
    &[(70, 70), (72, 70), (75, 70), (80, 70), (86, 71), (87, 74), (89, 78), (90, 80), (100, 86), (120, 87)];

impl Arch {
    /// Volta: the oldest architecture warpsafe supports (independent thread scheduling
    /// and the `.sync` warp collectives start here).
    pub const SM_70: Arch = Arch { sm: 70, ptx: 70 };
    /// Ampere A100: adds `redux.sync`.
    pub const SM_80: Arch = Arch { sm: 80, ptx: 70 };
    /// Hopper H100/H200: adds `elect.sync` and clusters.
    pub const SM_90: Arch = Arch { sm: 90, ptx: 80 };

    /// The architecture `sm_<sm>`, e.g. `Arch::new(86)`.
    ///
    /// # Errors
    /// [`BuildError::ArchTooOld`] below sm_70 (no independent thread scheduling, and the
    /// `.sync` collectives behave differently); [`BuildError::UnknownArch`] for a number
    /// that is not an NVIDIA architecture this builder knows.
    pub fn new(sm: u32) -> Result<Arch, BuildError> {
        if sm < 70 {
            return Err(BuildError::ArchTooOld { sm });
        }
        KNOWN_ARCHS
            .iter()
            .find(|(known, _)| *known == sm)
            .map(|&(sm, ptx)| Arch { sm, ptx })
            .ok_or(BuildError::UnknownArch { sm })
    }

    /// The `XX` of `sm_XX`.
    pub fn sm(self) -> u32 {
        self.sm
    }

    /// The PTX ISA version, times ten (70 is PTX 7.0).
    pub fn ptx_version(self) -> u32 {
        self.ptx
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}", self.sm)
    }
}

/// Why a kernel crate could not be turned into PTX. Each message names the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Asked for an architecture older than sm_70.
    #[error(
        "sm_{sm} is not supported: warpsafe needs sm_70 (Volta) or newer, where warps have \
         independent thread scheduling and the .sync collectives; ask for Arch::SM_70 or later"
    )]
    ArchTooOld {
        /// The architecture asked for.
        sm: u32,
    },
    /// Asked for an architecture number that does not exist or is not known here.
    #[error("sm_{sm} is not an architecture warpsafe-build knows; known: {}", known_archs())]
    UnknownArch {
        /// The architecture asked for.
        sm: u32,
    },
    /// The kernel crate's manifest was not found.
    #[error("no kernel crate at {}: expected a Cargo.toml there", path.display())]
    NoKernelCrate {
        /// The path given to [`Builder::new`].
        path: PathBuf,
    },
    /// rustup, which runs the pinned nightly, is not on the `PATH`.
    #[error(
        "warpsafe-build runs the nightly toolchain {toolchain} through rustup, but `rustup` \
         could not be run ({source}); install rustup (https://rustup.rs) and then \
         `rustup toolchain install {toolchain} --profile minimal --component rust-src --component llvm-tools`"
    )]
    NoRustup {
        /// The toolchain that was wanted.
        toolchain: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The pinned nightly is not installed and could not be installed.
    #[error(
        "the nightly toolchain {toolchain} that compiles kernels is not installed{}; install it with \
         `rustup toolchain install {toolchain} --profile minimal --component rust-src --component llvm-tools` \
         (it needs the network once)",
        if detail.is_empty() { String::new() } else { format!(" ({detail})") }
    )]
    MissingToolchain {
        /// The toolchain.
        toolchain: String,
        /// What rustup said, or why it was not asked to install.
        detail: String,
    },
    /// The toolchain lacks the standard library's source, needed by `-Zbuild-std=core`.
    #[error(
        "the Rust toolchain at {} has no rust-src component (needed to build core for \
         nvptx64-nvidia-cuda): run `rustup component add rust-src --toolchain {}`",
        sysroot.display(),
        toolchain_name(sysroot)
    )]
    MissingRustSrc {
        /// The toolchain's sysroot.
        sysroot: PathBuf,
    },
    /// The toolchain lacks `llvm-link`, `llvm-dis`, `opt` or `llc`.
    #[error(
        "the Rust toolchain at {} has no {tool} (component llvm-tools, needed to link \
         kernels into PTX): run `rustup component add llvm-tools --toolchain {}`",
        sysroot.display(),
        toolchain_name(sysroot)
    )]
    MissingLlvmTools {
        /// The toolchain's sysroot.
        sysroot: PathBuf,
        /// The tool that is missing.
        tool: &'static str,
    },
    /// A program could not be started at all.
    #[error("could not run {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The kernel crate (or one of its dependencies) did not compile for nvptx.
    #[error(
        "the kernel crate at {} does not compile for nvptx64-nvidia-cuda ({arch}):\n{diagnostics}",
        path.display()
    )]
    KernelCompile {
        /// The kernel crate.
        path: PathBuf,
        /// The architecture being built.
        arch: Arch,
        /// rustc's and cargo's error messages, rendered.
        diagnostics: String,
    },
    /// An LLVM tool failed on the linked bitcode.
    #[error("{tool} failed while building PTX for {arch}:\n{stderr}")]
    LlvmTool {
        /// `llvm-link`, `llvm-dis`, `opt` or `llc`.
        tool: &'static str,
        /// The architecture being built.
        arch: Arch,
        /// The tool's error output.
        stderr: String,
    },
    /// The kernel crate compiled, but defines no `extern "ptx-kernel"` function.
    #[error(
        "the kernel crate at {} defines no kernel: declare at least one \
         `#[no_mangle] pub unsafe extern \"ptx-kernel\" fn`",
        path.display()
    )]
    NoKernels {
        /// The kernel crate.
        path: PathBuf,
    },
    /// The linked crates' shared memory and this builder disagree: a `shared!` marker it
    /// cannot read or a function it does not define (a `warpsafe` of another version than
    /// this builder), or two declarations with the same id (two `shared!` arrays of the
    /// same name, type and length declared by one macro invocation: rename one).
    #[error("shared memory of the kernel crate at {}: {problem}", path.display())]
    SharedMemory {
        /// The kernel crate.
        path: PathBuf,
        /// What is wrong, with the marker line.
        problem: String,
    },
    /// A launch-bounds marker the builder cannot read, or one for an entry the PTX lacks.
    #[error("launch bounds of the kernel crate at {}: {problem}", path.display())]
    LaunchBounds {
        /// The kernel crate.
        path: PathBuf,
        /// What is wrong, with the marker line.
        problem: String,
    },
    /// Neither an output directory was set nor `OUT_DIR` (outside a build script).
    #[error("no output directory: call .out_dir(..) when not running inside a build script")]
    NoOutDir,
    /// Reading or writing a file failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The toolchain a sysroot belongs to (its directory name under rustup's `toolchains`).
fn toolchain_name(sysroot: &Path) -> String {
    sysroot.file_name().map_or_else(|| PINNED_TOOLCHAIN.to_string(), |n| n.to_string_lossy().into_owned())
}

fn known_archs() -> String {
    KNOWN_ARCHS.iter().map(|(sm, _)| format!("sm_{sm}")).collect::<Vec<_>>().join(", ")
}

fn io_err<'p>(action: &'static str, path: &'p Path) -> impl FnOnce(std::io::Error) -> BuildError + 'p {
    move |source| BuildError::Io { action, path: path.to_path_buf(), source }
}

/// The PTX of one kernel crate for one architecture.
#[derive(Clone, Debug)]
pub struct Ptx {
    /// The architecture it was built for.
    pub arch: Arch,
    /// The PTX file.
    pub path: PathBuf,
    /// The optimised LLVM IR the PTX was emitted from (for codegen checks). Taken from the
    /// link cache, its `; ModuleID` comment names the scratch file of the build that linked it.
    pub llvm_ir: PathBuf,
    /// The kernel entry points, sorted by name.
    pub kernels: Vec<String>,
}

/// What [`Builder::build`] produced: one [`Ptx`] per architecture, in the order asked.
#[derive(Clone, Debug)]
pub struct Built {
    /// One entry per architecture.
    pub ptx: Vec<Ptx>,
}

impl Built {
    /// The PTX built for `arch`, if it was asked for.
    pub fn for_arch(&self, arch: Arch) -> Option<&Ptx> {
        self.ptx.iter().find(|p| p.arch == arch)
    }
}

/// Writes `<out_dir>/<crate>.program.rs`: the kernel crate as a `warpsafe_host::Program`
/// expression, every PTX file included by absolute path, oldest architecture first, for
/// `warpsafe_host::include_program!`.
fn write_program(out_dir: &Path, crate_path: &Path, built: &[Ptx]) -> Result<(), BuildError> {
    let Some(first) = built.first() else { return Ok(()) };
    let stem = first
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('.').next())
        .unwrap_or("kernels");
    let package =
        crate_path.file_name().map_or_else(|| stem.to_string(), |n| n.to_string_lossy().into_owned());
    let mut sorted: Vec<&Ptx> = built.iter().collect();
    sorted.sort_by_key(|p| p.arch);
    let mut text = format!("::warpsafe_host::Program::new({package:?}, &[\n");
    for ptx in sorted {
        text.push_str(&format!("    ({}, ::core::include_str!({:?})),\n", ptx.arch.sm(), ptx.path.display()));
    }
    text.push_str("])\n");
    let path = out_dir.join(format!("{stem}.program.rs"));
    fs::write(&path, text).map_err(io_err("writing", &path))
}

/// Compiles one kernel crate to PTX. See the crate docs for the steps.
#[derive(Clone, Debug)]
pub struct Builder {
    crate_path: PathBuf,
    archs: Vec<Arch>,
    cfgs: Vec<String>,
    out_dir: Option<PathBuf>,
    target_dir: Option<PathBuf>,
    toolchain: String,
    install_missing: bool,
}

impl Builder {
    /// A builder for the kernel crate whose `Cargo.toml` is in `crate_path` (relative
    /// paths are taken from the current directory, which is the package root inside a
    /// build script). It builds sm_70 unless told otherwise.
    pub fn new(crate_path: impl Into<PathBuf>) -> Builder {
        Builder {
            crate_path: crate_path.into(),
            archs: Vec::new(),
            cfgs: Vec::new(),
            out_dir: None,
            target_dir: None,
            toolchain: PINNED_TOOLCHAIN.to_string(),
            install_missing: std::env::var(NO_INSTALL_VARIABLE).as_deref() != Ok("1"),
        }
    }

    /// Whether a missing toolchain (or its `rust-src` and `llvm-tools` components) is
    /// installed with rustup (the default, unless `$WARPSAFE_BUILD_NO_INSTALL` is `1`) or
    /// is an error that names the command to run.
    pub fn install_missing(mut self, install: bool) -> Builder {
        self.install_missing = install;
        self
    }

    /// The rustup toolchain that compiles the kernels ([`PINNED_TOOLCHAIN`] by default):
    /// a nightly with `-Zbuild-std` and the `ptx-kernel` ABI.
    pub fn toolchain(mut self, name: impl Into<String>) -> Builder {
        self.toolchain = name.into();
        self
    }

    /// Adds an architecture to build for (may be called several times).
    pub fn arch(mut self, arch: Arch) -> Builder {
        if !self.archs.contains(&arch) {
            self.archs.push(arch);
        }
        self
    }

    /// Replaces the architectures to build for.
    pub fn archs(mut self, archs: &[Arch]) -> Builder {
        self.archs.clear();
        archs.iter().fold(self, |b, &a| b.arch(a))
    }

    /// Passes `--cfg <name>` to every crate of the nvptx build (a kernel crate's own
    /// configuration). Give such a build its own [`target_dir`](Builder::target_dir) if it
    /// is built often: a different cfg rebuilds everything, `core` included.
    pub fn cfg(mut self, name: impl Into<String>) -> Builder {
        self.cfgs.push(name.into());
        self
    }

    /// Where the `.ptx` (and `.ll`) files go. Defaults to `OUT_DIR`, in which case the
    /// builder also prints `cargo:rerun-if-changed` lines for every local crate the kernel
    /// crate is built from.
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.out_dir = Some(dir.into());
        self
    }

    /// The nested cargo's target directory (one subdirectory per architecture, each with
    /// its link cache under `linked/`, see the crate docs). Defaults to
    /// `$WARPSAFE_BUILD_TARGET_DIR` ([`TARGET_DIR_VARIABLE`]) when that is set, else to
    /// `warpsafe-build/` beside the outer build's profile directories, derived from
    /// `OUT_DIR`, else to `<out_dir>/target`.
    ///
    /// Several builds may use one directory at the same time, from one outer build or
    /// from several: cargo's lock on it serialises their nested builds (each waits for the
    /// one before it), and the link cache is safe to share.
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.target_dir = Some(dir.into());
        self
    }

    /// Builds the PTX for every architecture asked for (sm_70 if none was).
    ///
    /// # Errors
    /// See [`BuildError`]: a missing toolchain component, a kernel crate that does not
    /// compile (with rustc's errors), a failing LLVM tool, or an I/O error.
    pub fn build(self) -> Result<Built, BuildError> {
        let archs = if self.archs.is_empty() { vec![Arch::SM_70] } else { self.archs.clone() };
        let manifest = self.crate_path.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(BuildError::NoKernelCrate { path: self.crate_path.clone() });
        }
        let env_out_dir = std::env::var_os("OUT_DIR").map(PathBuf::from);
        let in_build_script = self.out_dir.is_none() && env_out_dir.is_some();
        let out_dir = self.out_dir.clone().or(env_out_dir.clone()).ok_or(BuildError::NoOutDir)?;
        if in_build_script && self.target_dir.is_none() {
            println!("cargo:rerun-if-env-changed={TARGET_DIR_VARIABLE}");
        }
        let shared_target_dir =
            std::env::var_os(TARGET_DIR_VARIABLE).filter(|dir| !dir.is_empty()).map(PathBuf::from);
        let target_dir =
            self.target_dir.clone().or(shared_target_dir).unwrap_or_else(|| match &env_out_dir {
                // OUT_DIR = <target>/<profile>/build/<pkg>-<hash>/out
                Some(o) if o.ancestors().nth(4).is_some() => {
                    o.ancestors().nth(4).unwrap().join("warpsafe-build")
                }
                _ => out_dir.join("target"),
            });
        fs::create_dir_all(&out_dir).map_err(io_err("creating", &out_dir))?;

        let tools = Toolchain::find(&self.toolchain, self.install_missing, in_build_script)?;
        let mut built = Vec::new();
        let mut sources = BTreeSet::new();
        for arch in archs {
            let arch_dir = target_dir.join(arch.to_string());
            if in_build_script && !arch_dir.join("nvptx64-nvidia-cuda").exists() {
                // A build script's only visible output; shown once per cold target directory.
                println!(
                    "cargo:warning=warpsafe-build: compiling core and {} for {arch} with {} (first build: about a minute)",
                    self.crate_path.display(),
                    self.toolchain
                );
            }
            let compiled = self.cargo_build(arch, &arch_dir, &tools)?;
            sources.extend(compiled.local_crate_dirs);
            let crate_name = &compiled.crate_name;
            let key =
                LinkInputs { arch, tools: &tools, cfgs: &self.cfgs, crate_name, rlibs: &compiled.rlibs }
                    .key();
            let cache = LinkCache { dir: arch_dir.join("linked"), key };
            let stem = format!("{crate_name}.{arch}");
            let out =
                OutFiles { ptx: out_dir.join(format!("{stem}.ptx")), ir: out_dir.join(format!("{stem}.ll")) };
            let ptx = match cache.fetch(arch, &out) {
                Some(ptx) => ptx,
                None => {
                    // Link scratch files are per output directory: two build scripts may
                    // share the nested target directory, never this one.
                    let work = out_dir.join(format!("{stem}.link"));
                    let ptx = link_to_ptx(&tools, arch, &compiled.rlibs, &work, &out, &self.crate_path)?;
                    cache.store(&ptx)?;
                    ptx
                }
            };
            built.push(ptx);
        }
        if in_build_script {
            for dir in &sources {
                println!("cargo:rerun-if-changed={}", dir.display());
            }
        }
        write_program(&out_dir, &self.crate_path, &built)?;
        Ok(Built { ptx: built })
    }

    /// Step 1: the nested `cargo build` for one architecture.
    fn cargo_build(&self, arch: Arch, target_dir: &Path, tools: &Toolchain) -> Result<Compiled, BuildError> {
        let sysroot = &tools.sysroot;
        let cargo = tools.cargo.clone().into_os_string();
        let mut rustflags = vec![
            format!("-Ctarget-cpu={arch}"),
            format!("-Ctarget-feature=+ptx{}", arch.ptx),
            "-Cpanic=abort".into(),
        ];
        for cfg in &self.cfgs {
            rustflags.extend(["--cfg".to_string(), cfg.clone()]);
        }
        let rustflags = rustflags.join("\x1f");
        // Held from the nested build until its rlibs are read into memory, so that another
        // builder sharing this directory (with other cfgs, say) cannot rebuild them between
        // the two. Cargo's own lock on the directory is released when the nested cargo exits.
        fs::create_dir_all(target_dir).map_err(io_err("creating", target_dir))?;
        let lock_path = target_dir.join("warpsafe-build.lock");
        let lock = fs::File::create(&lock_path).map_err(io_err("creating", &lock_path))?;
        match lock.lock() {
            // As cargo does, build without the lock on a file system that has none.
            Err(err) if err.kind() != std::io::ErrorKind::Unsupported => {
                return Err(BuildError::Io { action: "locking", path: lock_path, source: err })
            }
            _ => {}
        }
        let mut cmd = Command::new(&cargo);
        cmd.args(["build", "--lib", "--release", "--target", NVPTX_TARGET, "-Zbuild-std=core"])
            .arg("--manifest-path")
            .arg(self.crate_path.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(target_dir)
            .arg("--message-format=json-diagnostic-rendered-ansi")
            .env("CARGO_ENCODED_RUSTFLAGS", rustflags)
            .env("RUSTC", &tools.rustc)
            .env("RUSTUP_TOOLCHAIN", &self.toolchain)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // The outer build's settings and toolchain must not leak into the nvptx build.
        for var in [
            "CARGO",
            "RUSTDOC",
            "RUSTC_LINKER",
            "RUSTFLAGS",
            "CARGO_BUILD_RUSTFLAGS",
            "CARGO_BUILD_TARGET",
            "CARGO_TARGET_DIR",
            "CARGO_BUILD_TARGET_DIR",
            "RUSTC_WRAPPER",
            "RUSTC_WORKSPACE_WRAPPER",
            "CARGO_PRIMARY_PACKAGE",
        ] {
            cmd.env_remove(var);
        }
        let output = cmd
            .output()
            .map_err(|source| BuildError::Spawn { program: cargo.to_string_lossy().into_owned(), source })?;

        let mut rlib_paths = Vec::new();
        let mut local_crate_dirs = Vec::new();
        let mut diagnostics = String::new();
        let mut crate_name = None;
        let kernel_manifest = fs::canonicalize(self.crate_path.join("Cargo.toml")).ok();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            match msg["reason"].as_str() {
                Some("compiler-message") => {
                    let level = msg["message"]["level"].as_str().unwrap_or("");
                    if level == "error" {
                        diagnostics.push_str(msg["message"]["rendered"].as_str().unwrap_or(""));
                    }
                }
                Some("compiler-artifact") => {
                    let nvptx_rlibs = msg["filenames"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|f| f.as_str())
                        .filter(|f| f.ends_with(".rlib") && f.contains(NVPTX_TARGET))
                        .map(PathBuf::from)
                        .collect::<Vec<_>>();
                    if nvptx_rlibs.is_empty() {
                        continue;
                    }
                    rlib_paths.extend(nvptx_rlibs);
                    let manifest = msg["manifest_path"].as_str().map(PathBuf::from);
                    let local = msg["package_id"].as_str().is_some_and(|id| id.starts_with("path+file://"));
                    if let (Some(m), true) = (&manifest, local) {
                        // core and compiler_builtins come from the toolchain's own
                        // source and never change: no rerun-if-changed for them.
                        if !m.starts_with(sysroot) {
                            local_crate_dirs.push(m.parent().unwrap_or(m).to_path_buf());
                        }
                        if fs::canonicalize(m).ok() == kernel_manifest {
                            crate_name = msg["target"]["name"].as_str().map(str::to_owned);
                        }
                    }
                }
                _ => {}
            }
        }
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            // cargo's own errors (bad manifest, missing nightly) are on stderr; rustc's
            // are in the JSON messages collected above.
            let cargo_errors: String =
                stderr.lines().filter(|l| l.contains("error")).map(|l| format!("{l}\n")).collect();
            diagnostics.push_str(&cargo_errors);
            if diagnostics.trim().is_empty() {
                diagnostics = stderr.into_owned();
            }
            return Err(BuildError::KernelCompile { path: self.crate_path.clone(), arch, diagnostics });
        }
        let crate_name = crate_name.unwrap_or_else(|| "kernels".to_string());
        // Cargo reports fresh artifacts in no fixed order: sorted, the same rlibs give the
        // same link (and the same cache key) every time.
        rlib_paths.sort();
        rlib_paths.dedup();
        let rlibs = rlib_paths.iter().map(|path| Rlib::read(path)).collect::<Result<Vec<_>, _>>()?;
        drop(lock);
        Ok(Compiled { rlibs, local_crate_dirs, crate_name })
    }
}

/// The products of step 1.
struct Compiled {
    rlibs: Vec<Rlib>,
    local_crate_dirs: Vec<PathBuf>,
    crate_name: String,
}

/// An nvptx rlib, read whole: the link cache's key is computed from these bytes and the
/// link reads the bitcode out of them, so the two cannot disagree.
struct Rlib {
    path: PathBuf,
    /// The file name without extension (`libcore-<hash>`): names the bitcode files.
    stem: String,
    bytes: Vec<u8>,
}

impl Rlib {
    fn read(path: &Path) -> Result<Rlib, BuildError> {
        let bytes = fs::read(path).map_err(io_err("reading", path))?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(Rlib { path: path.to_path_buf(), stem, bytes })
    }
}

/// The pinned toolchain: its `cargo` and `rustc`, its sysroot and its LLVM tools.
struct Toolchain {
    /// What identifies the toolchain's compiler and LLVM tools, for the link cache's key:
    /// its name, `rustc -vV`, its sysroot, and each LLVM tool's path, size and
    /// modification time (a toolchain reinstalled under the same name changes those).
    identity: String,
    cargo: PathBuf,
    rustc: PathBuf,
    sysroot: PathBuf,
    llvm_link: PathBuf,
    llvm_dis: PathBuf,
    opt: PathBuf,
    llc: PathBuf,
}

/// `rustup` with an environment that does not pin another toolchain.
fn rustup() -> Command {
    let mut cmd = Command::new("rustup");
    for var in ["RUSTUP_TOOLCHAIN", "CARGO", "RUSTC", "RUSTDOC"] {
        cmd.env_remove(var);
    }
    cmd
}

impl Toolchain {
    /// The path of `tool` in toolchain `name` (`rustup which`), or what rustup said.
    fn which(name: &str, tool: &str) -> Result<Result<PathBuf, String>, BuildError> {
        let out = rustup()
            .args(["which", "--toolchain", name, tool])
            .output()
            .map_err(|source| BuildError::NoRustup { toolchain: name.to_string(), source })?;
        let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
        Ok(if out.status.success() { Ok(PathBuf::from(text(&out.stdout))) } else { Err(text(&out.stderr)) })
    }

    /// Finds toolchain `name`, installing it (with `rust-src` and `llvm-tools`) when it
    /// is missing and `install` is set.
    fn find(name: &str, install: bool, in_build_script: bool) -> Result<Toolchain, BuildError> {
        let rustc = match Self::which(name, "rustc")? {
            Ok(rustc) => rustc,
            Err(said) => {
                if !install {
                    return Err(BuildError::MissingToolchain {
                        toolchain: name.to_string(),
                        detail: format!("{said}; not installing it (Builder::install_missing(false) or {NO_INSTALL_VARIABLE}=1)"),
                    });
                }
                if in_build_script {
                    println!("cargo:warning=warpsafe-build: installing the nightly toolchain {name} (rust-src, llvm-tools) with rustup");
                }
                eprintln!("warpsafe-build: installing {name} with rustup");
                let out = rustup()
                    .args(["toolchain", "install", name, "--profile", "minimal"])
                    .args(["--component", "rust-src", "--component", "llvm-tools"])
                    .output()
                    .map_err(|source| BuildError::NoRustup { toolchain: name.to_string(), source })?;
                if !out.status.success() {
                    let said = String::from_utf8_lossy(&out.stderr);
                    let last = said.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("").trim();
                    return Err(BuildError::MissingToolchain {
                        toolchain: name.to_string(),
                        detail: format!("rustup could not install it: {last}"),
                    });
                }
                Self::which(name, "rustc")?
                    .map_err(|detail| BuildError::MissingToolchain { toolchain: name.to_string(), detail })?
            }
        };
        let cargo = Self::which(name, "cargo")?
            .map_err(|detail| BuildError::MissingToolchain { toolchain: name.to_string(), detail })?;
        let probe = |args: &[&str]| -> Option<String> {
            let out = Command::new(&rustc).args(args).env_remove("RUSTUP_TOOLCHAIN").output().ok()?;
            out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let sysroot = probe(&["--print", "sysroot"]).map(|s| PathBuf::from(s.trim())).ok_or_else(|| {
            BuildError::Spawn {
                program: format!("{} --print sysroot", rustc.display()),
                source: std::io::Error::other("rustc did not report a sysroot"),
            }
        })?;
        let version = probe(&["-vV"]).unwrap_or_default();
        let host = version
            .lines()
            .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
            .unwrap_or_else(|| "x86_64-unknown-linux-gnu".into());
        let mut found = Self::in_sysroot(&sysroot, &host);
        if matches!(found, Err(BuildError::MissingRustSrc { .. } | BuildError::MissingLlvmTools { .. }))
            && install
        {
            // An installed toolchain without the components: add them, then look again.
            let _ =
                rustup().args(["component", "add", "--toolchain", name, "rust-src", "llvm-tools"]).output();
            found = Self::in_sysroot(&sysroot, &host);
        }
        let found = found?;
        let mut identity = format!("{name}\n{version}\n{}\n", sysroot.display());
        for tool in [&found.llvm_link, &found.llvm_dis, &found.opt, &found.llc] {
            let meta = fs::metadata(tool).map_err(io_err("reading the metadata of", tool))?;
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            identity.push_str(&format!("{} {} {modified}\n", tool.display(), meta.len()));
        }
        Ok(Toolchain { identity, cargo, rustc, ..found })
    }

    /// Checks the components a toolchain rooted at `sysroot` must have.
    fn in_sysroot(sysroot: &Path, host: &str) -> Result<Toolchain, BuildError> {
        if !sysroot.join("lib/rustlib/src/rust/library/core/Cargo.toml").is_file() {
            return Err(BuildError::MissingRustSrc { sysroot: sysroot.to_path_buf() });
        }
        let bin = sysroot.join("lib/rustlib").join(host).join("bin");
        let tool = |name: &'static str| {
            let path = bin.join(name);
            if path.is_file() {
                Ok(path)
            } else {
                Err(BuildError::MissingLlvmTools { sysroot: sysroot.to_path_buf(), tool: name })
            }
        };
        Ok(Toolchain {
            identity: String::new(),
            cargo: PathBuf::new(),
            rustc: PathBuf::new(),
            sysroot: sysroot.to_path_buf(),
            llvm_link: tool("llvm-link")?,
            llvm_dis: tool("llvm-dis")?,
            opt: tool("opt")?,
            llc: tool("llc")?,
        })
    }
}

/// Checks that the toolchain rooted at `sysroot` has everything the builder needs
/// (`rust-src`, and `llvm-link`, `llvm-dis`, `opt`, `llc` from `llvm-tools`) for a host `host`.
///
/// # Errors
/// [`BuildError::MissingRustSrc`] or [`BuildError::MissingLlvmTools`], naming the fix.
pub fn check_toolchain(sysroot: &Path, host: &str) -> Result<(), BuildError> {
    Toolchain::in_sysroot(sysroot, host).map(|_| ())
}

fn run_tool(
    tool: &'static str,
    path: &Path,
    arch: Arch,
    args: &[&std::ffi::OsStr],
) -> Result<Vec<u8>, BuildError> {
    let out = Command::new(path)
        .args(args)
        .output()
        .map_err(|source| BuildError::Spawn { program: path.display().to_string(), source })?;
    if !out.status.success() {
        return Err(BuildError::LlvmTool {
            tool,
            arch,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(out.stdout)
}

/// Where one architecture's PTX and LLVM IR go.
struct OutFiles {
    ptx: PathBuf,
    ir: PathBuf,
}

/// Everything the output of steps 2-4 depends on: the link cache's key is their hash.
#[derive(Clone, Copy)]
struct LinkInputs<'a> {
    arch: Arch,
    tools: &'a Toolchain,
    cfgs: &'a [String],
    crate_name: &'a str,
    rlibs: &'a [Rlib],
}

/// This file: any change to the builder (its link steps, their flags) changes every key.
const BUILDER_SOURCE: &str = include_str!("lib.rs");

impl LinkInputs<'_> {
    /// The SHA-256 of the inputs, in hex. SHA-256 (the `sha2` crate, RustCrypto's) rather
    /// than `std`'s `DefaultHasher`: a key must not collide for different inputs, and must
    /// be the same from every outer toolchain (stable or nightly) that runs the builder;
    /// `DefaultHasher`'s 64 bits and unspecified algorithm promise neither.
    fn key(&self) -> String {
        use sha2::Digest as _;
        let mut hasher = sha2::Sha256::new();
        // Each field is length-prefixed, so that no two different inputs hash the same bytes.
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(env!("CARGO_PKG_VERSION").as_bytes());
        field(BUILDER_SOURCE.as_bytes());
        field(&self.arch.sm.to_le_bytes());
        field(&self.arch.ptx.to_le_bytes());
        field(self.tools.identity.as_bytes());
        field(&(self.cfgs.len() as u64).to_le_bytes());
        for cfg in self.cfgs {
            field(cfg.as_bytes());
        }
        field(self.crate_name.as_bytes());
        field(&(self.rlibs.len() as u64).to_le_bytes());
        for rlib in self.rlibs {
            field(rlib.stem.as_bytes());
            field(&rlib.bytes);
        }
        hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The link cache of one architecture: `<dir>/<key>.ptx`, `.ll` and `.kernels` (the entry
/// points, one a line). See the crate docs.
struct LinkCache {
    dir: PathBuf,
    key: String,
}

impl LinkCache {
    fn entry(&self, extension: &str) -> PathBuf {
        self.dir.join(format!("{}.{extension}", self.key))
    }

    /// Copies a cached build's PTX and IR to `out`. `None` when the cache does not have it
    /// whole (it may have been deleted at any time): the caller links instead.
    fn fetch(&self, arch: Arch, out: &OutFiles) -> Option<Ptx> {
        let kernels = fs::read_to_string(self.entry("kernels")).ok()?;
        let kernels: Vec<String> = kernels.lines().map(str::to_owned).collect();
        if kernels.is_empty() {
            return None;
        }
        fs::copy(self.entry("ptx"), &out.ptx).ok()?;
        fs::copy(self.entry("ll"), &out.ir).ok()?;
        Some(Ptx { arch, path: out.ptx.clone(), llvm_ir: out.ir.clone(), kernels })
    }

    /// Adds a build's files. Each is written under a name of its own and then renamed, so
    /// that a concurrent build never reads half a file; `.kernels`, which [`LinkCache::fetch`]
    /// reads first, is renamed last.
    fn store(&self, ptx: &Ptx) -> Result<(), BuildError> {
        static STORES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        fs::create_dir_all(&self.dir).map_err(io_err("creating", &self.dir))?;
        let unique =
            format!("{}.{}", std::process::id(), STORES.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let kernels = ptx.kernels.iter().map(|k| format!("{k}\n")).collect::<String>();
        let place = |extension: &str, write: &dyn Fn(&Path) -> std::io::Result<()>| {
            let temporary = self.dir.join(format!("{}.{extension}.{unique}.tmp", self.key));
            let entry = self.entry(extension);
            write(&temporary).map_err(io_err("writing", &temporary))?;
            fs::rename(&temporary, &entry).map_err(io_err("renaming into place", &entry))
        };
        place("ptx", &|to| fs::copy(&ptx.path, to).map(drop))?;
        place("ll", &|to| fs::copy(&ptx.llvm_ir, to).map(drop))?;
        place("kernels", &|to| fs::write(to, &kernels))
    }
}

/// The start of the module-level PTX comment by which warpsafe's `shared!` macro declares
/// a static shared array: `// warpsafe-shared-array ID BYTES ALIGN` (in decimal).
const SHARED_ARRAY_MARKER: &str = "// warpsafe-shared-array ";

/// One static shared array that a linked crate declares (see [`SHARED_ARRAY_MARKER`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct SharedArray {
    id: u64,
    bytes: u64,
    align: u64,
}

/// The `module asm` lines of disassembled IR that start with `marker`: each whole line's
/// text, and what follows the marker.
fn markers<'ir>(ir: &'ir str, marker: &'ir str) -> impl Iterator<Item = (&'ir str, &'ir str)> {
    ir.lines()
        .filter_map(|line| line.strip_prefix("module asm \"")?.strip_suffix('"'))
        .filter_map(move |asm| Some((asm, asm.strip_prefix(marker)?)))
}

/// The static shared arrays that the `module asm` lines of disassembled IR declare, sorted
/// by id; the problem, if a marker does not parse or two declarations share an id.
fn shared_arrays(ir: &str) -> Result<Vec<SharedArray>, String> {
    let mut arrays = Vec::new();
    for (asm, fields) in markers(ir, SHARED_ARRAY_MARKER) {
        let fields: Vec<Option<u64>> = fields.split(' ').map(|f| f.parse().ok()).collect();
        match fields[..] {
            [Some(id), Some(bytes), Some(align)] => arrays.push(SharedArray { id, bytes, align }),
            _ => return Err(format!("unreadable marker `{asm}`: expected ID BYTES ALIGN in decimal")),
        }
    }
    arrays.sort();
    if let Some(pair) = arrays.windows(2).find(|pair| pair[0].id == pair[1].id) {
        return Err(format!(
            "two declarations with the id {} (`{SHARED_ARRAY_MARKER}{} ...`): the same name, type \
             and length declared twice by one macro invocation; rename one",
            pair[0].id, pair[0].id
        ));
    }
    Ok(arrays)
}

/// The start of the module-level PTX comment by which warpsafe's `__warpsafe_launch_bounds!`
/// announces a kernel's launch bounds: `// warpsafe-launch-bounds NAME THREADS BLOCKS`.
const LAUNCH_BOUNDS_MARKER: &str = "// warpsafe-launch-bounds ";

/// Launch bounds of one kernel entry (see [`LAUNCH_BOUNDS_MARKER`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct LaunchBounds {
    entry: String,
    threads: u32,
    blocks: u32,
}

/// The launch bounds that the `module asm` lines of disassembled IR announce; the problem,
/// if a marker does not parse.
fn launch_bounds(ir: &str) -> Result<Vec<LaunchBounds>, String> {
    let mut bounds = Vec::new();
    for (asm, fields) in markers(ir, LAUNCH_BOUNDS_MARKER) {
        match fields.split(' ').collect::<Vec<_>>()[..] {
            [entry, threads, blocks] => match (threads.parse(), blocks.parse()) {
                (Ok(threads), Ok(blocks)) if threads > 0 && blocks > 0 => {
                    bounds.push(LaunchBounds { entry: entry.to_string(), threads, blocks })
                }
                _ => return Err(format!("unreadable marker `{asm}`: expected positive THREADS and BLOCKS")),
            },
            _ => return Err(format!("unreadable marker `{asm}`: expected NAME THREADS BLOCKS")),
        }
    }
    Ok(bounds)
}

/// `ptx` with `.maxntid` and `.minnctapersm` between each bounded entry's parameter list
/// and its body (PTX's performance-tuning directives); the problem if an entry is missing.
fn with_launch_bounds(ptx: &str, bounds: &[LaunchBounds]) -> Result<String, String> {
    let mut ptx = ptx.to_string();
    for b in bounds {
        let head = format!(".entry {}(", b.entry);
        let body = ptx
            .find(&head)
            .and_then(|start| ptx[start..].find("\n{\n").map(|brace| start + brace + 1))
            .ok_or_else(|| {
                format!("`{LAUNCH_BOUNDS_MARKER}{} ...` names no kernel entry of the PTX", b.entry)
            })?;
        ptx.insert_str(body, &format!(".maxntid {}, 1, 1\n.minnctapersm {}\n", b.threads, b.blocks));
    }
    Ok(ptx)
}

/// The IR module linked into the kernel crate's bitcode after step 2: the block's shared
/// memory as `addrspace(3)` globals, and the two functions through which warpsafe's kernel
/// crate takes their addresses, each an `addrspacecast` to a generic pointer.
///
/// Rust has no address spaces: a `cvta.shared` inside `asm!` (what warpsafe used before)
/// hides where the pointer points, so every access through it stayed a generic `ld`/`st`
/// (SASS `LD.E`/`ST.E`, through the generic-address check). With the cast in the IR,
/// LLVM's address-space inference (part of `llc`'s NVPTX pipeline) sees that every pointer
/// derived from shared memory is a shared one and emits `ld.shared`/`st.shared`.
///
/// - `warpsafe_dynamic_shared_window()`: the dynamic window (`.extern .shared` of no
///   size; its size is the launch's).
/// - `warpsafe_static_shared(id)`: the array that the `shared!` declaration with PTX id
///   `id` placed, one `.shared` global per declaration found in `arrays`, named
///   `warpsafe_shared_<id>` as the PTX names it. Called with a constant id, it folds to
///   one cast once inlined; an id that no declaration made traps.
///
/// The arrays are `externally_initialized`: shared memory starts as whatever the block
/// before left there, which a safe read may see (as garbage bytes of a `Pod` type). An
/// `undef` initialiser alone would let LLVM fold a read of an array that nothing in the
/// module writes to `undef`, on which a branch is undefined behaviour.
///
/// Written here by hand because no Rust construct produces an `addrspace(3)` global.
/// `layout` is the linked crates' `target datalayout` line (so that the linker does not
/// warn of two layouts).
fn shared_memory_ir(layout: &str, arrays: &[SharedArray]) -> String {
    use std::fmt::Write;
    let mut ir = format!(
        "{layout}\ntarget triple = \"nvptx64-nvidia-cuda\"\n\n\
         @warpsafe_dynamic_shared = external addrspace(3) global [0 x i8], align 16\n"
    );
    for a in arrays {
        let _ = writeln!(
            ir,
            "@warpsafe_shared_{} = internal addrspace(3) externally_initialized global [{} x i8] undef, align {}",
            a.id, a.bytes, a.align
        );
    }
    ir.push_str(
        "\ndefine ptr @warpsafe_dynamic_shared_window() #0 {\n\
         \x20 ret ptr addrspacecast (ptr addrspace(3) @warpsafe_dynamic_shared to ptr)\n}\n\n\
         define ptr @warpsafe_static_shared(i64 %id) #1 {\n\
         \x20 switch i64 %id, label %unknown [\n",
    );
    for a in arrays {
        // IR integers are signed: the id's bits, as the kernel crate passes them.
        let _ = writeln!(ir, "    i64 {}, label %array_{}", a.id as i64, a.id);
    }
    ir.push_str("  ]\n");
    for a in arrays {
        let _ = writeln!(
            ir,
            "array_{0}:\n  ret ptr addrspacecast (ptr addrspace(3) @warpsafe_shared_{0} to ptr)",
            a.id
        );
    }
    ir.push_str(
        "unknown:\n  call void @llvm.trap()\n  unreachable\n}\n\n\
         declare void @llvm.trap()\n\n\
         attributes #0 = { alwaysinline nounwind memory(none) speculatable willreturn }\n\
         attributes #1 = { alwaysinline nounwind }\n",
    );
    ir
}

/// Steps 2-4: bitcode out of the rlibs, link, internalize and optimise, emit PTX.
fn link_to_ptx(
    tools: &Toolchain,
    arch: Arch,
    rlibs: &[Rlib],
    work: &Path,
    out: &OutFiles,
    crate_path: &Path,
) -> Result<Ptx, BuildError> {
    let bitcode_dir = work.join("bitcode");
    let _ = fs::remove_dir_all(work);
    fs::create_dir_all(&bitcode_dir).map_err(io_err("creating", &bitcode_dir))?;
    let mut inputs = Vec::new();
    for rlib in rlibs {
        inputs.extend(extract_bitcode(rlib, &bitcode_dir)?);
    }

    let crates = work.join("crates.bc");
    let mut args: Vec<&std::ffi::OsStr> = vec!["-o".as_ref(), crates.as_os_str()];
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    run_tool("llvm-link", &tools.llvm_link, arch, &args)?;

    let ir = run_tool("llvm-dis", &tools.llvm_dis, arch, &[crates.as_os_str(), "-o".as_ref(), "-".as_ref()])?;
    let ir = String::from_utf8_lossy(&ir);
    let kernels = kernel_entry_points(&ir);
    if kernels.is_empty() {
        return Err(BuildError::NoKernels { path: crate_path.to_path_buf() });
    }
    let arrays = shared_arrays(&ir)
        .map_err(|problem| BuildError::SharedMemory { path: crate_path.to_path_buf(), problem })?;
    let bounds = launch_bounds(&ir)
        .map_err(|problem| BuildError::LaunchBounds { path: crate_path.to_path_buf(), problem })?;
    let layout = ir.lines().find(|l| l.starts_with("target datalayout = ")).unwrap_or_default();
    let shared_memory = work.join("shared_memory.ll");
    fs::write(&shared_memory, shared_memory_ir(layout, &arrays))
        .map_err(io_err("writing", &shared_memory))?;
    let linked = work.join("linked.bc");
    run_tool(
        "llvm-link",
        &tools.llvm_link,
        arch,
        &["-o".as_ref(), linked.as_os_str(), crates.as_os_str(), shared_memory.as_os_str()],
    )?;
    let optimised = work.join("optimised.bc");
    let public = format!("--internalize-public-api-list={}", kernels.join(","));
    run_tool(
        "opt",
        &tools.opt,
        arch,
        &[
            public.as_ref(),
            "-passes=internalize,default<O3>".as_ref(),
            linked.as_os_str(),
            "-o".as_ref(),
            optimised.as_os_str(),
        ],
    )?;
    let ir =
        run_tool("llvm-dis", &tools.llvm_dis, arch, &[optimised.as_os_str(), "-o".as_ref(), "-".as_ref()])?;
    if let Some(missing) = undefined_warpsafe_function(&String::from_utf8_lossy(&ir)) {
        return Err(BuildError::SharedMemory {
            path: crate_path.to_path_buf(),
            problem: format!(
                "the linked crates call `{missing}`, which this builder does not define: \
                 warpsafe and warpsafe-build of different versions?"
            ),
        });
    }

    let ptx_path = out.ptx.clone();
    let ir_path = out.ir.clone();
    let mcpu = format!("-mcpu={arch}");
    let mattr = format!("-mattr=+ptx{}", arch.ptx);
    run_tool(
        "llc",
        &tools.llc,
        arch,
        &[
            "-O3".as_ref(),
            mcpu.as_ref(),
            mattr.as_ref(),
            optimised.as_os_str(),
            "-o".as_ref(),
            ptx_path.as_os_str(),
        ],
    )?;
    if !bounds.is_empty() {
        let ptx = fs::read_to_string(&ptx_path).map_err(io_err("reading", &ptx_path))?;
        let ptx = with_launch_bounds(&ptx, &bounds)
            .map_err(|problem| BuildError::LaunchBounds { path: crate_path.to_path_buf(), problem })?;
        fs::write(&ptx_path, ptx).map_err(io_err("writing", &ptx_path))?;
    }
    fs::write(&ir_path, ir).map_err(io_err("writing", &ir_path))?;
    Ok(Ptx { arch, path: ptx_path, llvm_ir: ir_path, kernels })
}

/// A function named `warpsafe_...` that optimised IR still only declares: one the kernel
/// crate expects the builder to define (its shared memory) and this builder does not, which
/// `ptxas` would report only when the GPU loads the PTX.
fn undefined_warpsafe_function(ir: &str) -> Option<&str> {
    ir.lines()
        .filter(|line| line.starts_with("declare "))
        .filter_map(|line| line.split(" @").nth(1)?.split('(').next())
        .find(|name| name.starts_with("warpsafe_"))
}

/// The names of the `ptx_kernel` functions defined in disassembled IR.
fn kernel_entry_points(ir: &str) -> Vec<String> {
    let mut names: Vec<String> = ir
        .lines()
        .filter(|l| l.starts_with("define ") && l.contains(" ptx_kernel "))
        .filter_map(|l| {
            let at = l.find(" @")? + 2;
            let rest = &l[at..];
            let name = rest.split('(').next()?;
            Some(name.trim_matches('"').to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Writes every bitcode member of an rlib (an `ar` archive) into `dir`, returning the
/// files. Other members (`lib.rmeta`) are skipped.
fn extract_bitcode(rlib: &Rlib, dir: &Path) -> Result<Vec<PathBuf>, BuildError> {
    let mut archive = ar::Archive::new(rlib.bytes.as_slice());
    let mut written = Vec::new();
    while let Some(entry) = archive.next_entry() {
        let mut entry = entry.map_err(io_err("reading", &rlib.path))?;
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).map_err(io_err("reading", &rlib.path))?;
        if !bytes.starts_with(b"BC\xC0\xDE") {
            continue;
        }
        let path = dir.join(format!("{}.{}.bc", rlib.stem, written.len()));
        fs::write(&path, bytes).map_err(io_err("writing", &path))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_arrays_are_read_from_their_module_asm_comments_only() {
        let ir = "module asm \"// warpsafe-shared-array 42 128 16\"\n\
                  module asm \".shared .align 4 .b8 other[8];\"\n\
                  module asm \"// warpsafe-shared-array 18446744073709551615 4 4\"\n\
                  ; module asm \"// warpsafe-shared-array 8 4 4\"\n";
        let arrays = shared_arrays(ir).unwrap();
        let last = SharedArray { id: u64::MAX, bytes: 4, align: 4 };
        assert_eq!(arrays, [SharedArray { id: 42, bytes: 128, align: 16 }, last]);
        let module = shared_memory_ir("target datalayout = \"e\"", &arrays);
        for line in [
            "target datalayout = \"e\"",
            "@warpsafe_shared_18446744073709551615 = internal addrspace(3) externally_initialized global [4 x i8] undef, align 4",
            "@warpsafe_shared_42 = internal addrspace(3) externally_initialized global [128 x i8] undef, align 16",
            "    i64 42, label %array_42",
            "    i64 -1, label %array_18446744073709551615",
            "  ret ptr addrspacecast (ptr addrspace(3) @warpsafe_shared_42 to ptr)",
            "  ret ptr addrspacecast (ptr addrspace(3) @warpsafe_dynamic_shared to ptr)",
        ] {
            assert!(module.lines().any(|l| l == line), "no line {line:?} in\n{module}");
        }
    }

    #[test]
    fn launch_bounds_are_read_from_their_markers_and_put_on_their_entries() {
        let ir = "module asm \"// warpsafe-launch-bounds k_block 512 2\"\n\
                  module asm \"// warpsafe-shared-array 42 128 16\"\n\
                  ; module asm \"// warpsafe-launch-bounds k_other 64 1\"\n";
        let bounds = launch_bounds(ir).unwrap();
        assert_eq!(bounds, [LaunchBounds { entry: "k_block".into(), threads: 512, blocks: 2 }]);
        let ptx = ".visible .entry k_warp(\n\t.param .u64 p\n)\n{\n\tret;\n}\n\
                   .visible .entry k_block(\n\t.param .u64 p\n)\n{\n\tret;\n}\n";
        let bounded = with_launch_bounds(ptx, &bounds).unwrap();
        assert_eq!(
            bounded,
            ".visible .entry k_warp(\n\t.param .u64 p\n)\n{\n\tret;\n}\n\
             .visible .entry k_block(\n\t.param .u64 p\n)\n.maxntid 512, 1, 1\n.minnctapersm 2\n{\n\tret;\n}\n"
        );
        // A marker that names no entry, or does not parse, is an error that quotes it.
        let missing = [LaunchBounds { entry: "k_gone".into(), threads: 1, blocks: 1 }];
        assert!(with_launch_bounds(ptx, &missing).unwrap_err().contains("k_gone"));
        for bad in ["k 512", "k 0 2", "k 512 x", "k 512 2 9"] {
            let ir = format!("module asm \"// warpsafe-launch-bounds {bad}\"\n");
            assert!(launch_bounds(&ir).unwrap_err().contains(bad), "{bad}");
        }
    }

    #[test]
    fn a_warpsafe_function_left_undefined_is_found() {
        let ir = "declare i32 @vprintf(ptr, ptr)\n\
                  define internal void @warpsafe_x() {\n\
                  declare ptr @warpsafe_static_shared(i64) #3\n";
        assert_eq!(undefined_warpsafe_function(ir), Some("warpsafe_static_shared"));
        assert_eq!(undefined_warpsafe_function("declare i32 @vprintf(ptr, ptr)\n"), None);
    }

    #[test]
    fn unreadable_or_repeated_shared_array_markers_are_errors() {
        let marker = |fields: &str| format!("module asm \"{SHARED_ARRAY_MARKER}{fields}\"\n");
        for (ir, expected) in [
            (marker("7 4"), "unreadable marker `// warpsafe-shared-array 7 4`"),
            (marker("x 4 4"), "unreadable marker"),
            (marker("7 4 4 1"), "unreadable marker"),
            (marker("7 4 4") + &marker("9 8 8") + &marker("7 4 4"), "two declarations with the id 7"),
        ] {
            let problem = shared_arrays(&ir).unwrap_err();
            assert!(problem.contains(expected), "{ir}: {problem}");
        }
    }

    #[test]
    fn arch_below_sm70_is_rejected_with_the_fix() {
        let err = Arch::new(61).unwrap_err();
        assert!(matches!(err, BuildError::ArchTooOld { sm: 61 }));
        assert!(err.to_string().contains("sm_70"), "{err}");
    }

    #[test]
    fn unknown_arch_lists_known_ones() {
        let err = Arch::new(71).unwrap_err();
        assert!(matches!(err, BuildError::UnknownArch { sm: 71 }));
        assert!(err.to_string().contains("sm_90"), "{err}");
    }

    #[test]
    fn known_archs_carry_their_ptx_version() {
        assert_eq!(Arch::new(70).unwrap(), Arch::SM_70);
        assert_eq!(Arch::new(80).unwrap(), Arch::SM_80);
        assert_eq!(Arch::new(90).unwrap(), Arch::SM_90);
        assert_eq!(Arch::new(86).unwrap().ptx_version(), 71);
        assert_eq!(Arch::SM_90.to_string(), "sm_90");
    }

    #[test]
    fn missing_components_name_the_rustup_command() {
        let empty = std::env::temp_dir().join(format!("warpsafe-empty-sysroot-{}", std::process::id()));
        fs::create_dir_all(&empty).unwrap();
        let err = check_toolchain(&empty, "x86_64-unknown-linux-gnu").unwrap_err();
        assert!(matches!(err, BuildError::MissingRustSrc { .. }));
        assert!(err.to_string().contains("rustup component add rust-src"), "{err}");

        let core = empty.join("lib/rustlib/src/rust/library/core");
        fs::create_dir_all(&core).unwrap();
        fs::write(core.join("Cargo.toml"), "").unwrap();
        let err = check_toolchain(&empty, "x86_64-unknown-linux-gnu").unwrap_err();
        assert!(matches!(err, BuildError::MissingLlvmTools { tool: "llvm-link", .. }));
        assert!(err.to_string().contains("rustup component add llvm-tools"), "{err}");
        fs::remove_dir_all(&empty).unwrap();
    }

    /// A toolchain that is only an identity: the link cache's key reads nothing else of it.
    fn toolchain_identified_as(identity: &str) -> Toolchain {
        Toolchain {
            identity: identity.to_string(),
            cargo: PathBuf::new(),
            rustc: PathBuf::new(),
            sysroot: PathBuf::new(),
            llvm_link: PathBuf::new(),
            llvm_dis: PathBuf::new(),
            opt: PathBuf::new(),
            llc: PathBuf::new(),
        }
    }

    fn rlib(stem: &str, bytes: &[u8]) -> Rlib {
        Rlib { path: PathBuf::from(format!("{stem}.rlib")), stem: stem.to_string(), bytes: bytes.to_vec() }
    }

    #[test]
    fn every_link_input_changes_the_cache_key() {
        let tools = toolchain_identified_as("nightly-2026-05-20\nrustc 1.97.0-nightly (e50aa6fba)");
        let rebuilt_tools = toolchain_identified_as("nightly-2026-05-20\nrustc 1.97.0-nightly (0123456789)");
        let rlibs = [rlib("libkernels-1", b"BC\xC0\xDE one"), rlib("libcore-2", b"BC\xC0\xDE two")];
        let cfgs = ["variant_a".to_string()];
        let base = LinkInputs {
            arch: Arch::SM_70,
            tools: &tools,
            cfgs: &cfgs,
            crate_name: "kernels",
            rlibs: &rlibs,
        };
        let key = base.key();
        assert_eq!(key.len(), 64, "{key}");
        assert_eq!(
            LinkInputs {
                rlibs: &[rlib("libkernels-1", b"BC\xC0\xDE one"), rlib("libcore-2", b"BC\xC0\xDE two")],
                ..base
            }
            .key(),
            key
        );

        let edited = [rlib("libkernels-1", b"BC\xC0\xDE One"), rlib("libcore-2", b"BC\xC0\xDE two")];
        let renamed = [rlib("libkernels-3", b"BC\xC0\xDE one"), rlib("libcore-2", b"BC\xC0\xDE two")];
        let reordered = [rlib("libcore-2", b"BC\xC0\xDE two"), rlib("libkernels-1", b"BC\xC0\xDE one")];
        // The same bytes split differently between two rlibs.
        let shifted = [rlib("libkernels-1", b"BC\xC0\xDE on"), rlib("libcore-2", b"eBC\xC0\xDE two")];
        let fewer = [rlib("libkernels-1", b"BC\xC0\xDE one")];
        let other_cfg = ["variant_b".to_string()];
        let more_cfgs = ["variant_a".to_string(), "variant_b".to_string()];
        let changed = [
            ("another architecture", LinkInputs { arch: Arch::SM_80, ..base }),
            ("another PTX version", LinkInputs { arch: Arch { sm: 70, ptx: 71 }, ..base }),
            ("another build of the toolchain", LinkInputs { tools: &rebuilt_tools, ..base }),
            ("another cfg", LinkInputs { cfgs: &other_cfg, ..base }),
            ("one more cfg", LinkInputs { cfgs: &more_cfgs, ..base }),
            ("no cfg", LinkInputs { cfgs: &[], ..base }),
            ("another crate name", LinkInputs { crate_name: "kernels2", ..base }),
            ("an edited rlib", LinkInputs { rlibs: &edited, ..base }),
            ("a renamed rlib", LinkInputs { rlibs: &renamed, ..base }),
            ("rlibs in another order", LinkInputs { rlibs: &reordered, ..base }),
            ("bytes moved between rlibs", LinkInputs { rlibs: &shifted, ..base }),
            ("one rlib fewer", LinkInputs { rlibs: &fewer, ..base }),
        ];
        for (what, inputs) in changed {
            assert_ne!(inputs.key(), key, "{what} kept the cache key");
        }
    }

    #[test]
    fn missing_kernel_crate_is_a_typed_error() {
        let err = Builder::new("/nonexistent/kernels").out_dir(std::env::temp_dir()).build().unwrap_err();
        assert!(matches!(err, BuildError::NoKernelCrate { .. }), "{err}");
    }
}
