//! Thread, block and grid coordinates (CUDA's `threadIdx`, `blockDim`, `blockIdx`,
//! `gridDim`).

use crate::arch;

/// This thread's index in a 1-D grid: `blockIdx.x * blockDim.x + threadIdx.x`, widened to
/// 64 bits so that grids of more than 2^32 threads index correctly.
#[inline(always)]
pub fn global_index_x() -> u64 {
    arch::block_idx_x() as u64 * arch::block_dim_x() as u64 + arch::thread_idx_x() as u64
}

/// Total number of threads of a 1-D grid: `gridDim.x * blockDim.x`, in 64 bits.
#[inline(always)]
pub fn grid_threads_x() -> u64 {
    arch::grid_dim_x() as u64 * arch::block_dim_x() as u64
}

pub use crate::arch::lane_id;
