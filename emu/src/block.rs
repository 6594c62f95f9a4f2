//! Blocks: their threads, their warps, their barriers and their shared memory (with its
//! written bitmap and race shadow).

use core::ptr::NonNull;
use std::alloc::Layout;
use std::format;
use std::string::String;
use std::vec::Vec;

use super::barrier::{Barrier, BARRIERS};
use super::poison;
use super::race::{BlockClocks, Remote, Shadow};
use super::thread::Thread;
use super::warp::WarpState;
use super::{ErrorKind, Shape};
use warpsafe_types::{Dim3, MAX_DYNAMIC_SHARED_BYTES};

/// A block's shared-memory allocation (a static array, or the dynamic window).
pub(crate) struct Allocation {
    pub(crate) key: usize,
    pub(crate) ptr: NonNull<u8>,
    pub(crate) layout: Layout,
    /// How the messages name it: "`NAME` (declared at file:line)".
    pub label: String,
    /// One bit per byte: written by some thread of the block.
    pub(crate) written: Vec<u64>,
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
        poison::fill(unsafe { core::slice::from_raw_parts_mut(ptr.as_ptr(), layout.size()) });
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
    pub(crate) shared: Vec<Allocation>,
    pub(crate) dynamic: Option<Allocation>,
    pub(crate) dynamic_bytes: usize,
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
    ///
    /// A GPU counts a kernel's static shared arrays and the launch's dynamic shared memory
    /// against one per-block limit and refuses the launch when they exceed it; the
    /// emulator meets a static array only when the kernel first touches it, so it checks
    /// there: an array that takes the block's static arrays and dynamic window together
    /// past [`MAX_DYNAMIC_SHARED_BYTES`] (an sm_90's 227 KiB, the most any GPU gives a
    /// block) ends the launch with [`ErrorKind::InvalidLaunch`]. (The check can be
    /// stricter than a GPU: an array the kernel declares but LLVM keeps in registers
    /// takes no shared memory there.)
    pub fn shared_static(
        &mut self,
        key: usize,
        bytes: usize,
        align: usize,
        label: impl FnOnce() -> String,
    ) -> Result<*mut u8, (ErrorKind, String)> {
        if let Some(a) = self.shared.iter().find(|a| a.key == key) {
            return Ok(a.ptr.as_ptr());
        }
        let label = label();
        let statics: usize = self.shared.iter().map(|a| a.layout.size()).sum();
        let limit = MAX_DYNAMIC_SHARED_BYTES as usize;
        if statics + bytes + self.dynamic_bytes > limit {
            let others = match self.shared.len() {
                0 => String::new(),
                n => format!(", {statics} bytes of {n} other static array(s)"),
            };
            return Err((
                ErrorKind::InvalidLaunch,
                format!(
                    "shared memory over a block's limit: {label} takes {bytes} bytes{others} and {} bytes of \
                     dynamic shared memory, more than the {limit} bytes (227 KiB) a block may have; a GPU \
                     refuses this launch",
                    self.dynamic_bytes
                ),
            ));
        }
        let a = Allocation::new(key, bytes, align, label).map_err(|message| (ErrorKind::Trap, message))?;
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
