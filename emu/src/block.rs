//! Blocks: their threads, their shared memory, and block barriers.
//!
//! `barrier.sync id` (no count) completes when every thread of the block that has not
//! exited has arrived at barrier `id` (Volta counts threads, not warps; exited threads no
//! longer count). `barrier.sync id, count` completes when `count` threads have arrived.
//! Threads may arrive through different call sites (warpsafe uses the non-`.aligned`
//! forms), but all arrivals of one use of a barrier must use the same form and count.

use core::ptr::NonNull;
use std::alloc::Layout;
use std::format;
use std::string::String;
use std::vec::Vec;

use super::engine::{split, tid, Run, Site, State, Thread, Tid};
use super::race::{BlockClocks, Remote, Shadow};
use super::undefined;
use super::warp::WarpState;
use super::ErrorKind;
use super::Shape;
use warpsafe_types::Dim3;

/// Barriers per block (`barrier.sync` ids 0 to 15).
pub(crate) const BARRIERS: u32 = 16;

/// The operation threads perform at a block barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarOp {
    /// `barrier.sync`.
    Sync,
    /// `barrier.red.popc.u32`.
    Popc,
    /// `barrier.red.and.pred`.
    And,
    /// `barrier.red.or.pred`.
    Or,
}

impl BarOp {
    fn name(self) -> &'static str {
        match self {
            BarOp::Sync => "barrier.sync",
            BarOp::Popc => "barrier.red.popc",
            BarOp::And => "barrier.red.and",
            BarOp::Or => "barrier.red.or",
        }
    }
}

/// A thread waiting at a block barrier.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wait {
    pub id: u32,
    pub op: BarOp,
    pub count: Option<u32>,
    pub predicate: bool,
    pub site: Site,
}

impl Wait {
    /// `barrier.sync 0`, `barrier.red.popc 1, count 64`, ...
    pub fn describe(&self) -> String {
        match self.count {
            Some(count) => format!("{} {} with thread count {count}", self.op.name(), self.id),
            None => format!("{} {}", self.op.name(), self.id),
        }
    }
}

/// One barrier of a block: the threads (linear indices) waiting at its current use.
#[derive(Default)]
pub(crate) struct Barrier {
    pub arrived: Vec<u32>,
}

/// A block's shared-memory allocation (a static array, or the dynamic window).
pub(crate) struct Allocation {
    key: usize,
    ptr: NonNull<u8>,
    layout: Layout,
    /// How the messages name it: "`NAME` (declared at file:line)".
    pub label: String,
    /// One bit per byte: written by some thread of the block.
    written: Vec<u64>,
}

