//! Every misuse that warpsafe promises "does not compile", compiled and seen to fail, with
//! the compiler's message checked (`tests/compile-fail/*.rs` and their `.stderr`): launch
//! arguments of the wrong type, count, element type or borrow; one buffer as a launch's
//! input and output; a safe launch of an `unsafe` kernel; raw pointers in a safe kernel;
//! writing through a read-only view or at an index the thread does not own; forging or
//! leaking an owned index; a `Group` implemented outside warpsafe (its mask could leave out
//! the caller); shared memory of a type with invalid bit patterns; orderings PTX lacks; a
//! scanner or selector whose operator or predicate is for another element type; an
//! operator's kernel set (`Reduction`) implemented without `unsafe`; a histogram of a
//! sample type and channel layout that no kernel set covers.
//! (The checks rustc makes only when it generates code, a tile of 3 lanes and over-aligned
//! dynamic shared memory, are tested through the builder in `ptx.rs`.) Regenerate the
//! expected messages with `TRYBUILD=overwrite` after a compiler upgrade, and read the diff.

#[test]
fn misuse_does_not_compile() {
    // trybuild builds this package and its dependencies in a target directory of its own,
    // running their build scripts again; its cargo inherits this environment, so their
    // kernel builds reuse the workspace build's nested target directory (compiled `core`
    // and kernel crates, linked PTX) instead of compiling and linking everything again.
    if std::env::var_os(warpsafe_build::TARGET_DIR_VARIABLE).is_none() {
        std::env::set_var(warpsafe_build::TARGET_DIR_VARIABLE, warpsafe_tests::nvptx_target_dir());
    }
    trybuild::TestCases::new().compile_fail("compile-fail/*.rs");
}
