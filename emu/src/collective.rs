//! Warp collectives as a machine over the launch state: a lane's arrival, the checks
//! on arrival and completion (see `warp`'s module docs), the results, `activemask`, and
//! what an exiting lane does to the collectives it leaves.

use std::format;
use std::string::String;

use super::poison::POISON;
use super::site::{split, tid, Site, Tid};
use super::state::State;
use super::thread::Run;
use super::warp::{
    hex, lanes, shuffle_source, ActiveMaskSite, Op, Redux, Suspect, Vote, Wait, SUSPECTS_KEPT,
};
use super::ErrorKind;

impl State {
    /// Lane `t` arrives at a warp collective; completes it if it was the last.
    pub fn arrive_warp(&mut self, t: Tid, wait: Wait) -> Result<(), (ErrorKind, String)> {
        let (slot, linear) = split(t);
        let (warp, lane) = (linear / 32, linear % 32);
        let block = self.block(t);
        let exists = match block.lanes(warp) {
            32 => u32::MAX,
            n => (1u32 << n) - 1,
        };
        if wait.mask & (1 << lane) == 0 {
            return Err((
                ErrorKind::MaskExcludesCaller,
                format!(
                    "{} called {} {}, and the mask does not contain lane {lane} itself",
                    self.who(t),
                    wait.describe(),
                    wait.site
                ),
            ));
        }
        if wait.mask & !exists != 0 {
            return Err((
                ErrorKind::Deadlock,
                format!(
                    "{} called {} {}, which names {}, which do not exist (the block has {} threads, so warp {warp} has {}): the collective can never complete",
                    self.who(t),
                    wait.describe(),
                    wait.site,
                    lanes(wait.mask & !exists),
                    block.threads.len(),
                    lanes(exists)
                ),
            ));
        }
        let state = &block.warps[warp as usize];
        let exited = wait.mask & state.exited;
        if exited != 0 && wait.site.group_checked {
            let detail = format!("{} of the group exited", lanes(exited));
            return Err(self.group_not_present(t, &wait, wait.mask & !exited, detail));
        }
        if exited != 0 {
            return Err((
                ErrorKind::Deadlock,
                format!(
                    "{} called {} {}, but {} of the mask exited: the collective can never complete",
                    self.who(t),
                    wait.describe(),
                    wait.site,
                    lanes(exited)
                ),
            ));
        }
        let base = warp * 32;
        let clash = state.waits.iter().find_map(|&(op, mask, c, waiting)| {
            let other = (op, mask, c) != wait.key() && mask & (1 << lane) != 0;
            let theirs = waiting & wait.mask;
            (other && theirs != 0).then(|| theirs.trailing_zeros())
        });
        if let Some(other) = clash {
            let Run::Warp(theirs) = self.thread(tid(slot, base + other)).run else {
                unreachable!("a lane listed as waiting waits")
            };
            if wait.site.group_checked {
                let detail = format!("lane {other} waits at {} {}", theirs.describe(), theirs.site);
                return Err(self.group_not_present(t, &wait, wait.mask & !(1 << other), detail));
            }
            return Err((
                ErrorKind::MismatchedCollective,
                format!(
                    "{} called {} {}, while lane {other}, which that mask names, waits at {} {}, whose mask names lane {lane}: lanes of one mask must meet at the same collective with the same mask",
                    self.who(t),
                    wait.describe(),
                    wait.site,
                    theirs.describe(),
                    theirs.site
                ),
            ));
        }
        let thread = self.thread_mut(t);
        thread.run = Run::Warp(wait);
        thread.last = Some(wait.site);
        let state = &mut self.block_mut(t).warps[warp as usize];
        let waiting = state.waiting(&wait);
        *waiting |= 1 << lane;
        if *waiting == wait.mask {
            state.waits.retain(|w| (w.0, w.1, w.2) != wait.key());
            self.complete_warp(t, wait)?;
        }
        Ok(())
    }

