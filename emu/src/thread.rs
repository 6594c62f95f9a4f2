//! One emulated thread: where it is, what it waits for, and what it knows (its view of
//! other blocks' clocks, its last fence, its recent polls for the spin check).

use std::vec::Vec;

use corosensei::Yielder;

use super::barrier;
use super::race::{Clock, Published, Remote};
use super::site::Site;
use super::warp;
use warpsafe_types::Dim3;

/// What an emulated thread is doing.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Run {
    /// Running, or runnable.
    Ready,
    /// At an `activemask` (runnable: the scheduler resolves it when it picks the thread).
    ActiveMask(Site),
    /// Waiting at a warp collective.
    Warp(warp::Wait),
    /// Waiting at a block barrier.
    Barrier(barrier::Wait),
    /// Finished.
    Exited,
}

/// One emulated thread.
pub(crate) struct Thread {
    pub idx: Dim3,
    pub run: Run,
    /// The result of the collective or barrier it waited at.
    pub result: (u64, bool),
    pub(crate) yielder: *const Yielder<(), ()>,
    /// The site that names the collectives it makes now (see `crate::arch::site`).
    pub site: Option<Site>,
    /// Its last switch point.
    pub last: Option<Site>,
    /// Address and value of its last load, to tell a spin from progress.
    pub(crate) last_load: (usize, u64),
    /// The polls (atomic, volatile or ordered loads: address and value) it made in the
    /// epoch `polls_epoch`.
    pub(crate) polls: Vec<(usize, u64)>,
    pub(crate) polls_epoch: u64,
    /// What it knows of the clocks of other blocks' threads (release/acquire edges).
    pub remote: Remote,
    /// Its clock at its last fence: what its later relaxed atomic writes publish.
    pub fenced: Option<Published>,
    /// What its relaxed atomic reads saw since its last fence: what the next fence takes.
    pub seen: Option<Clock>,
    /// The epoch in which it was seen spinning: it re-read a location and got the value
    /// it had read there before in the same epoch, or met a spinning lane at a collective.
    pub spinning_epoch: u64,
}

impl Thread {
    /// Address and value of its last load.
    pub fn last_load(&self) -> (usize, u64) {
        self.last_load
    }

    pub fn new(idx: Dim3) -> Thread {
        Thread {
            idx,
            run: Run::Ready,
            result: (0, false),
            yielder: core::ptr::null(),
            site: None,
            last: None,
            last_load: (0, 0),
            polls: Vec::new(),
            polls_epoch: 0,
            remote: Remote::default(),
            fenced: None,
            seen: None,
            spinning_epoch: 0,
        }
    }
}
