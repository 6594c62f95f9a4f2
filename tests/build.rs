//! Builds, the way a user's host crate would, every kernel crate the GPU tests launch (the
//! GPU machine has no Rust toolchain): the example third-party crate for sm_70, and each
//! test-kernel crate under `tests/kernels/` for sm_70, sm_80 and sm_90, so that one GPU
//! can run both the fallback and the hardware paths. `OUT_DIR/test_kernels.rs` lists them
//! with their LLVM IR; `OUT_DIR/test_programs.rs` lists each crate's PTX by architecture,
//! the form `warpsafe_host::Program` takes.

use std::fmt::Write as _;
use warpsafe_build::{Arch, Builder};

fn build(builder: Builder) -> warpsafe_build::Built {
    builder.build().unwrap_or_else(|err| {
        eprintln!("{err}");
        std::process::exit(1);
    })
}

fn main() {
    build(Builder::new("../examples/third-party-kernels"));
    let mut crates: Vec<_> = std::fs::read_dir("kernels")
        .expect("tests/kernels exists")
        .map(|e| e.expect("readable tests/kernels").path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    crates.sort();
    let mut table = String::from("&[\n");
    let mut programs = String::from("&[\n");
    for dir in crates {
        let built = build(Builder::new(&dir).archs(&[Arch::SM_70, Arch::SM_80, Arch::SM_90]));
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        writeln!(programs, "    ({name:?}, &[").unwrap();
        for ptx in &built.ptx {
            writeln!(
                table,
                "    ({name:?}, {}, include_str!({:?}), {:?}),",
                ptx.arch.sm(),
                ptx.path.display(),
                ptx.llvm_ir.display()
            )
            .unwrap();
            writeln!(programs, "        ({}, include_str!({:?})),", ptx.arch.sm(), ptx.path.display())
                .unwrap();
        }
        writeln!(programs, "    ]),").unwrap();
    }
    table.push(']');
    programs.push(']');
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("test_kernels.rs"), table).expect("writing OUT_DIR/test_kernels.rs");
    std::fs::write(out.join("test_programs.rs"), programs).expect("writing OUT_DIR/test_programs.rs");
    println!("cargo:rerun-if-changed=kernels");
}
