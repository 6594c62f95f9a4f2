//! The run-time checks' hardware side: the group presence test, and the source-site
//! marker that only the emulator uses.

use core::ffi::CStr;
use core::panic::Location;

/// The lanes present with the caller, for the group presence check (a lane of the
/// group's mask that is not here is missing): `activemask.b32`. `activemask` shows the
/// lanes converged with the caller, so lanes that reach the same collective on paths that
/// never join count as missing.
#[inline(always)]
pub fn lanes_present() -> u32 {
    super::activemask()
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

/// Starts a [`Site`] for a group collective whose lanes the group checks with
/// [`lanes_present`] (a no-op on the GPU, where that check is the `activemask` test).
#[inline(always)]
pub fn checked_site(collective: &'static CStr, at: &'static Location<'static>) -> Site {
    site(collective, at)
}
