//! The race check: happens-before over every access the emulator sees, shared and global
//! memory alike, with vector clocks (exact for the interleaving that ran).
//!
//! **Clocks.** Each thread of a block has a vector clock over the block's threads
//! ([`BlockClocks`]); what it knows of threads of *other* blocks is a sparse
//! [`Remote`] map (block → clocks), filled only by release/acquire edges between blocks.
//! Whole-block barriers are the common case and cost O(threads), not O(threads²): no
//! thread knows more of thread `u`'s clock than `u` itself, so the join of all clocks is
//! the vector of own components, which becomes a shared *floor*; each thread keeps only
//! what it learned since (entries tagged with the floor's generation).
//!
//! **Edges** (PTX memory model): a block barrier, `bar.warp.sync` and every completed
//! warp collective join the clocks of the threads that pass it together; a release
//! (store, RMW, or a relaxed atomic write after a release fence) publishes the writer's
//! [`Clock`] at the address; an acquire (load, RMW, or an acquire fence after relaxed
//! reads) takes it, if the reader is within the release's scope (`.cta`: the same block).
//! Relaxed atomics and volatile accesses add no edge by themselves. Leniency, on purpose:
//! a relaxed read-modify-write that reads a published clock acquires it (the reader side
//! of CUDA's threadFenceReduction sample has no fence; PTX would want one).
//!
//! **Conflicts.** Every byte remembers its last write and the reads since ([`Shadow`]);
//! an access conflicts with an earlier one by another thread, at least one of them a
//! write, when the earlier one does not happen before it, unless both are *morally
//! strong*: two atomics whose scopes include both threads, an atomic and a volatile
//! access, or two volatile accesses by threads of different warps. Two volatile accesses
//! by lanes of one warp do conflict: the legacy warp-synchronous idiom that relies on
//! them (lockstep lanes) is exactly the bug to find.

use std::collections::{BTreeMap, HashMap};
use std::vec;
use std::vec::Vec;

use super::site::Site;
use warpsafe_types::Scope;

/// What kind of access a shadow entry records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A plain load or store (a shared array, a global view).
    Plain,
    /// `ld.volatile` / `st.volatile`.
    Volatile,
    /// An atomic or ordered access at a scope.
    Atomic(Scope),
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Plain => "",
            Kind::Volatile => "volatile ",
            Kind::Atomic(Scope::Cta) => "block-scope atomic ",
            Kind::Atomic(_) => "atomic ",
        }
    }
}

/// One access to a byte: the thread (grid-linear block, linear index in the block), its
/// clock then, where, how.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    pub block: u64,
    pub thread: u32,
    clock: u32,
    pub site: Site,
    pub write: bool,
    pub kind: Kind,
}

impl Access {
    /// The clock of its thread when it was made.
    pub fn clock(&self) -> u32 {
        self.clock
    }

    /// Whether this access and `other` (by different threads, one a write) may run
    /// unordered: both morally strong (see the module docs).
    fn strong_with(&self, other: &Access) -> bool {
        let covers = |scope: Scope| scope != Scope::Cta || self.block == other.block;
        match (self.kind, other.kind) {
            (Kind::Atomic(a), Kind::Atomic(b)) => covers(a) && covers(b),
            (Kind::Atomic(a), Kind::Volatile) | (Kind::Volatile, Kind::Atomic(a)) => covers(a),
            // Lanes of one warp relying on volatile accesses alone assume lockstep (the
            // legacy warp-synchronous idiom); elsewhere volatile is a relaxed, system-scope
            // access (a flag polled with `ld.volatile`).
            (Kind::Volatile, Kind::Volatile) => {
                self.block != other.block || self.thread / 32 != other.thread / 32
            }
            _ => false,
        }
    }
}

/// What one thread knows of threads of other blocks: grid-linear block → clock of each
/// of its threads.
#[derive(Clone, Debug, Default)]
pub(crate) struct Remote(BTreeMap<u64, Vec<u32>>);

impl Remote {
    /// Thread `thread` of block `block`, as far as known.
    pub fn get(&self, block: u64, thread: u32) -> u32 {
        self.0.get(&block).and_then(|c| c.get(thread as usize)).copied().unwrap_or(0)
    }

    /// Learns that block `block`'s threads are at least at `clocks`.
    pub fn join_block(&mut self, block: u64, clocks: &[u32]) {
        let at = self.0.entry(block).or_default();
        if at.len() < clocks.len() {
            at.resize(clocks.len(), 0);
        }
        join(at, clocks);
    }