    /// Every lane of `wait.mask` is at the collective: computes each lane's result and
    /// makes them all runnable.
    fn complete_warp(&mut self, t: Tid, wait: Wait) -> Result<(), (ErrorKind, String)> {
        let (slot, linear) = split(t);
        let base = linear / 32 * 32;
        if wait.site.group_checked {
            let here = (0..32)
                .filter(|&l| wait.mask & (1 << l) != 0)
                .filter(|&l| matches!(self.block(t).threads[(base + l) as usize].run, Run::Warp(w) if w.site.same_place(&wait.site)))
                .fold(0u32, |m, l| m | 1 << l);
            if here != wait.mask {
                let elsewhere = self.group_doing(
                    slot,
                    (0..32).filter(|&l| wait.mask & !here & (1 << l) != 0).map(|l| base + l),
                );
                return Err(self.group_not_present(
                    t,
                    &wait,
                    here,
                    format!("the other lanes of the group reach it from elsewhere: {elsewhere}"),
                ));
            }
        }
        let mut members = [0u32; 32];
        let count = (0..32).filter(|l| wait.mask & (1 << l) != 0).fold(0, |n, l| {
            members[n] = l;
            n + 1
        });
        let members = &members[..count];
        let mut values = [0u64; 32];
        let mut operands = [0u32; 32];
        for &l in members {
            if let Run::Warp(w) = self.block(t).threads[(base + l) as usize].run {
                values[l as usize] = w.value;
                operands[l as usize] = w.b;
            }
        }
        if matches!(wait.op, Op::Redux(_) | Op::MatchAny(_) | Op::MatchAll(_)) {
            for &l in members {
                let value = values[l as usize];
                let words = if matches!(wait.op, Op::MatchAny(true) | Op::MatchAll(true)) { 8 } else { 4 };
                let user = tid(slot, base + l);
                self.check_defined(user, &value.to_le_bytes()[..words], || {
                    format!("passes to {} {}", wait.describe(), wait.site)
                })?;
            }
        }
        let mut results = [(0u64, true); 32];
        match wait.op {
            Op::Shfl(mode) => {
                for &l in members {
                    let (source, in_range) = shuffle_source(mode, l, operands[l as usize], wait.c);
                    if wait.mask & (1 << source) != 0 {
                        results[l as usize] = (values[source as usize], in_range);
                        continue;
                    }
                    self.check_activemask_split(t, l, source, &wait)?;
                    let reader = tid(slot, base + l);
                    let what = format!(
                        "{}, in {} {}, read lane {source} (operand b = {}), which is not in the mask",
                        self.who(reader),
                        wait.describe(),
                        wait.site,
                        operands[l as usize]
                    );
                    if self.options.undefined_at_source {
                        return Err((
                            ErrorKind::ShuffleFromInactiveLane,
                            format!("{what}: the value is undefined"),
                        ));
                    }
                    // PTX leaves only this lane's result undefined: it gets the poison word,
                    // reported if it is used (stored, or reduced) rather than dropped.
                    self.undefined_produced(reader, what);
                    results[l as usize] = (u64::from(POISON), in_range);
                }
            }
            Op::Vote(vote) => {
                let ballot =
                    members.iter().filter(|&&l| values[l as usize] != 0).fold(0u32, |b, &l| b | 1 << l);
                let result = match vote {
                    Vote::Ballot => (ballot as u64, true),
                    Vote::Any => (0, ballot != 0),
                    Vote::All => (0, ballot == wait.mask),
                    Vote::Uni => (0, ballot == 0 || ballot == wait.mask),
                };
                results = [result; 32];
            }
            Op::MatchAny(_) => {
                for &l in members {
                    let same = members
                        .iter()
                        .filter(|&&m| values[m as usize] == values[l as usize])
                        .fold(0u32, |b, &m| b | 1 << m);
                    results[l as usize] = (same as u64, true);
                }
            }
            Op::MatchAll(_) => {
                let first = values[members[0] as usize];
                let all = members.iter().all(|&m| values[m as usize] == first);
                results = [(if all { wait.mask as u64 } else { 0 }, all); 32];
            }
            Op::Redux(op) => {
                let words = members.iter().map(|&l| values[l as usize] as u32);
                let r = match op {
                    Redux::Add => words.fold(0u32, u32::wrapping_add),
                    Redux::MinU => words.fold(u32::MAX, u32::min),
                    Redux::MaxU => words.fold(0, u32::max),
                    Redux::MinS => words.map(|w| w as i32).fold(i32::MAX, i32::min) as u32,
                    Redux::MaxS => words.map(|w| w as i32).fold(i32::MIN, i32::max) as u32,
                    Redux::And => words.fold(u32::MAX, |a, b| a & b),
                    Redux::Or => words.fold(0, |a, b| a | b),
                    Redux::Xor => words.fold(0, |a, b| a ^ b),
                };
                results = [(r as u64, true); 32];
            }
            Op::Elect => {
                let leader = members[self.rng.below(members.len())];
                for &l in members {
                    results[l as usize] = (0, l == leader);
                }
            }
            Op::SyncWarp => {}
        }
        for &l in members {
            let o = tid(slot, base + l);
            self.thread_mut(o).result = results[l as usize];
            self.wake(o);
        }
        self.collective_done(members.iter().map(|&l| tid(slot, base + l)));
        // Every completed collective orders the memory accesses of its lanes.
        let mut linears = [0u32; 32];
        for (to, &l) in linears.iter_mut().zip(members) {
            *to = base + l;
        }
        self.synchronise(slot, &linears[..members.len()], false);
        Ok(())
    }

