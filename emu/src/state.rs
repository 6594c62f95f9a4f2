//! The state of one launch that the emulated threads share: its blocks (and through
//! them its threads and warps), the scheduler's queue and generator, the memory shadows
//! and the first error. Data and the accessors every machine needs; the machines that
//! change it (barriers, collectives, memory, undefined values) are `impl State` blocks
//! in the modules above this one, and the scheduler (`engine`) sits on top.

use core::panic::Location;
use std::collections::HashMap;
use std::string::String;
use std::vec::Vec;

use super::block::Block;
use super::poison::Undefined;
use super::race::{Published, Shadow};
use super::site::{split, Site, Tid};
use super::thread::{Run, Thread};
use super::{Error, ErrorKind, Options, Shape};

/// Distinct polls remembered per thread and epoch (a spin loop polls one or two flags).
const POLLS_KEPT: usize = 8;

/// A SplitMix64 generator: small, fast and the same on every platform.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next() as u128 * n as u128) >> 64) as usize
    }
}

/// Everything about one launch that the threads share.
pub(crate) struct State {
    pub kernel: &'static str,
    pub config: Shape,
    pub options: Options,
    pub rng: Rng,
    pub slots: Vec<Option<Block>>,
    pub(crate) next_block: u64,
    pub(crate) grid_blocks: u64,
    pub runnable: Vec<Tid>,
    pub error: Option<Error>,
    /// Switch points since the last progress (a memory change, a new value read, a
    /// completed collective or barrier, a thread that finished or started).
    pub(crate) idle: u64,
    /// Every global-memory access of the launch, for the race check.
    pub global_shadow: Shadow,
    /// Clocks published at addresses by releases (`true`: at device or system scope).
    pub published: HashMap<(usize, bool), Published>,
    /// The undefined values the launch produced.
    pub undefined: Undefined,
    /// Counts memory changes, completed barriers, finished and started threads: a thread
    /// that reads the same value at the same address twice in one epoch is spinning.
    pub epoch: u64,
}

impl State {
    pub fn block(&self, t: Tid) -> &Block {
        match &self.slots[split(t).0] {
            Some(block) => block,
            None => unreachable!("a thread of an empty slot ran"),
        }
    }

    pub fn block_mut(&mut self, t: Tid) -> &mut Block {
        match &mut self.slots[split(t).0] {
            Some(block) => block,
            None => unreachable!("a thread of an empty slot ran"),
        }
    }

    pub fn thread(&self, t: Tid) -> &Thread {
        &self.block(t).threads[split(t).1 as usize]
    }

    pub fn thread_mut(&mut self, t: Tid) -> &mut Thread {
        &mut self.block_mut(t).threads[split(t).1 as usize]
    }

    /// The site of a call made at `at` by thread `t`: its open site, if any, else `at`.
    pub fn site(&self, t: Tid, at: &'static Location<'static>) -> Site {
        self.thread(t).site.unwrap_or(Site { at, via: None, group_checked: false })
    }

    /// Records the launch's first error.
    pub fn fail(&mut self, kind: ErrorKind, message: String) {
        if self.error.is_none() {
            self.error = Some(Error::new(kind, self.options.seed, self.kernel, message));
        }
    }

    /// Blocks in the grid.
    pub fn grid_blocks(&self) -> u64 {
        self.grid_blocks
    }

    /// Blocks of the grid that have not started yet (waiting for a resident slot).
    pub fn blocks_not_started(&self) -> u64 {
        self.grid_blocks - self.next_block
    }

    /// Something changed that may let a spinning thread go on.
    pub fn progress(&mut self) {
        self.idle = 0;
        self.epoch += 1;
    }

    /// A collective completed: the lanes moved on (for the step budget), though memory did
    /// not change (a warp may vote in a spin loop). Lanes that met a spinning lane there
    /// spin with it.
    pub fn collective_done(&mut self, members: impl Iterator<Item = Tid> + Clone) {
        self.idle = 0;
        let epoch = self.epoch;
        if members.clone().any(|m| self.thread(m).spinning_epoch == epoch) {
            for m in members {
                self.thread_mut(m).spinning_epoch = epoch;
            }
        }
    }

    /// Makes thread `t` runnable.
    pub fn wake(&mut self, t: Tid) {
        self.thread_mut(t).run = Run::Ready;
        self.runnable.push(t);
    }

    /// Notes a switch point's memory access for the livelock check: a write that changes
    /// memory is progress; a read of a value the thread had not just seen at that address
    /// resets the step budget; a poll (`poll`: an atomic, volatile or ordered load) that
    /// returns what an earlier poll of the same address returned in this epoch marks the
    /// thread spinning.
    pub fn note_access(&mut self, t: Tid, addr: usize, seen: u64, wrote: bool, poll: bool) {
        let epoch = self.epoch;
        let thread = self.thread_mut(t);
        let fresh = thread.last_load != (addr, seen);
        thread.last_load = (addr, seen);
        if poll && !wrote {
            if thread.polls_epoch != epoch {
                thread.polls.clear();
                thread.polls_epoch = epoch;
            }
            if thread.polls.contains(&(addr, seen)) {
                thread.spinning_epoch = epoch;
            } else if thread.polls.len() < POLLS_KEPT {
                thread.polls.push((addr, seen));
            }
        }
        if wrote {
            self.progress();
        } else if fresh {
            self.idle = 0;
        }
    }
}
