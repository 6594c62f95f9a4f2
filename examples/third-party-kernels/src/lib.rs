//! A kernel crate of the kind a warpsafe user writes: it depends on `warpsafe` and defines
//! its own entry points with `warpsafe::kernel!`, in safe Rust only and with no feature gates.
//! Its host crate's `build.rs` compiles it to PTX with
//! `warpsafe_build::Builder::new("../third-party-kernels").build()` (warpsafe's own kernels
//! do not appear in its PTX); the host crate also depends on it, so that on the CPU
//! emulator the same kernels run as host code, and so that its launches are checked
//! against the kernels' parameter types (`third_party_kernels::scale_and_total` is then a
//! `warpsafe::kernel::Kernel`).
#![no_std]

use warpsafe::atomic::Relaxed;
use warpsafe::global::{AtomicSlice, DisjointSlice, Slice};
use warpsafe::group::{Group, Warp};
use warpsafe::op::{Max, Sum};
use warpsafe::thread::{self, TileIndex};

warpsafe::shared! {
    /// Each thread's running maximum, in its own slot (blocks of at most 1024 threads).
    static RUNNING_MAX: [f32; 1024];
}

/// The calling warp's index in the grid: the warps of block `b` come after those of the
/// blocks before it, `threads.div_ceil(32)` per block (a block's last warp may be partial).
pub fn global_warp() -> usize {
    thread::linear_block_idx() * thread::block_threads().div_ceil(32) as usize + thread::warp_idx() as usize
}

warpsafe::kernel! {
    /// Scales every element of `data` by `factor` and stores each warp's total of the
    /// scaled values in `warp_totals[global_warp()]` (a warp whose slot lies past the end
    /// of `warp_totals` stores nothing). One thread per element: the launch must cover
    /// `data` (`#[covers]`, checked by the host).
    pub fn scale_and_total(#[covers] data: DisjointSlice<f32>, factor: f32, warp_totals: AtomicSlice<f32>) {
        let mut scaled = 0.0;
        if let Some(i) = data.get(thread::index()) {
            scaled = data.read(i) * factor;
            data.write(i, scaled);
        }
        let warp = Warp::this();
        let total = warp.reduce(scaled, Sum);
        if warp.thread_rank() == 0 {
            if let Some(slot) = warp_totals.get(global_warp()) {
                slot.store(total, Relaxed);
            }
        }
    }

    /// Counts `samples` into `bins`: sample `s` goes to bin `s / width`. A sample past the
    /// last bin is a bug of the caller's, and the bounds check reports it (the kernel
    /// traps; on the emulator the launch fails naming the index and the length).
    pub fn histogram(samples: Slice<u32>, width: u32, bins: AtomicSlice<u32>) {
        for i in thread::grid_stride(samples.len()) {
            let bin = (samples[i] / width.max(1)) as usize;
            bins.at(bin).add(1, Relaxed);
        }
    }

    /// `out[t]` = the largest of `input`'s elements that thread `t` visits in a grid-stride
    /// loop, kept in the thread's own slot of block-shared memory; then each warp's largest
    /// goes to `warp_max[global_warp()]`.
    pub fn strided_max(input: Slice<f32>, out: DisjointSlice<f32>, warp_max: AtomicSlice<f32>) {
        RUNNING_MAX.write_own(f32::NEG_INFINITY);
        for i in thread::grid_stride(input.len()) {
            RUNNING_MAX.write_own(RUNNING_MAX.read_own().max(input[i]));
        }
        let mine = RUNNING_MAX.read_own();
        if let Some(t) = out.get(thread::index()) {
            out.write(t, mine);
        }
        let warp = Warp::this();
        let largest = warp.reduce(mine, Max);
        if warp.thread_rank() == 0 {
            if let Some(slot) = warp_max.get(global_warp()) {
                slot.store(largest, Relaxed);
            }
        }
    }

    /// Reverses every tile of `REVERSE_TILE` elements of `input` into `out` (the last,
    /// partial tile within its own length): block `b` owns tiles `b`, `b + grid`, ...
    pub fn reverse_tiles(input: Slice<u32>, out: DisjointSlice<u32, TileIndex<REVERSE_TILE>>) {
        let len = out.len().min(input.len());
        for i in thread::block_tiles::<REVERSE_TILE>(len) {
            let start = i.tile() * REVERSE_TILE;
            let tile_len = (len - start).min(REVERSE_TILE);
            out.write(i, input[start + tile_len - 1 - i.offset()]);
        }
    }
}

/// The tile of [`reverse_tiles`].
pub const REVERSE_TILE: usize = 256;