    /// The scheduler picked lane `t`, waiting at `activemask` at `site`: it and every lane
    /// of its warp at the same `activemask` call now get the mask of those lanes.
    pub fn resolve_activemask(&mut self, t: Tid, site: Site) {
        let (slot, linear) = split(t);
        let base = linear / 32 * 32;
        let block = self.block(t);
        let n = block.lanes(linear / 32);
        let mask = (0..n)
            .filter(|&l| matches!(block.threads[(base + l) as usize].run, Run::ActiveMask(s) if s.same_place(&site)))
            .fold(0u32, |m, l| m | 1 << l);
        let Some(block) = self.slots[slot].as_mut() else { return };
        for l in 0..n {
            if mask & (1 << l) != 0 {
                let thread = &mut block.threads[(base + l) as usize];
                thread.run = Run::Ready;
                thread.result = (mask as u64, true);
            }
        }
        let warp = &mut block.warps[(linear / 32) as usize];
        let index = match warp.activemasks.iter().position(|a| a.site.same_place(&site)) {
            Some(i) => i,
            None => {
                warp.activemasks.push(ActiveMaskSite { site, visits: [0; 32], given: [0; 32] });
                warp.activemasks.len() - 1
            }
        };
        let record = &mut warp.activemasks[index];
        let mut split = None;
        for l in (0..n).filter(|l| mask & (1 << l) != 0) {
            record.visits[l as usize] += 1;
            record.given[l as usize] = mask;
            let instance = record.visits[l as usize];
            if let Some(s) =
                warp.suspects.iter().find(|s| s.site == index && s.source == l && s.instance == instance)
            {
                split = Some((s.reader, s.source, s.shuffle, record.given[s.reader as usize], mask));
            }
        }
        if let Some((reader, source, shuffle, theirs, ours)) = split {
            let message = self.split_report(t, site, reader, source, &shuffle, theirs, ours);
            self.fail(ErrorKind::ActiveMaskSplit, message);
        }
    }

