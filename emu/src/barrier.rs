//! Block barriers: the sixteen barriers of a block and what a thread waiting at one
//! waits for (the machine that completes them is `barrier_sync`).
//!
//! `barrier.sync id` (no count) completes when every thread of the block that has not
//! exited has arrived at barrier `id` (Volta counts threads, not warps; exited threads no
//! longer count). `barrier.sync id, count` completes when `count` threads have arrived.
//! Threads may arrive through different call sites (warpsafe uses the non-`.aligned`
//! forms), but all arrivals of one use of a barrier must use the same form and count.

use std::format;
use std::string::String;
use std::vec::Vec;

use super::site::Site;

/// Barriers per block (`barrier.sync` ids 0 to 15).
pub(crate) const BARRIERS: u32 = 16;

/// The operation threads perform at a block barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarOp {
    /// `barrier.sync`.
    Sync,
    /// `barrier.red.popc.u32`.
    Popc,
    /// `barrier.red.and.pred`.
    And,
    /// `barrier.red.or.pred`.
    Or,
}

impl BarOp {
    fn name(self) -> &'static str {
        match self {
            BarOp::Sync => "barrier.sync",
            BarOp::Popc => "barrier.red.popc",
            BarOp::And => "barrier.red.and",
            BarOp::Or => "barrier.red.or",
        }
    }
}

/// A thread waiting at a block barrier.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wait {
    pub id: u32,
    pub op: BarOp,
    pub count: Option<u32>,
    pub predicate: bool,
    pub site: Site,
}

impl Wait {
    /// `barrier.sync 0`, `barrier.red.popc 1, count 64`, ...
    pub fn describe(&self) -> String {
        match self.count {
            Some(count) => format!("{} {} with thread count {count}", self.op.name(), self.id),
            None => format!("{} {}", self.op.name(), self.id),
        }
    }
}

/// One barrier of a block: the threads (linear indices) waiting at its current use.
#[derive(Default)]
pub(crate) struct Barrier {
    pub arrived: Vec<u32>,
}
