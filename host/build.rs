//! Compiles warpsafe's own kernels (`../entry`) to PTX for every architecture the host
//! crate can select at run time, and records the list for `src/ptx.rs`; without the
//! `cuda` feature (emulator only) the list is empty and nothing is compiled.

use std::fmt::Write as _;
use warpsafe_build::{Arch, Builder};

fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // Without the GPU backend nothing loads PTX: no nightly build at all.
    if std::env::var_os("CARGO_FEATURE_CUDA").is_none() {
        std::fs::write(out.join("embedded_ptx.rs"), "&[]").expect("writing OUT_DIR/embedded_ptx.rs");
        return;
    }
    let archs = [Arch::SM_70, Arch::SM_80, Arch::SM_90];
    let built = match Builder::new("../entry").archs(&archs).build() {
        Ok(built) => built,
        Err(err) => {
            // A build script can only report by failing; print the builder's message whole.
            eprintln!("{err}");
            std::process::exit(1);
        }
    };
    let mut table = String::from("&[\n");
    for ptx in &built.ptx {
        writeln!(table, "    ({}, include_str!({:?})),", ptx.arch.sm(), ptx.path.display()).unwrap();
    }
    table.push(']');
    std::fs::write(out.join("embedded_ptx.rs"), table).expect("writing OUT_DIR/embedded_ptx.rs");
}
