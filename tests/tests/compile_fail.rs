//! Every misuse that warpsafe promises "does not compile", compiled and seen to fail, with
//! the compiler's message checked (`tests/compile-fail/*.rs` and their `.stderr`): launch
//! arguments of the wrong type, count or borrow; a safe launch of an `unsafe` kernel; raw
//! pointers in a safe kernel; writing through a read-only view or at an index the thread
//! does not own; forging or leaking an owned index; shared memory of a type with invalid
//! bit patterns; orderings PTX lacks; tile sizes that do not exist; over-aligned dynamic
//! shared memory. Regenerate the expected messages with `TRYBUILD=overwrite` after a
//! compiler upgrade, and read the diff.

#[test]
fn misuse_does_not_compile() {
    trybuild::TestCases::new().compile_fail("compile-fail/*.rs");
}
