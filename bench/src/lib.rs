//! warpsafe's GPU benchmarks (run on a GPU machine; see the README):
//!
//! - `group-checks`: what the run-time group checks cost;
//! - `collective-bench`: warpsafe's multi-GPU collectives (element-wise all-reduce,
//!   sharded sum, the scalar combining step) against NCCL called directly, on every GPU
//!   of the machine; CSV and SVG plot;
//! - `reduce-bench`: warpsafe's reduce (each strategy and the automatic choice) against
//!   CUB's `DeviceReduce` and a read-only roofline kernel, for sum and max over f32, f64
//!   and i32 at 2^10 to 2^28 elements; prints a table and the targets, writes a
//!   CSV and an SVG plot.
//!
//! This library holds everything of `reduce-bench` that needs no GPU (input data and
//! references, the timing method, CUB's program and its output, the table, CSV and
//! plot), so that it is unit-tested on any machine.

pub mod cli;
pub mod cub;
pub mod data;
pub mod meta;
pub mod plot;
pub mod report;
pub mod stats;
pub mod targets;
pub mod timing;
