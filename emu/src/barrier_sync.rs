//! Block barriers as a machine over the launch state: arrival, the whole-block rule
//! (CUDA's `__syncthreads`: one call site, no thread exited), completion, and what an
//! exiting thread does to the barriers it leaves.

use std::format;
use std::string::String;
use std::vec::Vec;

use super::barrier::{BarOp, Wait, BARRIERS};
use super::site::{split, tid, Tid};
use super::state::State;
use super::thread::Run;
use super::ErrorKind;

impl State {
    /// Thread `t` arrives at a block barrier.
    pub fn arrive_barrier(&mut self, t: Tid, wait: Wait) -> Result<(), (ErrorKind, String)> {
        let (slot, linear) = split(t);
        let who = self.who(t);
        let n = self.block(t).threads.len() as u32;
        if wait.id >= BARRIERS {
            return Err((
                ErrorKind::BarrierMismatch,
                format!("{who} used barrier {} {}: barrier ids are 0 to 15", wait.id, wait.site),
            ));
        }
        if let Some(count) = wait.count {
            let limit = n.div_ceil(32) * 32;
            if count == 0 || count % 32 != 0 || count > limit {
                return Err((
                    ErrorKind::BarrierMismatch,
                    format!(
                        "{who} used {} {}: the thread count must be a non-zero multiple of 32 and at most {limit} (the block's {n} threads rounded up to whole warps)",
                        wait.describe(),
                        wait.site
                    ),
                ));
            }
        }
        if wait.count.is_none() {
            self.whole_block_rule(t, &wait)?;
        }
        let block = self.block(t);
        if let Some(&first) = block.barriers[wait.id as usize].arrived.first() {
            if let Run::Barrier(other) = block.threads[first as usize].run {
                if (other.op, other.count) != (wait.op, wait.count) {
                    let waiting = block.barriers[wait.id as usize].arrived.len();
                    return Err((
                        ErrorKind::BarrierMismatch,
                        format!(
                            "{who} arrived at {} {} while {waiting} thread(s) wait at the same barrier as {}: first {}, {}; all threads of one use of a barrier must use the same form and thread count",
                            wait.describe(),
                            wait.site,
                            other.describe(),
                            self.who(tid(slot, first)),
                            other.site
                        ),
                    ));
                }
            }
        }
        let thread = self.thread_mut(t);
        thread.run = Run::Barrier(wait);
        thread.last = Some(wait.site);
        self.block_mut(t).barriers[wait.id as usize].arrived.push(linear);
        self.try_complete_barrier(slot, wait.id);
        Ok(())
    }

    /// CUDA's rule for a whole-block barrier (`__syncthreads`): every thread of the block
    /// reaches it, at the same place. Thread `t` arriving at `wait` breaks it when threads
    /// already wait at the same barrier from another call site (a barrier in each arm of a
    /// branch, a `break` between two barriers), or when a thread of the block has exited
    /// (a barrier after an early return; a barrier in a loop that some threads left
    /// early). Threads that take part in every use always pass a barrier together, so a
    /// loop whose trip count differs per thread shows up as one of those two cases when
    /// the short threads leave the loop.
    fn whole_block_rule(&self, t: Tid, wait: &Wait) -> Result<(), (ErrorKind, String)> {
        let slot = split(t).0;
        let block = self.block(t);
        let waiting = &block.barriers[wait.id as usize].arrived;
        let elsewhere: Vec<u32> = waiting
            .iter()
            .copied()
            .filter(|&l| matches!(block.threads[l as usize].run, Run::Barrier(w) if !w.site.same_place(&wait.site)))
            .collect();
        if !elsewhere.is_empty() {
            return Err((
                ErrorKind::BarrierMismatch,
                format!(
                    "{} arrived at {} {}, while other threads wait at the same barrier from another place: {}. Every thread of the block must reach the same barrier (CUDA's `__syncthreads` rule); hint: move the barrier out of the branch or loop so that all threads reach it at one place",
                    self.who(t),
                    wait.describe(),
                    wait.site,
                    self.group_doing(slot, elsewhere.into_iter())
                ),
            ));
        }
        if self.options.exits_release_barriers || block.live == block.threads.len() as u32 {
            return Ok(());
        }
        let exited =
            (0..block.threads.len() as u32).filter(|&l| matches!(block.threads[l as usize].run, Run::Exited));
        Err((
            ErrorKind::BarrierMismatch,
            format!(
                "{} arrived at {} {}, but some threads of the block exited without reaching it: {}. Every thread of the block must reach each whole-block barrier (CUDA's `__syncthreads` rule; PTX would release it, see Options::exits_release_barriers); hint: return after the last barrier, not before it (guard the work, not the barrier)",
                self.who(t),
                wait.describe(),
                wait.site,
                self.group_doing(slot, exited)
            ),
        ))
    }

    /// Completes barrier `id` of the block in `slot` if enough threads are there.
    fn try_complete_barrier(&mut self, slot: usize, id: u32) {
        let Some(block) = self.slots[slot].as_mut() else { return };
        let barrier = &block.barriers[id as usize];
        let Some(&first) = barrier.arrived.first() else { return };
        let Run::Barrier(form) = block.threads[first as usize].run else { return };
        let need = form.count.unwrap_or(block.live) as usize;
        if barrier.arrived.len() < need {
            return;
        }
        let arrived = core::mem::take(&mut block.barriers[id as usize].arrived);
        let yes = arrived
            .iter()
            .filter(|&&l| matches!(block.threads[l as usize].run, Run::Barrier(w) if w.predicate))
            .count();
        let result = match form.op {
            BarOp::Sync => (0, true),
            BarOp::Popc => (yes as u64, true),
            BarOp::And => (0, yes == arrived.len()),
            BarOp::Or => (0, yes > 0),
        };
        for &l in &arrived {
            block.threads[l as usize].result = result;
        }
        self.synchronise(slot, &arrived, form.count.is_none());
        for l in arrived {
            self.wake(tid(slot, l));
        }
        self.progress();
    }

    /// After thread `t` exited: under CUDA's rule (the default) a whole-block barrier that
    /// threads of its block wait at can never be reached by all of them, which is the
    /// launch's error; under PTX's rule (`Options::exits_release_barriers`) the barrier may
    /// now be complete.
    pub fn barriers_after_exit(&mut self, t: Tid) {
        let slot = split(t).0;
        if !self.options.exits_release_barriers {
            let block = self.block(t);
            let waiting = block.barriers.iter().find_map(|b| {
                let &first = b.arrived.first()?;
                match block.threads[first as usize].run {
                    Run::Barrier(w) if w.count.is_none() => Some((w, b.arrived.clone())),
                    _ => None,
                }
            });
            if let Some((wait, arrived)) = waiting {
                let exited = match self.thread(t).last {
                    Some(site) => format!("its last switch point was {site}"),
                    None => String::from("it reached no collective, barrier or memory operation"),
                };
                let message = format!(
                    "{} exited ({exited}) while threads of its block wait at {} {}: {}. Every thread of the block must reach each whole-block barrier (CUDA's `__syncthreads` rule; PTX would release it, see Options::exits_release_barriers); hint: return after the last barrier, not before it (guard the work, not the barrier)",
                    self.who(t),
                    wait.describe(),
                    wait.site,
                    self.group_doing(slot, arrived.into_iter())
                );
                self.fail(ErrorKind::BarrierMismatch, message);
                return;
            }
        }
        for id in 0..BARRIERS {
            self.try_complete_barrier(slot, id);
        }
    }
}
