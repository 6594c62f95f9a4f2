//! The link cache (see the crate docs): a second build of a kernel crate into another output
//! directory copies the first one's PTX and IR out of the cache instead of running the link
//! steps, and a cache entry missing a file is linked again. The kernel crate is the smallest
//! in the repository, built for sm_70 in the nested target directory the workspace's own
//! build uses, where `core` and the crate are usually compiled already.

use std::fs;
use std::path::{Path, PathBuf};
use warpsafe_build::{Arch, Builder, Built};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("build/ is inside the workspace").to_path_buf()
}

/// An empty output directory of this test's own.
fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpsafe-link-cache-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("creating a scratch directory");
    dir
}

/// The link steps' scratch directory: it exists in `out` only if that build linked.
fn linked_here(out: &Path) -> bool {
    out.join("third_party_kernels.sm_70.link").exists()
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|err| panic!("reading {}: {err}", path.display()))
}

#[test]
fn a_second_build_copies_the_cached_link_and_a_partial_entry_is_linked_again() {
    let kernels = workspace_root().join("examples/third-party-kernels");
    let target_dir = workspace_root().join("target/warpsafe-build");
    let build = |out: &Path| -> Built {
        Builder::new(&kernels)
            .arch(Arch::SM_70)
            .out_dir(out)
            .target_dir(&target_dir)
            .build()
            .unwrap_or_else(|err| panic!("{err}"))
    };

    let first_out = out_dir("first");
    let first = build(&first_out);
    let first = &first.ptx[0];
    let ptx = read(&first.path);
    let ir = read(&first.llvm_ir);
    assert!(!first.kernels.is_empty());
    // The entry the first build used or made, found by its content, with any other entry
    // of the same PTX (left by earlier versions of the builder, whose keys differ).
    let cache = target_dir.join("sm_70/linked");
    let entries: Vec<PathBuf> = fs::read_dir(&cache)
        .unwrap_or_else(|err| panic!("no link cache at {}: {err}", cache.display()))
        .map(|e| e.expect("a readable cache directory").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx") && read(p) == ptx)
        .collect();
    assert!(!entries.is_empty(), "the first build's PTX is not in the cache");

    let second_out = out_dir("second");
    let second = build(&second_out);
    let second = &second.ptx[0];
    assert!(!linked_here(&second_out), "the second build ran the link steps instead of using the cache");
    assert_eq!(second.path, second_out.join("third_party_kernels.sm_70.ptx"));
    assert!(read(&second.path) == ptx, "the cached PTX differs from the first build's");
    assert!(read(&second.llvm_ir) == ir, "the cached IR differs from the first build's");
    assert_eq!(second.kernels, first.kernels);

    // An entry without its kernel list (deleted half-way, say) is not used: the build links.
    let kernel_lists: Vec<PathBuf> = entries.iter().map(|entry| entry.with_extension("kernels")).collect();
    for list in &kernel_lists {
        match fs::remove_file(list) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                panic!("removing {}: {err}", list.display())
            }
            _ => {}
        }
    }
    let third_out = out_dir("third");
    let third = build(&third_out);
    let third = &third.ptx[0];
    assert!(linked_here(&third_out), "a cache entry without its kernel list was used");
    assert!(read(&third.path) == ptx, "linking again gave other PTX");
    assert_eq!(third.kernels, first.kernels);
    assert!(kernel_lists.iter().any(|list| list.is_file()), "linking again did not complete the cache entry");

    for out in [first_out, second_out, third_out] {
        fs::remove_dir_all(out).expect("removing a scratch directory");
    }
}
