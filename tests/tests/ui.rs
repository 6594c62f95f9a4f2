//! Misuse that must not compile (trybuild, host target): each `tests/ui/*.rs` fails with
//! the error in the `.stderr` beside it. `TRYBUILD=overwrite` rewrites the `.stderr` files.

#[test]
fn misuse_does_not_compile() {
    trybuild::TestCases::new().compile_fail("ui/*.rs");
}