    /// A shuffle `wait` by lane `reader` of `t`'s warp read lane `source` outside its mask:
    /// when the mask came from an `activemask` call that `source` also reached in the same
    /// instance (now, or later: then it is reported when `source` gets there), the call
    /// split the lanes of one divergent region.
    fn check_activemask_split(
        &mut self,
        t: Tid,
        reader: u32,
        source: u32,
        wait: &Wait,
    ) -> Result<(), (ErrorKind, String)> {
        let (slot, linear) = split(t);
        let warp = &self.block(t).warps[(linear / 32) as usize];
        let from = warp
            .activemasks
            .iter()
            .enumerate()
            .find(|(_, a)| a.visits[reader as usize] > 0 && a.given[reader as usize] == wait.mask);
        let Some((index, record)) = from else { return Ok(()) };
        let instance = record.visits[reader as usize];
        if record.visits[source as usize] >= instance {
            let (site, theirs) = (record.site, record.given[source as usize]);
            let at = tid(slot, linear / 32 * 32 + reader);
            return Err((
                ErrorKind::ActiveMaskSplit,
                self.split_report(at, site, reader, source, wait, wait.mask, theirs),
            ));
        }
        let warp = &mut self.block_mut(t).warps[(linear / 32) as usize];
        if warp.suspects.len() < SUSPECTS_KEPT {
            warp.suspects.push(Suspect { site: index, instance, reader, source, shuffle: *wait });
        }
        Ok(())
    }

    /// The message of an `activemask` split.
    #[allow(clippy::too_many_arguments)]
    fn split_report(
        &self,
        t: Tid,
        site: Site,
        reader: u32,
        source: u32,
        shuffle: &Wait,
        readers: u32,
        sources: u32,
    ) -> String {
        format!(
            "in {}, `activemask` {site} gave lane {reader} the mask {} and lane {source} the mask {} in the same call of the same divergent region, and lane {reader} then used its mask in {} {}, reading lane {source}, which it leaves out: `activemask` returns the lanes converged at that moment, not the lanes that took the branch. Hint: compute the mask before the branch with a ballot (`warp::ballot_sync(FULL_MASK, condition)`), or use a group",
            self.warp_name(t),
            hex(readers),
            hex(sources),
            shuffle.describe(),
            shuffle.site
        )
    }

    /// The GPU's error for a checked group collective whose lanes are not all present at
    /// one place (`warpsafe::group`: the `activemask` test traps with these words), with
    /// the emulator's `detail`.
    fn group_not_present(&self, t: Tid, wait: &Wait, present: u32, detail: String) -> (ErrorKind, String) {
        let via = wait.site.via.map(|v| v.to_string_lossy().into_owned()).unwrap_or_default();
        (
            ErrorKind::Trap,
            format!(
                "warpsafe: {via} on a group whose lanes are not all present, at {}:{}: {}: group mask {}, lanes present {} (the GPU's presence check traps here too); {detail}",
                wait.site.at.file(),
                wait.site.at.line(),
                self.who(t),
                hex(wait.mask),
                hex(present)
            ),
        )
    }

    /// Lane `t` exited: a lane of its warp waiting at a collective whose mask names it
    /// can never finish.
    pub fn lane_exited(&mut self, t: Tid) {
        let (slot, linear) = split(t);
        let (base, lane) = (linear / 32 * 32, linear % 32);
        let state = &mut self.block_mut(t).warps[(linear / 32) as usize];
        state.exited |= 1 << lane;
        let Some(waiting) = state.waiting_for(lane) else { return };
        let o = tid(slot, base + waiting);
        let Run::Warp(w) = self.thread(o).run else { unreachable!("a lane listed as waiting waits") };
        if w.site.group_checked {
            let (kind, message) = self.group_not_present(
                o,
                &w,
                w.mask & !(1 << lane),
                format!("lane {lane} of the group exited"),
            );
            self.fail(kind, message);
            return;
        }
        let message = format!(
            "{} waits at {} {}, but lane {lane} of the mask exited ({}): the collective can never complete",
            self.who(o),
            w.describe(),
            w.site,
            match self.thread(t).last {
                Some(site) => format!("its last switch point was {site}"),
                None => String::from("it reached no collective, barrier or memory operation"),
            }
        );
        self.fail(ErrorKind::Deadlock, message);
    }
}
