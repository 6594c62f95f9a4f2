//! The words of the emulator's messages: who a thread is, what it waits for, and the
//! reports for a launch where nothing can run (deadlock) or nothing makes progress
//! (livelock).

use std::format;
use std::string::String;
use std::vec::Vec;

use super::site::{split, tid, Tid};
use super::state::State;
use super::thread::Run;
use super::warp::lanes;
use super::ErrorKind;

/// `warp 1, lanes 0-31` when `linears` (ascending thread indices of one block) lie in one
/// warp, else `threads 0-15, 40-63`.
fn threads(linears: &[u32]) -> String {
    let warp = linears[0] / 32;
    if linears.iter().all(|&l| l / 32 == warp) {
        return format!("warp {warp}, {}", lanes(linears.iter().fold(0, |m, &l| m | 1 << (l % 32))));
    }
    let mut runs = Vec::new();
    let mut i = 0;
    while i < linears.len() {
        let start = linears[i];
        while i + 1 < linears.len() && linears[i + 1] == linears[i] + 1 {
            i += 1;
        }
        runs.push(if linears[i] == start { format!("{start}") } else { format!("{start}-{}", linears[i]) });
        i += 1;
    }
    format!("threads {}", runs.join(", "))
}

impl State {
    /// The threads `linears` of the block in `slot`, grouped by what they do:
    /// `warp 1, lanes 0-31: waiting at ...; warp 2, lane 0: exited`.
    pub fn group_doing(&self, slot: usize, linears: impl Iterator<Item = u32>) -> String {
        let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
        for linear in linears {
            let doing = self.doing(tid(slot, linear));
            match groups.iter_mut().find(|(d, _)| *d == doing) {
                Some((_, members)) => members.push(linear),
                None => groups.push((doing, std::vec![linear])),
            }
        }
        groups
            .iter()
            .map(|(doing, members)| format!("{}: {doing}", threads(members)))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// `block (1, 0, 0), warp 2`.
    pub fn warp_name(&self, t: Tid) -> String {
        let b = self.block(t).index;
        format!("block ({}, {}, {}), warp {}", b.x, b.y, b.z, split(t).1 / 32)
    }

    /// `block (1, 0, 0), warp 2, lane 5 (thread (69, 0, 0))`.
    pub fn who(&self, t: Tid) -> String {
        let linear = split(t).1;
        let block = self.block(t).index;
        let thread = self.thread(t).idx;
        format!(
            "block ({}, {}, {}), warp {}, lane {} (thread ({}, {}, {}))",
            block.x,
            block.y,
            block.z,
            linear / 32,
            linear % 32,
            thread.x,
            thread.y,
            thread.z
        )
    }

    /// `block (1, 0, 0), warp 2, lane 5 (thread (69, 0, 0))` for thread `thread` of the
    /// block with grid-linear index `block` (which may have finished).
    pub fn who_in_grid(&self, block: u64, thread: u32) -> String {
        let (g, b) = (self.config.grid, self.config.block);
        let (gx, gy) = (u64::from(g.x), u64::from(g.y));
        format!(
            "block ({}, {}, {}), warp {}, lane {} (thread ({}, {}, {}))",
            block % gx,
            block / gx % gy,
            block / (gx * gy),
            thread / 32,
            thread % 32,
            thread % b.x,
            thread / b.x % b.y,
            thread / (b.x * b.y)
        )
    }

    /// What thread `t` is doing, for a list of missing threads.
    pub fn doing(&self, t: Tid) -> String {
        let thread = self.thread(t);
        match thread.run {
            Run::Exited => String::from("exited"),
            Run::Warp(w) => format!("waiting at {} {}", w.describe(), w.site),
            Run::Barrier(b) => format!("waiting at {} {}", b.describe(), b.site),
            Run::ActiveMask(site) => format!("at activemask {site}"),
            Run::Ready if thread.spinning_epoch == self.epoch => match thread.last {
                Some(site) => format!(
                    "spinning (last read {:#x}, value {:#x}, {site})",
                    thread.last_load().0,
                    thread.last_load().1
                ),
                None => String::from("spinning"),
            },
            Run::Ready => match thread.last {
                Some(site) => format!("running (last switch point {site})"),
                None => String::from("not started"),
            },
        }
    }

    /// Nothing can run, yet some threads have not finished: names the first collective
    /// (or else barrier) that waits, and where each of its missing threads is.
    pub fn stall_report(&self) -> (ErrorKind, String) {
        for (slot, block) in self.slots.iter().enumerate() {
            let Some(block) = block else { continue };
            for (linear, thread) in block.threads.iter().enumerate() {
                let Run::Warp(wait) = thread.run else { continue };
                let t = tid(slot, linear as u32);
                let base = linear as u32 / 32 * 32;
                let mut arrived = 0u32;
                let mut missing = Vec::new();
                for l in 0..32 {
                    if wait.mask & (1 << l) == 0 {
                        continue;
                    }
                    match block.threads[(base + l) as usize].run {
                        Run::Warp(w) if w.op == wait.op && w.mask == wait.mask && w.c == wait.c => {
                            arrived |= 1 << l
                        }
                        _ => missing.push(base + l),
                    }
                }
                return (
                    ErrorKind::Deadlock,
                    format!(
                        "no thread can run. In {}: {} wait at {} {}, but of the other lanes of the mask: {}",
                        self.warp_name(t),
                        lanes(arrived),
                        wait.describe(),
                        wait.site,
                        self.group_doing(slot, missing.into_iter())
                    ),
                );
            }
        }
        if let Some(report) = self.barrier_report() {
            return (ErrorKind::BarrierMismatch, format!("no thread can run. {report}"));
        }
        (ErrorKind::Deadlock, String::from("no thread can run, and none waits at a collective or barrier"))
    }

    /// The first block barrier that has waiting threads, and where the others are.
    fn barrier_report(&self) -> Option<String> {
        for (slot, block) in self.slots.iter().enumerate() {
            let Some(block) = block else { continue };
            for (id, barrier) in block.barriers.iter().enumerate() {
                let Some(&first) = barrier.arrived.first() else { continue };
                let Run::Barrier(wait) = block.threads[first as usize].run else { continue };
                let need = wait.count.unwrap_or(block.live);
                let others: Vec<u32> = (0..block.threads.len() as u32)
                    .filter(|&l| match block.threads[l as usize].run {
                        Run::Barrier(w) => w.id != id as u32,
                        Run::Exited => false,
                        _ => true,
                    })
                    .collect();
                let b = block.index;
                return Some(format!(
                    "In block ({}, {}, {}), {} of the {need} threads that {} needs wait there (first {}, {}); the other threads that have not exited do not reach it: {}",
                    b.x,
                    b.y,
                    b.z,
                    barrier.arrived.len(),
                    wait.describe(),
                    self.who(tid(slot, first)),
                    wait.site,
                    if others.is_empty() {
                        String::from("none (too few threads for the count)")
                    } else {
                        self.group_doing(slot, others.into_iter())
                    }
                ));
            }
        }
        None
    }

    /// Every runnable thread spins (`exact`), or nothing progressed for `steps` switch
    /// points (the step budget): names the threads and what they poll, and the likely
    /// cause (a grid-wide wait in a launch that is not cooperative, a barrier waiting for
    /// the spinning threads).
    pub fn livelock_report(&self, exact: bool, steps: u64) -> (ErrorKind, String) {
        let mut spinning = Vec::new();
        for (slot, block) in self.slots.iter().enumerate() {
            let Some(block) = block else { continue };
            let runnable: Vec<u32> = (0..block.threads.len() as u32)
                .filter(|&l| matches!(block.threads[l as usize].run, Run::Ready | Run::ActiveMask(_)))
                .collect();
            if !runnable.is_empty() {
                let b = block.index;
                spinning.push(format!(
                    "in block ({}, {}, {}), {}",
                    b.x,
                    b.y,
                    b.z,
                    self.group_doing(slot, runnable.into_iter())
                ));
            }
        }
        let head = if exact {
            format!(
                "every thread that can run spins: each re-read a location and got the value it had read there before, or waits on a lane that does, and none of them writes anything that could end the spin (checked after {steps} switch points without progress): {}",
                spinning.join("; ")
            )
        } else {
            format!(
                "no thread made progress in {steps} switch points (no memory changed, no new value read, no collective or barrier completed, no thread finished or started), the step budget; if the kernel is merely long, raise Options::livelock_steps (now {}): {}",
                self.options.livelock_steps,
                spinning.join("; ")
            )
        };
        if let Some(note) = self.not_cooperative_note() {
            return (ErrorKind::NotCooperative, format!("{head}. {note}"));
        }
        match self.barrier_report() {
            Some(report) => (ErrorKind::BarrierMismatch, format!("{head}. {report}")),
            None => (ErrorKind::Livelock, head),
        }
    }

    /// When blocks of a launch that is not cooperative have not started: the note that
    /// blocks waiting for the whole grid keep them from ever starting.
    pub fn not_cooperative_note(&self) -> Option<String> {
        let waiting = self.blocks_not_started();
        (!self.config.cooperative && waiting > 0).then(|| {
            format!(
                "{waiting} of the grid's {} blocks have not started: the launch is not cooperative and the emulator keeps only {} blocks resident at once (Options::max_resident_blocks), so blocks that wait for the whole grid (a grid barrier) keep the others from ever starting; hint: launch it with `launch_cooperative`, with a grid that fits",
                self.grid_blocks(),
                self.options.max_resident_blocks
            )
        })
    }
}
