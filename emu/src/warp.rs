//! Warp collectives under independent thread scheduling.
//!
//! A lane arriving at a collective waits there until every lane of its mask has arrived
//! at the same collective with the same mask (and, for shuffles, the same segment
//! operand). Then all of them get their results at once and become runnable. Checked on
//! arrival: the caller is in the mask; every lane of the mask exists and has not exited;
//! no lane of the mask waits at another collective, or with another mask, whose own mask
//! names the caller (those two lanes wait for each other forever). Checked on completion:
//! every shuffle reads a lane of the mask.

use std::format;
use std::string::String;
use std::vec::Vec;

use super::site::Site;

/// The four `shfl.sync` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shfl {
    Idx,
    Up,
    Down,
    Bfly,
}

/// The four `vote.sync` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vote {
    Ballot,
    Any,
    All,
    Uni,
}

/// The `redux.sync` operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redux {
    Add,
    MinU,
    MaxU,
    MinS,
    MaxS,
    And,
    Or,
    Xor,
}

/// A warp collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Shfl(Shfl),
    Vote(Vote),
    /// `match.any.sync`, 64-bit when `true`.
    MatchAny(bool),
    /// `match.all.sync`, 64-bit when `true`.
    MatchAll(bool),
    Redux(Redux),
    Elect,
    SyncWarp,
}

impl Op {
    /// The PTX instruction.
    pub fn name(self) -> &'static str {
        match self {
            Op::Shfl(Shfl::Idx) => "shfl.sync.idx",
            Op::Shfl(Shfl::Up) => "shfl.sync.up",
            Op::Shfl(Shfl::Down) => "shfl.sync.down",
            Op::Shfl(Shfl::Bfly) => "shfl.sync.bfly",
            Op::Vote(Vote::Ballot) => "vote.sync.ballot",
            Op::Vote(Vote::Any) => "vote.sync.any",
            Op::Vote(Vote::All) => "vote.sync.all",
            Op::Vote(Vote::Uni) => "vote.sync.uni",
            Op::MatchAny(false) => "match.any.sync.b32",
            Op::MatchAny(true) => "match.any.sync.b64",
            Op::MatchAll(false) => "match.all.sync.b32",
            Op::MatchAll(true) => "match.all.sync.b64",
            Op::Redux(Redux::Add) => "redux.sync.add",
            Op::Redux(Redux::MinU) => "redux.sync.min.u32",
            Op::Redux(Redux::MaxU) => "redux.sync.max.u32",
            Op::Redux(Redux::MinS) => "redux.sync.min.s32",
            Op::Redux(Redux::MaxS) => "redux.sync.max.s32",
            Op::Redux(Redux::And) => "redux.sync.and",
            Op::Redux(Redux::Or) => "redux.sync.or",
            Op::Redux(Redux::Xor) => "redux.sync.xor",
            Op::Elect => "elect.sync",
            Op::SyncWarp => "bar.warp.sync",
        }
    }
}

/// A lane waiting at a warp collective: the operation, its mask, the lane operand `b`
/// and segment operand `c` of a shuffle, and its value (a predicate is 0 or 1).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wait {
    pub op: Op,
    pub mask: u32,
    pub b: u32,
    pub c: u32,
    pub value: u64,
    pub site: Site,
}

impl Wait {
    /// The collective instance: lanes meet when they wait with the same operation, mask
    /// and segment operand.
    pub fn key(&self) -> (Op, u32, u32) {
        (self.op, self.mask, self.c)
    }

    /// `shfl.sync.idx with mask 0x0000ffff`, with the segment operand for shuffles.
    pub fn describe(&self) -> String {
        match self.op {
            Op::Shfl(_) => format!("{} with mask {} (c = {:#x})", self.op.name(), hex(self.mask), self.c),
            _ => format!("{} with mask {}", self.op.name(), hex(self.mask)),
        }
    }
}

