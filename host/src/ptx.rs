//! The PTX of warpsafe's own kernels, embedded at build time.

use crate::{entry_kernels, Program};

/// `(sm, PTX text)` for every architecture `build.rs` compiled `warpsafe-entry` for,
/// oldest first.
pub const EMBEDDED: &[(u32, &str)] = include!(concat!(env!("OUT_DIR"), "/embedded_ptx.rs"));

/// warpsafe's own kernels (`warpsafe-entry`): the embedded PTX, and the same kernels as
/// host code for the emulator.
pub static ENTRY: Program = Program::new("warpsafe-entry", EMBEDDED).with_kernels(&[
    entry_kernels::warpsafe_warp_sum_u32.untyped(),
    entry_kernels::warpsafe_warp_sum_f32.untyped(),
]);

/// The embedded PTX that a device of compute capability `major.minor` runs, or `None` when
/// the device is older than every embedded architecture (older than sm_70). A device runs
/// the newest entry whose `sm` is at most its own compute capability (PTX is forward
/// compatible: the driver compiles it for newer GPUs).
pub fn for_compute_capability(major: u32, minor: u32) -> Option<(u32, &'static str)> {
    ENTRY.ptx_for(major, minor)
}
