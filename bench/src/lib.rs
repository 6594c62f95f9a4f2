//! warpsafe's GPU benchmarks (run on a GPU machine; see the README):
//!
//! - `group-checks`: what the run-time group checks cost;
//! - `collective-bench`: warpsafe's multi-GPU collectives (element-wise all-reduce,
//!   sharded sum, the scalar combining step) against NCCL called directly, on every GPU
//!   of the machine; CSV and SVG plot;
//! - `reduce-bench`: warpsafe's reduce (each strategy and the automatic choice) against
//!   CUB's `DeviceReduce` and a read-only roofline kernel, for sum and max over f32, f64
//!   and i32 at 2^10 to 2^28 elements; prints a table and the targets, writes a
//!   CSV and an SVG plot;
//! - `scan-bench`: warpsafe's device-wide scans and selections (`Scanner`, `Selector`)
//!   against CUB's `DeviceScan` and `DeviceSelect` and a device-to-device copy, for f32,
//!   f64 and i32 at 2^10 to 2^28 elements (and i32 past 2^31 with `--huge`); prints
//!   markdown tables and the targets, writes a CSV and an SVG plot;
//! - `histogram-bench`: warpsafe's `Histogram` (256 even bins of u8) against CUB's
//!   `DeviceHistogram::HistogramEven` and a read ceiling, uniform and skewed samples at
//!   2^10 to 2^28; a table, the targets, a CSV and an SVG plot ([`histogram`]);
//! - `segreduce-bench`: warpsafe's segmented reduce (`SegmentedReducer`, f32 sums) against
//!   CUB's `DeviceSegmentedReduce::Sum` and the read ceiling (the roofline kernel over the
//!   same bytes), at 2^10 to 2^28 elements in segments of fixed lengths 1 to 65536 and a
//!   power-law mix; markdown tables, the targets, a CSV and an SVG plot.
//!
//! This library holds everything of `reduce-bench`, `scan-bench`, `histogram-bench` and
//! `segreduce-bench`
//! that needs no GPU (input data and references, the timing method, CUB's programs and
//! their output, the tables, CSV and plots, the flow they share in [`harness`], the read
//! ceiling's kernels in [`roofline`]; `scan-bench`'s own parts in [`scan`],
//! `histogram-bench`'s in [`histogram`], `segreduce-bench`'s in [`segmented`]), so that it
//! is unit-tested on any machine.

pub mod cli;
pub mod cub;
pub mod data;
pub mod harness;
pub mod histogram;
pub mod meta;
pub mod par;
pub mod plot;
pub mod report;
pub mod roofline;
pub mod scan;
pub mod segmented;
pub mod stats;
pub mod targets;
pub mod timing;
