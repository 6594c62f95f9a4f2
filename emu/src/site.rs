//! Who and where: thread ids, source sites, and memory-ordering strengths. The bottom
//! layer of the emulator's modules: plain data that every other module names.

use core::ffi::CStr;
use core::fmt;
use core::panic::Location;

/// A thread of a resident block: its block's slot in the upper bits, its linear index in
/// the block (below 1024) in the lower ten.
pub(crate) type Tid = u32;

const LINEAR_BITS: u32 = 10;

pub(crate) fn tid(slot: usize, linear: u32) -> Tid {
    ((slot as u32) << LINEAR_BITS) | linear
}

pub(crate) fn split(t: Tid) -> (usize, u32) {
    ((t >> LINEAR_BITS) as usize, t & ((1 << LINEAR_BITS) - 1))
}

/// Where a thread is in the kernel's source: the caller's location, and the collective
/// of the safe layer that made the call (`Group::ballot`, `warp::shfl_idx_sync`, ...).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Site {
    pub at: &'static Location<'static>,
    pub via: Option<&'static CStr>,
    /// A checked group collective: its lanes must all reach it at this place (the GPU's
    /// `activemask` test).
    pub group_checked: bool,
}

impl Site {
    /// A site at the caller, for unit tests.
    #[cfg(test)]
    #[track_caller]
    pub fn test() -> Site {
        Site { at: Location::caller(), via: None, group_checked: false }
    }

    pub fn same_place(&self, other: &Site) -> bool {
        self.at.line() == other.at.line()
            && self.at.column() == other.at.column()
            && self.at.file() == other.at.file()
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}:{}:{}", self.at.file(), self.at.line(), self.at.column())?;
        if let Some(via) = self.via {
            let via = via.to_string_lossy();
            if via.contains("::") {
                write!(f, " (in {via})")?;
            } else {
                write!(f, " (in Group::{via})")?;
            }
        }
        Ok(())
    }
}

/// Memory-ordering strength of an access or fence, for the race check's
/// synchronisation edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
}

impl Order {
    pub fn acquires(self) -> bool {
        matches!(self, Order::Acquire | Order::AcqRel)
    }
    pub fn releases(self) -> bool {
        matches!(self, Order::Release | Order::AcqRel)
    }
}
