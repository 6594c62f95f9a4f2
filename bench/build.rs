//! Builds the benchmark kernels twice for sm_90 (the benchmark GPU): once as users get
//! them, once with `--cfg warpsafe_unchecked`, so that the cost of the group checks is
//! the difference between two builds of the same source.

use warpsafe_build::{Arch, Builder};

fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target =
        out.ancestors().nth(4).expect("OUT_DIR is inside the target directory").join("warpsafe-build");
    for (cfg, dir) in [(None, "checked"), (Some("warpsafe_unchecked"), "unchecked")] {
        let mut builder =
            Builder::new("kernels").arch(Arch::SM_90).out_dir(out.join(dir)).target_dir(target.join(dir));
        if let Some(cfg) = cfg {
            builder = builder.cfg(cfg);
        }
        if let Err(err) = builder.build() {
            eprintln!("{err}");
            std::process::exit(1);
        }
    }
    println!("cargo:rerun-if-changed=kernels");
    println!("cargo:rerun-if-changed=../kernels/src");
}
