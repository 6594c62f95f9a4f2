//! What `segreduce-bench` needs that no GPU does: its command line, the segment patterns,
//! inputs and host references, rows with their derived columns, tables and CSV, the parser
//! of `cub/segmented_cub.cu`'s records, the targets and the plot. `segreduce-bench`
//! compares warpsafe's `SegmentedReducer` (f32 sums) with CUB's
//! `DeviceSegmentedReduce::Sum`, and a read-only roofline kernel over the same bytes (the
//! read ceiling), in one run on one GPU.

pub mod cli;
pub mod data;
pub mod plot;
pub mod report;
pub mod targets;
