//! Compiles the kernel crate to PTX for Volta (runs on every newer GPU too) and Hopper.
use warpsafe_build::{Arch, Builder};

fn main() {
    if let Err(err) = Builder::new("../kernels").archs(&[Arch::SM_70, Arch::SM_90]).build() {
        // A build script reports by failing: print the builder's message whole.
        eprintln!("{err}");
        std::process::exit(1);
    }
}
