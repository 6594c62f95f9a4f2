//! The words of the emulator's messages: who a thread is, what it waits for, and the
//! reports for a launch where nothing can run (deadlock) or nothing makes progress
//! (livelock).

use std::format;
use std::string::String;
use std::vec::Vec;

use super::engine::{split, tid, Run, State, Tid};
use super::ErrorKind;

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

impl State {
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

    /// What thread `t` is doing, for a list of missing threads.
    pub fn doing(&self, t: Tid) -> String {
        let thread = self.thread(t);
        match thread.run {
            Run::Exited => String::from("has exited"),
            Run::Warp(w) => format!("waits at {} {}", w.describe(), w.site),
            Run::Barrier(b) => format!("waits at {} {}", b.describe(), b.site),
            Run::ActiveMask(site) => format!("is at activemask {site}"),
            Run::Ready => match thread.last {
                Some(site) => format!("runs (last switch point {site})"),
                None => String::from("has not started"),
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
                    let o = tid(slot, base + l);
                    match block.threads[(base + l) as usize].run {
                        Run::Warp(w) if w.op == wait.op && w.mask == wait.mask && w.c == wait.c => {
                            arrived |= 1 << l
                        }
                        _ => missing.push(format!("lane {l} {}", self.doing(o))),
                    }
                }
                return (
                    ErrorKind::Deadlock,
                    format!(
                        "no thread can run. In {}: {} wait at {} {}, but {}",
                        self.who(t).split(", lane").next().unwrap_or_default(),
                        lanes(arrived),
                        wait.describe(),
                        wait.site,
                        missing.join("; ")
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
                let mut others = Vec::new();
                let mut shown = 0;
                for (linear, thread) in block.threads.iter().enumerate() {
                    let waiting_here = matches!(thread.run, Run::Barrier(w) if w.id == id as u32);
                    if waiting_here || matches!(thread.run, Run::Exited) {
                        continue;
                    }
                    if shown < 8 {
                        let o = tid(slot, linear as u32);
                        others.push(format!("{} {}", self.who(o), self.doing(o)));
                    }
                    shown += 1;
                }
                if shown > 8 {
                    others.push(format!("and {} more", shown - 8));
                }
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
                    if others.is_empty() { String::from("none (too few threads for the count)") } else { others.join("; ") }
                ));
            }
        }
        None
    }

    /// No thread made progress for `livelock_steps` switch points.
    pub fn livelock_report(&self) -> (ErrorKind, String) {
        let mut spinning = Vec::new();
        let mut count = 0;
        for (slot, block) in self.slots.iter().enumerate() {
            let Some(block) = block else { continue };
            for (linear, thread) in block.threads.iter().enumerate() {
                if !matches!(thread.run, Run::Ready | Run::ActiveMask(_)) {
                    continue;
                }
                if count < 8 {
                    spinning.push(format!(
                        "{} {}",
                        self.who(tid(slot, linear as u32)),
                        self.doing(tid(slot, linear as u32))
                    ));
                }
                count += 1;
            }
        }
        if count > 8 {
            spinning.push(format!("and {} more", count - 8));
        }
        let head = format!(
            "no thread made progress in {} switch points (no write, no new value read, no thread finished): the runnable threads spin forever: {}",
            self.options.livelock_steps,
            spinning.join("; ")
        );
        match self.barrier_report() {
            Some(report) => (ErrorKind::BarrierMismatch, format!("{head}. {report}")),
            None => (ErrorKind::Deadlock, head),
        }
    }
}
