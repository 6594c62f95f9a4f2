//! The run-time checks' emulator side. The GPU tests a group's presence with
//! `activemask`; the emulator knows exactly which lanes wait at which collective and
//! checks every collective's rendezvous itself, so the group test has nothing to add.

use core::ffi::CStr;
use core::panic::Location;

use warpsafe_emu::device as emu;

/// All lanes, on the emulator: it checks every lane of a collective's mask exactly when
/// the collective runs (a missing lane is a deadlock or a mismatch there), where the GPU
/// can only compare the group's mask with `activemask`.
#[inline]
pub fn lanes_present() -> u32 {
    u32::MAX
}

/// Names the collectives the caller makes while it lives: `collective` (a group method
/// or a raw `warp::` function) called at `at`. The outermost site wins, so a group
/// method's user location survives the raw collectives it is built from.
#[derive(Debug)]
pub struct Site {
    opened: bool,
}

/// Opens a [`Site`] unless one is open already.
#[inline]
pub fn site(collective: &'static CStr, at: &'static Location<'static>) -> Site {
    Site { opened: emu::enter_site(collective, at, false) }
}

/// Opens a [`Site`] for a group collective whose presence check the GPU makes with
/// `activemask`: the emulator reports, as the GPU's trap does, lanes of the group that
/// reach the collective from different places or not at all.
#[inline]
pub fn checked_site(collective: &'static CStr, at: &'static Location<'static>) -> Site {
    Site { opened: emu::enter_site(collective, at, true) }
}

impl Drop for Site {
    fn drop(&mut self) {
        if self.opened {
            emu::leave_site();
        }
    }
}