    pub fn join(&mut self, other: &Remote) {
        for (&block, clocks) in &other.0 {
            self.join_block(block, clocks);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries of `block` (its own block's, which belong in its block clocks).
    pub fn take_block(&mut self, block: u64) -> Option<Vec<u32>> {
        self.0.remove(&block)
    }
}

/// A whole vector clock: the clocks of one block's threads, and what is known of other
/// blocks.
#[derive(Clone, Debug)]
pub(crate) struct Clock {
    pub block: u64,
    pub local: Vec<u32>,
    pub remote: Remote,
}

impl Clock {
    /// Joins `other` into this clock.
    pub fn join(&mut self, other: &Clock) {
        if other.block == self.block {
            join(&mut self.local, &other.local);
        } else {
            self.remote.join_block(other.block, &other.local);
        }
        self.remote.join(&other.remote);
    }
}

/// A clock published at an address by a release, and the release's scope.
#[derive(Clone, Debug)]
pub(crate) struct Published {
    pub clock: Clock,
    pub scope: Scope,
}

fn join(into: &mut [u32], from: &[u32]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}

/// The vector clocks of one block's threads.
pub(crate) struct BlockClocks {
    threads: usize,
    /// What every thread knows of every clock since the last whole-block barrier.
    floor: Vec<u32>,
    /// `local[t * threads + u]`: `(generation, value)`, what thread `t` learned of `u`'s
    /// clock beyond the floor; valid while `generation` is the current one.
    local: Vec<(u32, u32)>,
    /// Per thread, the `u`s whose entries in `local` are of the current generation: a
    /// join of a few lanes (a collective) then costs what they learned since the last
    /// barrier, not the block size.
    learned: Vec<Vec<u32>>,
    generation: u32,
}

impl BlockClocks {
    pub fn new(threads: usize) -> BlockClocks {
        let mut clocks = BlockClocks {
            threads,
            floor: vec![0; threads],
            local: vec![(0, 0); threads * threads],
            learned: vec![Vec::new(); threads],
            generation: 1,
        };
        for t in 0..threads {
            clocks.tick(t);
        }
        clocks
    }

    /// Thread `t`'s knowledge of thread `u`'s clock.
    pub fn get(&self, t: usize, u: usize) -> u32 {
        match self.local[t * self.threads + u] {
            (g, value) if g == self.generation => value.max(self.floor[u]),
            _ => self.floor[u],
        }
    }

    /// Thread `t` learns that `u`'s clock is at least `value`.
    fn raise(&mut self, t: usize, u: usize, value: u32) {
        if value > self.get(t, u) {
            self.set(t, u, value);
        }
    }

    /// Sets thread `t`'s entry for `u` in the current generation.
    fn set(&mut self, t: usize, u: usize, value: u32) {
        let entry = &mut self.local[t * self.threads + u];
        if entry.0 != self.generation {
            self.learned[t].push(u as u32);
        }
        *entry = (self.generation, value);
    }

    /// Thread `t` starts a new epoch of its own.
    pub fn tick(&mut self, t: usize) {
        let next = self.get(t, t) + 1;
        self.set(t, t, next);
    }

    /// Thread `t`'s clock over the block.
    pub fn clock(&self, t: usize) -> Vec<u32> {
        (0..self.threads).map(|u| self.get(t, u)).collect()
    }

    /// Thread `t` joins `from` into its clock.
    pub fn join_into(&mut self, t: usize, from: &[u32]) {
        for (u, &value) in from.iter().enumerate().take(self.threads) {
            self.raise(t, u, value);
        }
    }

    /// The threads `participants` pass a barrier or collective together; `whole_block`
    /// when they are every thread of the block that has not exited.
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
            for learned in &mut self.learned {
                learned.clear();
            }
            for &p in participants {
                self.tick(p as usize);
            }
            return;
        }
        // Only entries above the floor can differ between the participants.
        let mut joined: Vec<(usize, u32)> = Vec::new();
        for &p in participants {
            for &u in &self.learned[p as usize] {
                let value = self.get(p as usize, u as usize);
                match joined.iter_mut().find(|(v, _)| *v == u as usize) {
                    Some((_, j)) => *j = (*j).max(value),
                    None => joined.push((u as usize, value)),
                }
            }
        }
        for &p in participants {
            for &(u, value) in &joined {
                self.raise(p as usize, u, value);
            }
            self.tick(p as usize);
        }
    }
}

#[derive(Default)]
struct Cell {
    write: Option<Access>,
    reads: Vec<Access>,
}

/// The last write and the reads since of every byte accessed, for one memory (a block's
/// shared memory, or the launch's global memory).
#[derive(Default)]
pub(crate) struct Shadow {
    cells: HashMap<usize, Cell>,
}

impl Shadow {
    /// Records an access to `bytes` bytes at `addr`; `ordered(earlier)` says whether an
    /// earlier access happens before it. Returns the earlier access it races with, and
    /// the byte, if any.
    pub fn access(
        &mut self,
        now: Access,
        addr: usize,
        bytes: usize,
        ordered: impl Fn(&Access) -> bool,
    ) -> Option<(Access, usize)> {
        let same_thread = |a: &Access| a.block == now.block && a.thread == now.thread;
        let races = |a: &Access| !same_thread(a) && !now.strong_with(a) && !ordered(a);
        for byte in addr..addr + bytes {
            let cell = self.cells.entry(byte).or_default();
            if let Some(w) = cell.write.filter(races) {
                return Some((w, byte));
            }
            if now.write {
                if let Some(r) = cell.reads.iter().find(|r| races(r)) {
                    return Some((*r, byte));
                }
                cell.write = Some(now);
                cell.reads.clear();
            } else {
                match cell.reads.iter_mut().find(|r| same_thread(r) && r.kind == now.kind) {
                    Some(r) => *r = now,
                    None => cell.reads.push(now),
                }
            }
        }
        None
    }
}

/// A new access record for thread `thread` of block `block` with clock `clock`.
pub(crate) fn access(block: u64, thread: u32, clock: u32, site: Site, write: bool, kind: Kind) -> Access {
    Access { block, thread, clock, site, write, kind }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_block_barrier_orders_everything_before_it() {
        let mut c = BlockClocks::new(4);
        let before = c.get(2, 2);
        assert!(c.get(0, 2) < before, "thread 0 knows nothing of thread 2 yet");
        c.synchronise(&[0, 1, 2, 3], true);
        assert!(c.get(0, 2) >= before);
        assert!(c.get(2, 2) > before, "a barrier starts a new epoch");
    }

    #[test]
    fn a_partial_sync_orders_only_its_participants() {
        let mut c = BlockClocks::new(4);
        let (t1, t3) = (c.get(1, 1), c.get(3, 3));
        c.synchronise(&[0, 1], false);
        assert!(c.get(0, 1) >= t1);
        assert!(c.get(0, 3) < t3, "thread 3 did not take part");
    }

    #[test]
    fn remote_knowledge_joins_per_block() {
        let mut r = Remote::default();
        r.join_block(7, &[1, 5]);
        r.join_block(7, &[3, 2, 9]);
        assert_eq!((r.get(7, 0), r.get(7, 1), r.get(7, 2)), (3, 5, 9));
        assert_eq!(r.get(8, 0), 0);
    }

    #[test]
    fn conflicts_follow_the_moral_strength_rules() {
        let site = Site::test();
        let a = |block, kind| access(block, 0, 1, site, true, kind);
        let b = |block, kind| access(block, 1, 1, site, true, kind);
        let gpu = Kind::Atomic(Scope::Gpu);
        let cta = Kind::Atomic(Scope::Cta);
        assert!(a(0, gpu).strong_with(&b(0, gpu)));
        assert!(a(0, gpu).strong_with(&b(0, Kind::Volatile)));
        assert!(
            !a(0, Kind::Volatile).strong_with(&b(0, Kind::Volatile)),
            "volatile-volatile in a warp conflicts"
        );
        let other_warp = access(0, 40, 1, site, true, Kind::Volatile);
        assert!(a(0, Kind::Volatile).strong_with(&other_warp), "volatile-volatile across warps is a flag");
        assert!(
            a(0, Kind::Volatile).strong_with(&b(1, Kind::Volatile)),
            "volatile-volatile across blocks is a flag"
        );
        assert!(!a(0, Kind::Plain).strong_with(&b(0, gpu)));
        assert!(a(0, cta).strong_with(&b(0, cta)), "block scope within the block");
        assert!(!a(0, cta).strong_with(&b(1, cta)), "block scope across blocks");
        let mut shadow = Shadow::default();
        assert!(shadow.access(a(0, Kind::Plain), 64, 4, |_| false).is_none());
        let race = shadow.access(b(0, Kind::Plain), 66, 1, |_| false);
        assert_eq!(race.map(|(r, byte)| (r.thread, byte)), Some((0, 66)));
        assert!(shadow.access(b(0, Kind::Plain), 66, 1, |_| true).is_none(), "ordered: no race");
    }
}
