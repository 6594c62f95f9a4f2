//! Builds the example third-party kernel crate the way a user's host crate would, so the
//! GPU tests can load and launch its PTX (the GPU machine has no Rust toolchain).

fn main() {
    if let Err(err) = warpsafe_build::Builder::new("../examples/third-party-kernels").build() {
        eprintln!("{err}");
        std::process::exit(1);
    }
}
