//! Thread, block and grid coordinates (CUDA's `threadIdx`, `blockDim`, `blockIdx`,
//! `gridDim`).

use core::marker::PhantomData;

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

/// The index of an element that the calling thread owns in a
/// [`DisjointSlice`](crate::global::DisjointSlice): its linear index in the grid
/// ([`index`]) or one of a grid-stride loop ([`grid_stride`]).
///
/// Every `Index` a thread can obtain is congruent to the thread's linear grid index
/// modulo the number of threads in the grid, so no two threads of a launch ever hold the
/// same one: that is what lets threads write a `DisjointSlice` without atomics in safe
/// code. It cannot be made from a number, and it is neither `Send` nor `Sync` nor `Pod`, so
/// it cannot travel to another thread (through shared memory, a shuffle or a static).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Index {
    value: usize,
    not_send: PhantomData<*const ()>,
}

impl Index {
    #[inline(always)]
    fn owned(value: usize) -> Index {
        Index { value, not_send: PhantomData }
    }

    /// The index as a number, for indexing anything else.
    #[inline(always)]
    pub fn get(self) -> usize {
        self.value
    }
}

/// The calling thread's linear index in the whole grid: `block * threads_per_block +
/// thread`, with blocks and threads numbered x fastest. In a 1-D launch it is
/// `blockIdx.x * blockDim.x + threadIdx.x` ([`global_index_x`]).
#[inline(always)]
pub fn index() -> Index {
    let (b, g) = (arch::block_idx(), arch::grid_dim());
    let block = b.x as usize + b.y as usize * g.x as usize + b.z as usize * g.x as usize * g.y as usize;
    Index::owned(block * block_threads() as usize + linear_thread_idx() as usize)
}

/// The number of threads in the whole grid.
#[inline(always)]
pub fn grid_threads() -> usize {
    let g = arch::grid_dim();
    g.x as usize * g.y as usize * g.z as usize * block_threads() as usize
}

/// The calling thread's indices of a grid-stride loop over `0..len`: [`index`], then every
/// [`grid_threads`]-th one after it, below `len`. Every index of `0..len` goes to exactly
/// one thread, whatever the grid's size.
///
/// ```
/// # fn kernel_body(out: warpsafe::global::DisjointSlice<f32>) {
/// for i in warpsafe::thread::grid_stride(out.len()) {
///     out.write(i, 0.5);
/// }
/// # }
/// ```
#[inline(always)]
pub fn grid_stride(len: usize) -> GridStride {
    GridStride { next: index().get(), step: grid_threads(), end: len, not_send: PhantomData }
}

/// The iterator of [`grid_stride`].
#[derive(Debug)]
pub struct GridStride {
    next: usize,
    step: usize,
    end: usize,
    not_send: PhantomData<*const ()>,
}

impl Iterator for GridStride {
    type Item = Index;

    #[inline(always)]
    fn next(&mut self) -> Option<Index> {
        if self.next >= self.end {
            return None;
        }
        let index = Index::owned(self.next);
        // Saturating: past usize::MAX there is nothing left to visit.
        self.next = self.next.saturating_add(self.step);
        Some(index)
    }
}