impl Allocation {
    fn new(key: usize, bytes: usize, align: usize, label: String) -> Result<Allocation, String> {
        let layout = Layout::from_size_align(bytes.max(1), align)
            .map_err(|_| format!("shared memory of {bytes} bytes aligned to {align}: not a valid layout"))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc(layout) })
            .ok_or_else(|| format!("cannot allocate {bytes} bytes of shared memory"))?;
        // SAFETY: `ptr` holds `layout.size()` writable bytes, not yet shared with anyone.
        // Shared memory starts with whatever the previous block left: here the poison
        // word, so that a use of a slot nobody wrote is reported.
        undefined::fill(unsafe { core::slice::from_raw_parts_mut(ptr.as_ptr(), layout.size()) });
        Ok(Allocation { key, ptr, layout, label, written: std::vec![0; layout.size().div_ceil(64)] })
    }

    pub fn contains(&self, addr: usize) -> bool {
        let base = self.ptr.as_ptr() as usize;
        addr >= base && addr < base + self.layout.size()
    }

    pub fn offset(&self, addr: usize) -> usize {
        addr - self.ptr.as_ptr() as usize
    }

    /// Marks `bytes` bytes from `offset` written.
    pub fn mark_written(&mut self, offset: usize, bytes: usize) {
        for b in offset..(offset + bytes).min(self.layout.size()) {
            self.written[b / 64] |= 1 << (b % 64);
        }
    }

    /// The first of `bytes` bytes from `offset` that no thread wrote, if any.
    pub fn first_unwritten(&self, offset: usize, bytes: usize) -> Option<usize> {
        (offset..(offset + bytes).min(self.layout.size()))
            .find(|&b| self.written[b / 64] & (1 << (b % 64)) == 0)
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// A resident block.
pub(crate) struct Block {
    pub index: Dim3,
    pub threads: Vec<Thread>,
    /// Threads that have not exited.
    pub live: u32,
    pub barriers: [Barrier; BARRIERS as usize],
    /// Per warp: exited lanes, lanes waiting at collectives.
    pub warps: Vec<WarpState>,
    shared: Vec<Allocation>,
    dynamic: Option<Allocation>,
    dynamic_bytes: usize,
    /// Its threads' vector clocks, when races are checked.
    pub clocks: Option<BlockClocks>,
    /// Every access to its shared memory, for the race check.
    pub shared_shadow: Shadow,
    /// What all its threads know of other blocks' clocks (joined at whole-block barriers).
    pub remote_floor: Remote,
    /// Its index in the grid, x fastest.
    pub linear: u64,
}

impl Block {
    pub fn new(index: Dim3, linear: u64, config: Shape, races: bool) -> Block {
        let b = config.block;
        let n = b.x * b.y * b.z;
        let threads = (0..n)
            .map(|linear| {
                Thread::new(Dim3 { x: linear % b.x, y: linear / b.x % b.y, z: linear / (b.x * b.y) })
            })
            .collect();
        Block {
            index,
            threads,
            live: n,
            barriers: Default::default(),
            warps: (0..n.div_ceil(32)).map(|_| WarpState::default()).collect(),
            shared: Vec::new(),
            dynamic: None,
            dynamic_bytes: config.dynamic_shared_bytes as usize,
            clocks: races.then(|| BlockClocks::new(n as usize)),
            shared_shadow: Shadow::default(),
            remote_floor: Remote::default(),
            linear,
        }
    }

    /// How many lanes warp `warp` has (fewer than 32 in a partial last warp).
    pub fn lanes(&self, warp: u32) -> u32 {
        (self.threads.len() as u32 - warp * 32).min(32)
    }

    /// The block's copy of the static array `key`, allocated on first use.
    pub fn shared_static(
        &mut self,
        key: usize,
        bytes: usize,
        align: usize,
        label: impl FnOnce() -> String,
    ) -> Result<*mut u8, String> {
        if let Some(a) = self.shared.iter().find(|a| a.key == key) {
            return Ok(a.ptr.as_ptr());
        }
        let a = Allocation::new(key, bytes, align, label())?;
        let ptr = a.ptr.as_ptr();
        self.shared.push(a);
        Ok(ptr)
    }

    /// The block's dynamic shared memory (16-byte aligned) and its size.
    pub fn shared_dynamic(&mut self) -> Result<(*mut u8, usize), String> {
        if self.dynamic_bytes == 0 {
            return Ok((NonNull::<u128>::dangling().as_ptr().cast(), 0));
        }
        if self.dynamic.is_none() {
            let label = String::from("dynamic shared memory");
            self.dynamic = Some(Allocation::new(1, self.dynamic_bytes, 16, label)?);
        }
        match &self.dynamic {
            Some(a) => Ok((a.ptr.as_ptr(), self.dynamic_bytes)),
            None => unreachable!("allocated above"),
        }
    }

    /// The shared allocation holding `addr`, if any.
    pub fn allocation_of(&self, addr: usize) -> Option<&Allocation> {
        self.shared.iter().chain(self.dynamic.iter()).find(|a| a.contains(addr))
    }

    /// The shared allocation holding `addr`, if any, to mark what is written.
    pub fn allocation_of_mut(&mut self, addr: usize) -> Option<&mut Allocation> {
        self.shared.iter_mut().chain(self.dynamic.iter_mut()).find(|a| a.contains(addr))
    }
}

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
