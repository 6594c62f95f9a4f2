//! The emulator backend: kernels run as host code under `warpsafe::emu`, one launch at a
//! time on the calling thread, with a fixed, small machine model for the questions a
//! launcher asks of a GPU (how many multiprocessors, how many blocks fit at once).

use std::ffi::c_void;

use warpsafe::kernel::Safety;

use crate::{emu, Error, Function, LaunchConfig};

/// Multiprocessors of the emulated machine. Small on purpose: grids sized from the
/// multiprocessor count (a grid-stride loop, a cooperative grid) stay cheap to emulate.
pub(crate) const MULTIPROCESSORS: u32 = 4;

/// Threads one emulated multiprocessor holds at once (as on sm_80 and sm_90).
const THREADS_PER_MULTIPROCESSOR: u32 = 2048;

/// Blocks one emulated multiprocessor holds at once (as on sm_80 and sm_90).
const BLOCKS_PER_MULTIPROCESSOR: u32 = 32;

/// Shared memory of one emulated multiprocessor, in bytes (an sm_90 SM's 228 KiB).
pub(crate) const SHARED_BYTES_PER_MULTIPROCESSOR: u32 = 228 * 1024;

/// The emulator as a device: the options every launch runs with, and an identity: each
/// emulated device has its own memory, as GPUs do, so a buffer of one is refused by
/// another (the multi-device code of `crate::collective` is tested on emulated devices).
#[derive(Clone, Debug)]
pub(crate) struct Emulator {
    options: emu::Options,
    id: u64,
}

impl Emulator {
    pub(crate) fn new(options: emu::Options) -> Emulator {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Emulator { options, id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) }
    }

    /// This emulated device's identity (shared by clones of its `Device`).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    pub(crate) fn options(&self) -> &emu::Options {
        &self.options
    }

    /// Blocks of `block_threads` threads and `dynamic_shared_bytes` of dynamic shared
    /// memory that one emulated multiprocessor holds: limited by threads (whole warps),
    /// shared memory and the block count as on a GPU, and by the emulator's
    /// `max_resident_blocks` spread over the [`MULTIPROCESSORS`] (at least one block each);
    /// `0` for a block no GPU accepts.
    pub(crate) fn max_active_blocks_per_multiprocessor(
        &self,
        block_threads: u32,
        dynamic_shared_bytes: u32,
    ) -> u32 {
        if block_threads == 0 || block_threads > 1024 {
            return 0;
        }
        let warp_threads = block_threads.div_ceil(32) * 32;
        let by_threads = THREADS_PER_MULTIPROCESSOR / warp_threads;
        let by_shared = SHARED_BYTES_PER_MULTIPROCESSOR.checked_div(dynamic_shared_bytes).unwrap_or(u32::MAX);
        let by_residency = (self.options.max_resident_blocks / MULTIPROCESSORS).max(1);
        by_threads.min(by_shared).min(BLOCKS_PER_MULTIPROCESSOR).min(by_residency)
    }

    /// The largest cooperative grid: every multiprocessor full, and no more blocks than
    /// the emulator keeps resident (a cooperative launch keeps its whole grid live).
    pub(crate) fn max_cooperative_blocks(&self, block_threads: u32, dynamic_shared_bytes: u32) -> u32 {
        let per_multiprocessor =
            self.max_active_blocks_per_multiprocessor(block_threads, dynamic_shared_bytes);
        (per_multiprocessor * MULTIPROCESSORS).min(self.options.max_resident_blocks)
    }

    /// Runs one launch to completion (checked by `Device::check_launch`).
    ///
    /// # Safety
    /// As for [`crate::Device::launch`]: `args` matches the kernel's parameters and every
    /// address among them is valid host memory for what the kernel does with it.
    pub(crate) unsafe fn launch<P, S: Safety>(
        &self,
        function: &Function<P, S>,
        config: LaunchConfig,
        args: &[*mut c_void],
        cooperative: bool,
    ) -> Result<(), Error> {
        let kernel = function.emulator_kernel()?;
        let launch = if cooperative { emu::launch_cooperative } else { emu::launch };
        // SAFETY: forwarded from the caller.
        unsafe { launch(kernel, &config, args, &self.options) }.map_err(Error::Emulator)
    }
}
