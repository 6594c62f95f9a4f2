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

/// An index that only the calling thread of the launch can hold: [`Index`] (grid-stride
/// ownership) or [`TileIndex`] (block-tile ownership), the index types of a
/// [`DisjointSlice`](crate::global::DisjointSlice). Sealed: a new kind of ownership needs a
/// proof that no two threads can hold one index.
pub trait OwnedIndex: Copy + sealed::Sealed {
    /// The element's index in the whole buffer.
    fn index(self) -> usize;
}

mod sealed {
    pub trait Sealed {}
}

impl sealed::Sealed for Index {}
impl OwnedIndex for Index {
    #[inline(always)]
    fn index(self) -> usize {
        self.value
    }
}

impl<const TILE: usize> sealed::Sealed for TileIndex<TILE> {}
impl<const TILE: usize> OwnedIndex for TileIndex<TILE> {
    #[inline(always)]
    fn index(self) -> usize {
        self.get()
    }
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
    Index::owned(linear_block_idx() * block_threads() as usize + linear_thread_idx() as usize)
}

/// This block's linear index in the grid, `x + y * grid.x + z * grid.x * grid.y`: blocks
/// numbered x fastest.
#[inline(always)]
pub fn linear_block_idx() -> usize {
    let (b, g) = (arch::block_idx(), arch::grid_dim());
    b.x as usize + b.y as usize * g.x as usize + b.z as usize * g.x as usize * g.y as usize
}

/// The number of blocks in the grid.
#[inline(always)]
pub fn grid_blocks() -> usize {
    let g = arch::grid_dim();
    g.x as usize * g.y as usize * g.z as usize
}

/// The number of threads in the whole grid.
#[inline(always)]
pub fn grid_threads() -> usize {
    grid_blocks() * block_threads() as usize
}

/// The calling thread's indices of a grid-stride loop over `0..len`: [`index`], then every
/// [`grid_threads`]-th one after it, below `len`. Every index of `0..len` goes to exactly
/// one thread, whatever the grid's size.
///
/// ```
/// warpsafe::kernel! {
///     pub fn fill(out: warpsafe::global::DisjointSlice<f32>) {
///         for i in warpsafe::thread::grid_stride(out.len()) {
///             out.write(i, 0.5);
///         }
///     }
/// }
/// # fn main() -> Result<(), warpsafe_host::Error> {
/// # static PROGRAM: warpsafe_host::Program =
/// #     warpsafe_host::Program::new("doc", &[]).with_kernels(&[fill.untyped()]);
/// // 64 threads cover 1000 elements (on the CPU emulator here).
/// let device = warpsafe_host::Device::emulator();
/// let mut out = device.alloc_zeroed::<f32>(1000)?;
/// device.launch(&device.load(&PROGRAM)?.kernel(&fill)?, warpsafe_host::LaunchConfig::linear(2, 32), (&mut out,))?;
/// assert!(out.download()?.iter().all(|&x| x == 0.5));
/// # Ok(())
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

/// The index of an element that the calling thread owns in a
/// [`DisjointSlice<T, TileIndex<TILE>>`](crate::global::DisjointSlice): the output is cut
/// into tiles of
/// `TILE` elements, block `b` of a grid of `G` blocks owns tiles `b`, `b + G`, `b + 2G`, ...,
/// and within a tile thread `t` of the block owns offsets `t`, `t + threads`, ...
/// ([`block_tiles`]). Every element belongs to exactly one thread, so threads write such a
/// view without atomics in safe code. `TILE` is part of the type: an index of one
/// tiling cannot address a view of another. Like [`Index`], it cannot be made from a number
/// or sent to another thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TileIndex<const TILE: usize> {
    tile: usize,
    offset: usize,
    not_send: PhantomData<*const ()>,
}

impl<const TILE: usize> TileIndex<TILE> {
    /// The element's index in the whole buffer: `tile * TILE + offset`.
    #[inline(always)]
    pub fn get(self) -> usize {
        self.tile * TILE + self.offset
    }

    /// Which tile the element is in.
    #[inline(always)]
    pub fn tile(self) -> usize {
        self.tile
    }

    /// The element's offset in its tile, below `TILE`.
    #[inline(always)]
    pub fn offset(self) -> usize {
        self.offset
    }
}

/// The calling thread's elements of `0..len` cut into tiles of `TILE` elements, block by
/// block (see [`TileIndex`]): the tiles of its block, and in each the offsets of the thread,
/// in order. Every index of `0..len` goes to exactly one thread, whatever the grid's size.
/// `TILE` is checked at compile time to be at least 1.
///
/// ```
/// use warpsafe::{global::{DisjointSlice, Slice}, thread::TileIndex};
/// warpsafe::kernel! {
///     /// Reverses every tile of 256 elements (the last, partial tile within its own length).
///     pub fn reverse_tiles(input: Slice<u32>, out: DisjointSlice<u32, TileIndex<256>>) {
///         for i in warpsafe::thread::block_tiles::<256>(out.len()) {
///             let start = i.tile() * 256;
///             let tile_len = (out.len() - start).min(256);
///             out.write(i, input[start + tile_len - 1 - i.offset()]);
///         }
///     }
/// }
/// # fn main() -> Result<(), warpsafe_host::Error> {
/// # static PROGRAM: warpsafe_host::Program =
/// #     warpsafe_host::Program::new("doc", &[]).with_kernels(&[reverse_tiles.untyped()]);
/// let device = warpsafe_host::Device::emulator();
/// let f = device.load(&PROGRAM)?.kernel(&reverse_tiles)?;
/// let data: Vec<u32> = (0..300).collect();
/// let input = device.upload(&data)?;
/// let mut out = device.alloc_zeroed::<u32>(300)?;
/// device.launch(&f, warpsafe_host::LaunchConfig::linear(2, 64), (&input, &mut out))?;
/// let want: Vec<u32> = (0..256).rev().chain((256..300).rev()).collect();
/// assert_eq!(out.download()?, want);
/// # Ok(())
/// # }
/// ```
#[inline(always)]
pub fn block_tiles<const TILE: usize>(len: usize) -> BlockTiles<TILE> {
    const { assert!(TILE > 0, "a tile has at least one element") };
    BlockTiles {
        tile: linear_block_idx(),
        tile_step: grid_blocks(),
        first_offset: linear_thread_idx() as usize,
        offset: linear_thread_idx() as usize,
        offset_step: block_threads() as usize,
        len,
        not_send: PhantomData,
    }
}

/// The iterator of [`block_tiles`].
#[derive(Debug)]
pub struct BlockTiles<const TILE: usize> {
    tile: usize,
    tile_step: usize,
    first_offset: usize,
    offset: usize,
    offset_step: usize,
    len: usize,
    not_send: PhantomData<*const ()>,
}

impl<const TILE: usize> Iterator for BlockTiles<TILE> {
    type Item = TileIndex<TILE>;

    #[inline(always)]
    fn next(&mut self) -> Option<TileIndex<TILE>> {
        loop {
            let start = self.tile.checked_mul(TILE).filter(|&s| s < self.len)?;
            if self.offset < TILE && start + self.offset < self.len {
                let index = TileIndex { tile: self.tile, offset: self.offset, not_send: PhantomData };
                self.offset += self.offset_step;
                return Some(index);
            }
            self.tile = self.tile.saturating_add(self.tile_step);
            self.offset = self.first_offset;
        }
    }
}
