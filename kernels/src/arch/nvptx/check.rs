//! The run-time checks' hardware side: the group presence test, and the source-site
//! marker that only the emulator uses.

use core::ffi::CStr;
use core::panic::Location;

/// The lanes present with the caller when a lane of `mask` is missing, `None` when all
/// of `mask` is present: one `activemask.b32`, a compare and a branch. `activemask` shows
/// the lanes converged with the caller, so lanes that reach the same collective on paths
/// that never join count as missing.
#[inline(always)]
pub fn group_lanes_missing(mask: u32) -> Option<u32> {
    let present = super::activemask();
    if present & mask != mask {
        Some(present)
    } else {
        None
    }
}

/// Marks the collectives that follow, while it lives, as made by `collective` at a user's
/// source location. On the GPU it is zero-sized and does nothing; the emulator names the
/// site in its error messages.
#[derive(Debug)]
pub struct Site;

/// Starts a [`Site`] (a no-op on the GPU).
#[inline(always)]
pub fn site(collective: &'static CStr, at: &'static Location<'static>) -> Site {
    let _ = (collective, at);
    Site
}
