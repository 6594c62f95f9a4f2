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
//!
//! Whole-block barriers are the common case and cost O(threads), not O(threads²): no
//! thread knows more of thread `u`'s clock than `u` itself, so the join of all clocks is
//! the vector of own components, which becomes a shared *floor*; each thread keeps only
//! what it learned since (entries tagged with the floor's generation, so a new floor
//! discards them all at once).

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
    threads: usize,
    /// What every thread knows of every clock since the last whole-block barrier.
    floor: Vec<u32>,
    /// `local[t * threads + u]`: `(generation, value)`, what thread `t` learned of `u`'s
    /// clock beyond the floor; valid while `generation` is the current one.
    local: Vec<(u32, u32)>,
    generation: u32,
    shadow: HashMap<usize, Shadow>,
    /// Clocks published at atomic addresses by release writes.
    published: HashMap<usize, Vec<u32>>,
    /// Each thread's clock at its last release fence.
    fenced: Vec<Option<Vec<u32>>>,
    /// What each thread's relaxed atomic reads saw since its last acquire fence.
    seen: Vec<Option<Vec<u32>>>,
}

/// Thread `t`'s knowledge of thread `u`'s clock, from the floor and its own entries.
fn known(floor: &[u32], local: &[(u32, u32)], generation: u32, threads: usize, t: usize, u: usize) -> u32 {
    match local[t * threads + u] {
        (g, value) if g == generation => value.max(floor[u]),
        _ => floor[u],
    }
}

fn join(into: &mut [u32], from: &[u32]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}

impl Race {
    pub fn new(threads: usize) -> Race {
        let mut race = Race {
            threads,
            floor: vec![0; threads],
            local: vec![(0, 0); threads * threads],
            generation: 1,
            shadow: HashMap::new(),
            published: HashMap::new(),
            fenced: vec![None; threads],
            seen: vec![None; threads],
        };
        for t in 0..threads {
            race.tick(t);
        }
        race
    }

    /// Thread `t`'s knowledge of thread `u`'s clock.
    fn get(&self, t: usize, u: usize) -> u32 {
        known(&self.floor, &self.local, self.generation, self.threads, t, u)
    }

    /// Thread `t` learns that `u`'s clock is at least `value`.
    fn raise(&mut self, t: usize, u: usize, value: u32) {
        if value > self.get(t, u) {
            self.local[t * self.threads + u] = (self.generation, value);
        }
    }

    /// Thread `t` starts a new epoch of its own.
    fn tick(&mut self, t: usize) {
        let next = self.get(t, t) + 1;
        self.local[t * self.threads + t] = (self.generation, next);
    }

    /// Thread `t`'s whole vector clock.
    fn clock(&self, t: usize) -> Vec<u32> {
        (0..self.threads).map(|u| self.get(t, u)).collect()
    }

    /// Thread `t` joins `from` into its clock.
    fn join_into(&mut self, t: usize, from: &[u32]) {
        for (u, &value) in from.iter().enumerate() {
            self.raise(t, u, value);
        }
    }

    /// The threads `participants` pass a barrier together; `whole_block` when they are
    /// every thread of the block that has not exited.
    pub fn synchronise(&mut self, participants: &[u32], whole_block: bool) {
        if whole_block {
            let mut member = vec![false; self.threads];
            for &p in participants {
                member[p as usize] = true;
            }
            // A member's own component is the largest anyone knows; an exited thread's
            // is what the members know of it.
            let floor: Vec<u32> = (0..self.threads)
                .map(|u| {
                    if member[u] {
                        self.get(u, u)
                    } else {
                        participants.iter().map(|&p| self.get(p as usize, u)).max().unwrap_or(self.floor[u])
                    }
                })
                .collect();
            self.floor = floor;
            self.generation += 1;
            for &p in participants {
                self.tick(p as usize);
            }
            return;
        }
        let mut joined = vec![0; self.threads];
        for &p in participants {
            for (u, j) in joined.iter_mut().enumerate() {
                *j = (*j).max(self.get(p as usize, u));
            }
        }
        for &p in participants {
            self.join_into(p as usize, &joined);
            self.tick(p as usize);
        }
    }

    /// Thread `thread` made an atomic (or volatile) access to `addr` with `order`,
    /// reading and/or writing it.
    pub fn atomic(&mut self, thread: u32, addr: usize, order: Order, read: bool, write: bool) {
        let t = thread as usize;
        if write {
            let publish = if order.releases() { Some(self.clock(t)) } else { self.fenced[t].clone() };
            if let Some(clock) = publish {
                match self.published.get_mut(&addr) {
                    Some(at) => join(at, &clock),
                    None => {
                        self.published.insert(addr, clock);
                    }
                }
                if order.releases() {
                    self.tick(t);
                }
            }
        }
        if read {
            if let Some(at) = self.published.get(&addr).cloned() {
                if order.acquires() {
                    self.join_into(t, &at);
                } else {
                    match &mut self.seen[t] {
                        Some(seen) => join(seen, &at),
                        None => self.seen[t] = Some(at),
                    }
                }
            }
        }
    }

    /// Thread `thread` executed a fence (every fence acquires and releases).
    pub fn fence(&mut self, thread: u32) {
        let t = thread as usize;
        if let Some(seen) = self.seen[t].take() {
            self.join_into(t, &seen);
        }
        self.fenced[t] = Some(self.clock(t));
        self.tick(t);
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
        let t = thread as usize;
        let now = Access { thread, clock: self.get(t, t), site, write };
        let (floor, local, generation, threads) = (&self.floor, &self.local, self.generation, self.threads);
        let unordered = |a: &Access| {
            a.thread != thread && a.clock > known(floor, local, generation, threads, t, a.thread as usize)
        };
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
