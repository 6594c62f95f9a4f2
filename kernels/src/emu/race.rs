//! The shared-memory race check: vector clocks, like `compute-sanitizer racecheck` but
//! exact for the interleaving that ran.
//!
//! Each thread of a block has a vector clock over the block's threads. A barrier
//! (`barrier.sync`, `barrier.red`, a named barrier) and `bar.warp.sync` join the clocks
//! of the threads that pass it together; atomics and fences add acquire/release edges
//! (a release write publishes the writer's clock at the address, an acquire read takes
//! it; a relaxed write after a release fence publishes the fence's clock, and an acquire
//! fence takes what relaxed reads before it saw). Other collectives (shuffles, votes)
//! order no memory on the GPU, so they add no edge here.
//!
//! Every byte of shared memory remembers its last write and the reads since; an access
//! conflicts with an earlier one by another thread, at least one of them a write, when the
//! earlier one does not happen before it.

use std::collections::HashMap;
use std::vec;
use std::vec::Vec;

use super::engine::{Order, Site};

/// One access to a byte: the thread (linear index in the block), its clock then, where.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    pub thread: u32,
    clock: u32,
    pub site: Site,
    pub write: bool,
}

#[derive(Default)]
struct Shadow {
    write: Option<Access>,
    reads: Vec<Access>,
}

/// The race-check state of one block.
pub(crate) struct Race {
    /// Thread `t`'s vector clock is `clocks[t * threads..(t + 1) * threads]`.
    clocks: Vec<u32>,
    threads: usize,
    shadow: HashMap<usize, Shadow>,
    /// Clocks published at atomic addresses by release writes.
    published: HashMap<usize, Vec<u32>>,
    /// Each thread's clock at its last release fence.
    fenced: Vec<Option<Vec<u32>>>,
    /// What each thread's relaxed atomic reads saw since its last acquire fence.
    seen: Vec<Option<Vec<u32>>>,
}

fn join(into: &mut [u32], from: &[u32]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}

impl Race {
    pub fn new(threads: usize) -> Race {
        let mut clocks = vec![0; threads * threads];
        for t in 0..threads {
            clocks[t * threads + t] = 1;
        }
        Race {
            clocks,
            threads,
            shadow: HashMap::new(),
            published: HashMap::new(),
            fenced: vec![None; threads],
            seen: vec![None; threads],
        }
    }

    fn clock(&self, t: usize) -> &[u32] {
        &self.clocks[t * self.threads..(t + 1) * self.threads]
    }

    fn clock_mut(&mut self, t: usize) -> &mut [u32] {
        &mut self.clocks[t * self.threads..(t + 1) * self.threads]
    }

    /// The threads `participants` pass a barrier together.
    pub fn synchronise(&mut self, participants: &[u32]) {
        let Some(&first) = participants.first() else { return };
        let mut joined = self.clock(first as usize).to_vec();
        for &p in participants {
            join(&mut joined, self.clock(p as usize));
        }
        for &p in participants {
            let clock = self.clock_mut(p as usize);
            clock.copy_from_slice(&joined);
            clock[p as usize] += 1;
        }
    }

    /// Thread `thread` made an atomic (or volatile) access to `addr` with `order`,
    /// reading and/or writing it.
    pub fn atomic(&mut self, thread: u32, addr: usize, order: Order, read: bool, write: bool) {
        let t = thread as usize;
        if write {
            let publish =
                if order.releases() { Some(self.clock(t).to_vec()) } else { self.fenced[t].clone() };
            if let Some(clock) = publish {
                match self.published.get_mut(&addr) {
                    Some(at) => join(at, &clock),
                    None => {
                        self.published.insert(addr, clock);
                    }
                }
                if order.releases() {
                    self.clock_mut(t)[t] += 1;
                }
            }
        }
        if read {
            if let Some(at) = self.published.get(&addr) {
                if order.acquires() {
                    let threads = self.threads;
                    join(&mut self.clocks[t * threads..(t + 1) * threads], at);
                } else {
                    match &mut self.seen[t] {
                        Some(seen) => join(seen, at),
                        None => self.seen[t] = Some(at.clone()),
                    }
                }
            }
        }
    }

    /// Thread `thread` executed a fence (every fence acquires and releases).
    pub fn fence(&mut self, thread: u32) {
        let t = thread as usize;
        if let Some(seen) = self.seen[t].take() {
            join(self.clock_mut(t), &seen);
        }
        self.fenced[t] = Some(self.clock(t).to_vec());
        self.clock_mut(t)[t] += 1;
    }

    /// Thread `thread` reads or writes `bytes` bytes at `addr` of shared memory: the
    /// earlier access it races with, if any, and the address of the byte.
    pub fn access(
        &mut self,
        thread: u32,
        addr: usize,
        bytes: usize,
        write: bool,
        site: Site,
    ) -> Option<(Access, usize)> {
        let threads = self.threads;
        let clock = &self.clocks[thread as usize * threads..(thread as usize + 1) * threads];
        let now = Access { thread, clock: clock[thread as usize], site, write };
        let unordered = |a: &Access| a.thread != thread && a.clock > clock[a.thread as usize];
        for byte in addr..addr + bytes {
            let shadow = self.shadow.entry(byte).or_default();
            if let Some(w) = shadow.write.filter(unordered) {
                return Some((w, byte));
            }
            if write {
                if let Some(r) = shadow.reads.iter().find(|r| unordered(r)) {
                    return Some((*r, byte));
                }
                shadow.write = Some(now);
                shadow.reads.clear();
            } else {
                match shadow.reads.iter_mut().find(|r| r.thread == thread) {
                    Some(r) => *r = now,
                    None => shadow.reads.push(now),
                }
            }
        }
        None
    }
}
