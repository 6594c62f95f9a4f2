//! The memory model of a launch: where each access goes for the race check (a block's
//! shared-memory shadow, or the launch's global one), the happens-before edges of
//! atomics, fences, barriers and collectives, and the race reports. The clocks and the
//! conflict rules are in [`super::race`].

use std::format;
use std::string::String;

use super::race::{self, Access, Clock, Kind, Published};
use super::site::{split, Order, Site, Tid};
use super::state::State;
use super::ErrorKind;
use warpsafe_types::Scope;

impl State {
    /// Thread `t`'s whole clock, when races are checked.
    fn full_clock(&self, t: Tid) -> Option<Clock> {
        let linear = split(t).1 as usize;
        let block = self.block(t);
        let clocks = block.clocks.as_ref()?;
        let mut remote = block.remote_floor.clone();
        remote.join(&self.thread(t).remote);
        Some(Clock { block: block.linear, local: clocks.clock(linear), remote })
    }

    /// Thread `t` takes `clock`: its own block's part into the block clocks, the rest into
    /// what it knows of other blocks.
    fn take_clock(&mut self, t: Tid, clock: &Clock) {
        let linear = split(t).1 as usize;
        let mine = self.block(t).linear;
        let mut remote = clock.remote.clone();
        let own = remote.take_block(mine);
        let block = self.block_mut(t);
        let Some(clocks) = block.clocks.as_mut() else { return };
        if clock.block == mine {
            clocks.join_into(linear, &clock.local);
        } else {
            remote.join_block(clock.block, &clock.local);
        }
        if let Some(own) = own {
            clocks.join_into(linear, &own);
        }
        if !remote.is_empty() {
            self.thread_mut(t).remote.join(&remote);
        }
    }

    /// Whether `earlier` happens before what thread `t` does now.
    fn happens_before(&self, t: Tid, earlier: &Access) -> bool {
        let linear = split(t).1 as usize;
        let block = self.block(t);
        let Some(clocks) = block.clocks.as_ref() else { return true };
        let known = if earlier.block == block.linear {
            clocks.get(linear, earlier.thread as usize)
        } else {
            block
                .remote_floor
                .get(earlier.block, earlier.thread)
                .max(self.thread(t).remote.get(earlier.block, earlier.thread))
        };
        known >= earlier.clock()
    }

    /// Thread `t` accesses the bytes `range` (`write` or not, of `kind`), named `what` in
    /// a report: checks it against every earlier access of those bytes.
    pub fn record_access(
        &mut self,
        t: Tid,
        range: core::ops::Range<usize>,
        write: bool,
        kind: Kind,
        site: Site,
        what: impl FnOnce(&State) -> String,
    ) -> Result<(), (ErrorKind, String)> {
        let (addr, bytes) = (range.start, range.len());
        let linear = split(t).1;
        let block = self.block(t);
        let Some(clocks) = block.clocks.as_ref() else { return Ok(()) };
        let now = race::access(
            block.linear,
            linear,
            clocks.get(linear as usize, linear as usize),
            site,
            write,
            kind,
        );
        let shared = block.allocation_of(addr).is_some();
        if !shared && !self.options.check_global_races {
            return Ok(());
        }
        let mut shadow = if shared {
            core::mem::take(&mut self.block_mut(t).shared_shadow)
        } else {
            core::mem::take(&mut self.global_shadow)
        };
        let conflict = shadow.access(now, addr, bytes, |a| self.happens_before(t, a));
        if shared {
            self.block_mut(t).shared_shadow = shadow;
        } else {
            self.global_shadow = shadow;
        }
        let Some((earlier, _byte)) = conflict else { return Ok(()) };
        let memory = what(self);
        let hint = self.race_hint(&now, &earlier);
        Err((
            ErrorKind::DataRace,
            format!(
                "{} {} {memory} {site}, and {} {} it {} with no happens-before order between the two: {hint}",
                self.who(t),
                access_verb(&now),
                self.who_in_grid(earlier.block, earlier.thread),
                access_verb_past(&earlier),
                earlier.site
            ),
        ))
    }

