//! Reductions and scans at warp, block and grid level, over any [`Operator`].
//!
//! | level | module | what |
//! | --- | --- | --- |
//! | warp | [`warp`] | reduce, inclusive and exclusive scan over the caller's warp: safe (checked, any lanes that exist) or raw (all 32 lanes proven present) |
//! | block | [`block`] | reduce, inclusive and exclusive scan over a block of 1 to 1024 threads, in shared scratch of [`block::SCRATCH_LEN`] elements |
//! | grid | [`grid`] | a whole array in one of three strategies (two-pass, last block, cooperative), and a grid barrier |
//! | atomics | [`aggregate`] | warp-aggregated atomics: one atomic per warp for the lanes that want one |
//! | copies | [`copies`] | element-wise fold of equal-length copies (the combining step of a cross-device all-reduce) |
//!
//! Everything combines operands in rank order (`combine(a, b)` has the lower ranks'
//! values in `a`) unless the operator declares [`Operator::COMMUTATIVE`], in which case
//! only the grid reductions use an interleaved order that reads memory faster (see
//! [`grid`]). In both cases the order depends only on the shapes (block size, grid size,
//! input length and address), never on timing: float results are the same bits from run
//! to run. No float atomics are used.
//!
//! Kernels for your own element type and operator: [`crate::reduce_kernels!`].
//!
//! ```ignore
//! use warpsafe::op::Sum;
//! use warpsafe::reduce::block;
//! warpsafe::shared! {
//!     static SCRATCH: [f32; block::SCRATCH_LEN];
//! }
//! // In a kernel, every thread of the block:
//! // SAFETY: all threads of the block call this; SCRATCH is used by nothing else.
//! let total = unsafe { block::reduce(SCRATCH.slice(), x, Sum) };
//! ```
//!
//! [`Operator`]: crate::op::Operator
//! [`Operator::COMMUTATIVE`]: crate::op::Operator::COMMUTATIVE

pub mod aggregate;
pub mod block;
pub mod copies;
pub mod grid;
pub mod warp;
