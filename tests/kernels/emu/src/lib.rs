//! Kernels for the CPU emulator's tests (`tests/tests/emu_*.rs`): correct kernels that
//! must give the right answer under every seed ([`correct`]), and kernels with planted
//! bugs that the emulator must flag ([`misuse`]). They build for nvptx64 too (the tests'
//! build script compiles every test-kernel crate), so they are valid GPU code, bugs
//! included.
#![no_std]

pub mod correct;
pub mod misuse;
