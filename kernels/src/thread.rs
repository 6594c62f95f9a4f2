//! Thread, block and grid coordinates (CUDA's `threadIdx`, `blockDim`, `blockIdx`,
//! `gridDim`).

use crate::arch;

pub use crate::arch::{block_dim, block_idx, grid_dim, lane_id, thread_idx, Dim3};

/// This thread's index in a 1-D grid: `blockIdx.x * blockDim.x + threadIdx.x`, widened to
/// 64 bits so that grids of more than 2^32 threads index correctly.
#[inline(always)]
pub fn global_index_x() -> u64 {
    arch::block_idx().x as u64 * arch::block_dim().x as u64 + arch::thread_idx().x as u64
}

/// Total number of threads of a 1-D grid: `gridDim.x * blockDim.x`, in 64 bits.
#[inline(always)]
pub fn grid_threads_x() -> u64 {
    arch::grid_dim().x as u64 * arch::block_dim().x as u64
}

/// This thread's linear index within its block, `x + y * dim.x + z * dim.x * dim.y`: the
/// order in which the hardware packs threads into warps (warp `i` holds linear indices
/// `32 * i .. 32 * i + 32`).
#[inline(always)]
pub fn linear_thread_idx() -> u32 {
    let t = arch::thread_idx();
    let d = arch::block_dim();
    t.x + t.y * d.x + t.z * d.x * d.y
}

/// The number of threads in this block.
#[inline(always)]
pub fn block_threads() -> u32 {
    let d = arch::block_dim();
    d.x * d.y * d.z
}

/// This thread's warp within its block (`linear_thread_idx() / 32`).
#[inline(always)]
pub fn warp_idx() -> u32 {
    linear_thread_idx() / arch::WARP_SIZE
}
