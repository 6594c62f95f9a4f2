//! The hardware layer: the one place that knows what it runs on.
//!
//! Compiled for `nvptx64-nvidia-cuda`, every function here is a thin, `#[inline(always)]`
//! wrapper over one LLVM NVVM intrinsic or one PTX instruction. Warp collectives go
//! through intrinsics and never through `asm!`: LLVM declares the
//! `llvm.nvvm.shfl.sync.*` family `convergent`, which forbids hoisting or sinking a call
//! into or out of control flow that some lanes skip; rustc emits `asm!` without that
//! attribute on this toolchain.
//!
//! Compiled for any other target, the same functions (same names, same signatures) drive
//! the CPU emulator (`warpsafe::emu`, host only): each emulated GPU thread runs on its own coroutine,
//! and every function that communicates with other threads (a collective, a barrier, an
//! atomic, a fence, a volatile or shared-memory access) is a point where the emulator's
//! seeded scheduler may switch threads, and where it checks the rules below.
//!
//! All collectives here are `unsafe fn`: the hardware cannot check the rules in their
//! `# Safety` sections, and breaking one is undefined behaviour on the GPU (a hang, or
//! garbage) and an error of the launch on the emulator. The safe layers above
//! ([`crate::group`]) establish those rules by construction.

#[cfg(target_arch = "nvptx64")]
mod nvptx;
#[cfg(target_arch = "nvptx64")]
pub use nvptx::*;

#[cfg(not(target_arch = "nvptx64"))]
mod host;
#[cfg(not(target_arch = "nvptx64"))]
pub use host::*;

/// The mask naming all 32 lanes of a warp.
pub const FULL_MASK: u32 = u32::MAX;

/// Number of lanes in a warp on every NVIDIA GPU from sm_70 on.
pub const WARP_SIZE: u32 = 32;

/// What a read-only 16-byte global load ([`load_global_nc_16`], [`load_global_nc_16_b64`])
/// asks the L2 cache to fetch: [`NoPrefetch`] or [`Prefetch256B`]. Sealed. A compile-time
/// choice per call site, since it helps one access pattern and costs another (measured
/// below); the emulator reads the same bytes either way.
pub trait L2Prefetch: l2_prefetch::Sealed {
    /// Whether the sm_90 build's load carries PTX's `.L2::256B` prefetch-size qualifier
    /// (PTX ISA 7.4; the sm_70 and sm_80 builds declare ISA 7.0 and never do).
    const WHOLE_256_BYTES: bool;
}

mod l2_prefetch {
    pub trait Sealed {}
}

/// The L2 cache fetches the 32-byte sectors the load touches: for reads that stream
/// through memory (grid reductions, long segments, histograms), where a warp's load
/// already covers 512 contiguous bytes. Measured on an H200 (2026-11-28, one command,
/// binaries with and without the hint): the `f32` grid sum at 2^28 took 241.2 us without it
/// against 258.8 with it (99.3 % of the read roofline against 92.3 %; CUB 243.3), the
/// segmented block strategy at L = 65536 240 against 257 us, the warp strategy at L = 1024
/// to 16384 246-249 against 259-263; on an H100 the hint had changed none of these.
#[derive(Clone, Copy, Debug)]
pub enum NoPrefetch {}

/// The L2 cache fetches the whole 256-byte block around the access: for short reads
/// scattered over neighbouring data (the segmented reduce's windows of tiny and short
/// segments, each a few vectors, whose neighbours the same warp reads next), and the
/// fixed form's packed warp rows (segments of at most 16 bytes). Measured: the power-law
/// mix of segments on an H100 (2026-11-27) took 680-682 us at 2^28 against 704-705
/// without it, and on an H200 (2026-11-28) 99.0 against 103.8-104.1 at 2^25; `f32`
/// segments of length 1 in warp rows 36.8 against 37.7 us at 2^24 on that H200.
#[derive(Clone, Copy, Debug)]
pub enum Prefetch256B {}

impl l2_prefetch::Sealed for NoPrefetch {}
impl l2_prefetch::Sealed for Prefetch256B {}
impl L2Prefetch for NoPrefetch {
    const WHOLE_256_BYTES: bool = false;
}
impl L2Prefetch for Prefetch256B {
    const WHOLE_256_BYTES: bool = true;
}

/// Writes `at`'s file name into `file` as a NUL-terminated string for `vprintf` (the end
/// of a path longer than 159 bytes is kept): `Location::file` is not NUL-terminated.
/// In place, not returned: a returned array is a copy that costs the grid reductions
/// registers (ptxas inlines the trap paths; `reduce_ptx.rs` measures it).
#[inline(always)]
pub(crate) fn c_file_name(at: &core::panic::Location<'_>, file: &mut [u8; 160]) {
    let name = at.file().as_bytes();
    let keep = name.len().min(file.len() - 1);
    for (to, from) in file.iter_mut().zip(&name[name.len() - keep..]) {
        *to = *from;
    }
}

/// FNV-1a hash of a Rust module path: the suffix that makes each shared array's PTX name
/// unique within a linked module.
#[doc(hidden)]
pub const fn path_hash(path: &str) -> u64 {
    let bytes = path.as_bytes();
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    let mut i = 0;
    while i < bytes.len() {
        hash = (hash ^ bytes[i] as u64).wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash
}

/// The alignment a shared array is declared with: its element's, and at least 4 bytes.
#[doc(hidden)]
pub const fn shared_alignment(element_alignment: usize) -> usize {
    if element_alignment < 4 {
        4
    } else {
        element_alignment
    }
}

pub use warpsafe_types::{Dim3, LoadSem, Memory, RmwSem, Scope, StoreSem};
