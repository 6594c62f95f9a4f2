//! Builds the benchmark kernels for sm_90 (the benchmark GPU), as users get them: the
//! checked and unchecked (`Group::assume_present`) forms of each group benchmark are two
//! kernels of this one build.

use warpsafe_build::{Arch, Builder};

fn main() {
    if let Err(err) = Builder::new("kernels").arch(Arch::SM_90).build() {
        eprintln!("{err}");
        std::process::exit(1);
    }
    println!("cargo:rerun-if-changed=kernels");
    println!("cargo:rerun-if-changed=../kernels/src");
}
