//! Reductions and scans at warp, block and grid level, over any [`Operator`].
//!
//! | level | module | what |
//! | --- | --- | --- |
//! | warp | [`warp`] | reduce, inclusive and exclusive scan over the caller's warp: safe (checked, any lanes that exist) or raw (all 32 lanes proven present) |
//! | block | [`block`] | reduce, inclusive and exclusive scan over a block of 1 to 1024 threads, in shared scratch of [`block::SCRATCH_LEN`] elements |
//! | grid | [`grid`] | a whole array in one of three strategies (two-pass, last block, cooperative), and a grid barrier |
//! | atomics | [`aggregate`] | warp-aggregated atomics: one atomic per warp for the lanes that want one |
//! | copies | [`copies`] | element-wise fold of equal-length copies (the combining step of a cross-device all-reduce) |
//! | segments | [`segmented`] | one result per segment (fixed length or CSR offsets), a thread, tile, warp or block per segment |
//!
//! Everything combines operands in rank order (`combine(a, b)` has the lower ranks'
//! values in `a`) unless the operator declares [`Operator::COMMUTATIVE`], in which case
//! only the grid reductions use an interleaved order that reads memory faster (see
//! [`grid`]). In both cases the order depends only on the shapes (block size, grid size,
//! input length and address), never on timing: float results are the same bits from run
//! to run. No float atomics are used.
//!
//! Kernels for your own element type and operator: [`crate::reduce_kernels!`],
//! [`crate::segmented_reduce_kernels!`].
//!
//! ```
//! use warpsafe::atomic::Relaxed;
//! use warpsafe::global::{AtomicSlice, Slice};
//! use warpsafe::op::Sum;
//! use warpsafe::reduce::block;
//! warpsafe::shared! {
//!     static SCRATCH: [f32; block::SCRATCH_LEN];
//! }
//! warpsafe::kernel! {
//!     /// `totals[b]` = the sum of block `b`'s elements of `x` (one per thread).
//!     pub fn block_totals(x: Slice<f32>, totals: AtomicSlice<f32>) {
//!         let mine = x.get(warpsafe::thread::index().get()).unwrap_or(0.0);
//!         // SAFETY: every thread of the block calls this, with the same scratch, which
//!         // nothing else uses.
//!         let total = unsafe { block::reduce(SCRATCH.slice(), mine, Sum) };
//!         if warpsafe::thread::linear_thread_idx() == 0 {
//!             if let Some(slot) = totals.get(warpsafe::thread::linear_block_idx()) {
//!                 slot.store(total, Relaxed);
//!             }
//!         }
//!     }
//! }
//! # fn main() -> Result<(), warpsafe_host::Error> {
//! # static PROGRAM: warpsafe_host::Program =
//! #     warpsafe_host::Program::new("doc", &[]).with_kernels(&[block_totals.untyped()]);
//! # let device = warpsafe_host::Device::emulator();
//! # let f = device.load(&PROGRAM)?.kernel(&block_totals)?;
//! # let x = device.upload(&[1.0f32; 100])?;
//! # let mut totals = device.alloc_zeroed::<f32>(2)?;
//! # device.launch(&f, warpsafe_host::LaunchConfig::linear(2, 64), (&x, &mut totals))?;
//! # assert_eq!(totals.download()?, vec![64.0, 36.0]);
//! # Ok(())
//! # }
//! ```
//!
//! [`Operator`]: crate::op::Operator
//! [`Operator::COMMUTATIVE`]: crate::op::Operator::COMMUTATIVE

pub mod aggregate;
pub mod block;
pub mod copies;
pub mod grid;
pub mod segmented;
pub mod warp;