/// The source lane of a shuffle in `mode` by `lane` with operands `b` and `c`, and the
/// predicate: PTX's definition, with the caller's own lane when the source is out of
/// range.
pub(crate) fn shuffle_source(mode: Shfl, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let b = b & 31;
    let clamp = c & 31;
    let segmask = (c >> 8) & 31;
    let max_lane = (lane & segmask) | (clamp & !segmask);
    let min_lane = lane & segmask;
    let (source, in_range) = match mode {
        Shfl::Up => {
            let j = lane as i32 - b as i32;
            (j, j >= max_lane as i32)
        }
        Shfl::Down => {
            let j = lane + b;
            (j as i32, j <= max_lane)
        }
        Shfl::Bfly => {
            let j = lane ^ b;
            (j as i32, j <= max_lane)
        }
        Shfl::Idx => {
            let j = min_lane | (b & !segmask);
            (j as i32, j <= max_lane)
        }
    };
    if in_range {
        (source as u32, true)
    } else {
        (lane, false)
    }
}

/// What a warp's lanes are doing, kept up to date so that an arrival costs a few mask
/// operations: the lanes that exited, and each collective instance (operation, mask and
/// segment operand) that lanes wait at, with the lanes waiting there.
#[derive(Default)]
pub(crate) struct WarpState {
    pub exited: u32,
    pub(crate) waits: Vec<(Op, u32, u32, u32)>,
    /// Per `activemask` call site: how often each lane resolved it, and the mask it got
    /// last (lanes with the same count are in the same dynamic instance of the call).
    pub(crate) activemasks: Vec<ActiveMaskSite>,
    /// Shuffles that read a lane outside a mask from `activemask`, before that lane
    /// reached the same `activemask` instance (if it does, the instance was split).
    pub(crate) suspects: Vec<Suspect>,
}

/// One `activemask` call site of a warp.
pub(crate) struct ActiveMaskSite {
    pub(crate) site: Site,
    pub(crate) visits: [u32; 32],
    pub(crate) given: [u32; 32],
}

/// A shuffle by lane `reader` over the mask that `activemask` call `site` gave it in its
/// `instance`-th call, which read lane `source` outside that mask.
pub(crate) struct Suspect {
    pub(crate) site: usize,
    pub(crate) instance: u32,
    pub(crate) reader: u32,
    pub(crate) source: u32,
    pub(crate) shuffle: Wait,
}

/// How many suspect shuffles a warp keeps.
pub(crate) const SUSPECTS_KEPT: usize = 64;

impl WarpState {
    /// The lanes waiting at the instance `wait` belongs to.
    pub(crate) fn waiting(&mut self, wait: &Wait) -> &mut u32 {
        let i = match self.waits.iter().position(|w| (w.0, w.1, w.2) == wait.key()) {
            Some(i) => i,
            None => {
                self.waits.push((wait.op, wait.mask, wait.c, 0));
                self.waits.len() - 1
            }
        };
        &mut self.waits[i].3
    }

    /// A lane waiting at an instance whose mask names `lane`, if any.
    pub fn waiting_for(&self, lane: u32) -> Option<u32> {
        self.waits.iter().find(|w| w.1 & (1 << lane) != 0 && w.3 != 0).map(|w| w.3.trailing_zeros())
    }
}

/// `0x0000ffff`.
pub(crate) fn hex(mask: u32) -> String {
    format!("{mask:#010x}")
}

/// `lanes 0-15, 17` / `lane 3` / `no lanes`.
pub(crate) fn lanes(mask: u32) -> String {
    let mut runs = Vec::new();
    let mut lane = 0;
    while lane < 32 {
        if mask & (1 << lane) == 0 {
            lane += 1;
            continue;
        }
        let start = lane;
        while lane < 32 && mask & (1 << lane) != 0 {
            lane += 1;
        }
        runs.push(if lane - start == 1 { format!("{start}") } else { format!("{start}-{}", lane - 1) });
    }
    match mask.count_ones() {
        0 => String::from("no lanes"),
        1 => format!("lane {}", runs.join(", ")),
        _ => format!("lanes {}", runs.join(", ")),
    }
}