    /// The usual fix for a race between `now` and `earlier`.
    fn race_hint(&self, now: &Access, earlier: &Access) -> &'static str {
        let atomic_cta = |a: &Access| a.kind == Kind::Atomic(Scope::Cta);
        if now.block != earlier.block && (atomic_cta(now) || atomic_cta(earlier)) {
            "a block-scope atomic is atomic only within its block; hint: use a device-scope atomic (`DeviceAtomic*`, `.gpu`)"
        } else if now.block != earlier.block {
            "accesses of different blocks are ordered only by a release and an acquire at device scope; hint: publish with a `Release` store or RMW (or `fence::device()` before the atomic that publishes) and read with `Acquire` (or a fence after it), or use atomics for the shared values"
        } else if now.thread / 32 == earlier.thread / 32 {
            "lanes of a warp are not in lockstep (Volta's independent thread scheduling); hint: add `__syncwarp()` (`warp::sync_warp`, `Group::sync`) between the write and the read"
        } else {
            "hint: add a block barrier (`barrier::sync`) between the write and the read"
        }
    }

    /// The edges of an atomic, ordered or volatile access by thread `t` to `addr`:
    /// releases publish, acquires take (see [`super::race`]).
    pub fn atomic_edges(&mut self, t: Tid, addr: usize, order: Order, scope: Scope, read: bool, write: bool) {
        let Some(clock) = self.full_clock(t) else { return };
        if write {
            let publish = if order.releases() {
                Some(Published { clock, scope })
            } else {
                self.thread(t).fenced.clone()
            };
            if let Some(p) = publish {
                // Block-scope and device-scope publications are kept apart: a reader of
                // another block takes only the latter.
                match self.published.get_mut(&(addr, p.scope != Scope::Cta)) {
                    Some(at) => at.clock.join(&p.clock),
                    None => {
                        self.published.insert((addr, p.scope != Scope::Cta), p);
                    }
                }
                if order.releases() {
                    self.tick(t);
                }
            }
        }
        if !read {
            return;
        }
        let mine = self.block(t).linear;
        for device in [false, true] {
            let Some(at) = self.published.get(&(addr, device)).cloned() else { continue };
            if !device && at.clock.block != mine {
                continue;
            }
            // A relaxed RMW acquires too: the module docs of `race` say why.
            if order.acquires() || write {
                self.take_clock(t, &at.clock);
            } else {
                let thread = self.thread_mut(t);
                match &mut thread.seen {
                    Some(seen) => seen.join(&at.clock),
                    None => thread.seen = Some(at.clock),
                }
            }
        }
    }

    /// A fence by thread `t` (every fence acquires and releases): takes what its relaxed
    /// reads saw, and makes its later relaxed writes publish its clock.
    pub fn fence_edges(&mut self, t: Tid, scope: Scope) {
        if let Some(seen) = self.thread_mut(t).seen.take() {
            self.take_clock(t, &seen);
        }
        let Some(clock) = self.full_clock(t) else { return };
        self.thread_mut(t).fenced = Some(Published { clock, scope });
        self.tick(t);
    }

    /// Thread `t` starts a new epoch of its own clock.
    fn tick(&mut self, t: Tid) {
        let linear = split(t).1 as usize;
        if let Some(clocks) = self.block_mut(t).clocks.as_mut() {
            clocks.tick(linear);
        }
    }

    /// The threads `participants` of the block in `slot` pass a barrier or a collective
    /// together (`whole_block`: every thread of the block that has not exited).
    pub fn synchronise(&mut self, slot: usize, participants: &[u32], whole_block: bool) {
        let Some(block) = self.slots[slot].as_mut() else { return };
        let Some(clocks) = block.clocks.as_mut() else { return };
        clocks.synchronise(participants, whole_block);
        let mut joined = race::Remote::default();
        for &p in participants {
            joined.join(&block.threads[p as usize].remote);
        }
        if joined.is_empty() {
            return;
        }
        if whole_block {
            block.remote_floor.join(&joined);
            for &p in participants {
                block.threads[p as usize].remote = race::Remote::default();
            }
        } else {
            for &p in participants {
                block.threads[p as usize].remote.join(&joined);
            }
        }
    }
}

fn access_verb(a: &Access) -> String {
    format!("{} {}", if a.write { "writes" } else { "reads" }, a.kind.name().trim_end()).trim_end().into()
}

fn access_verb_past(a: &Access) -> String {
    let kind = a.kind.name().trim_end();
    let verb = if a.write { "wrote" } else { "read" };
    if kind.is_empty() {
        verb.into()
    } else {
        format!("{verb} ({kind})")
    }
}
