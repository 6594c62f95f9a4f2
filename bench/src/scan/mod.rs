//! What `scan-bench` needs that no GPU does: its command line, inputs and host references,
//! rows with their derived columns, tables and CSV, the parser of `cub/scan_cub.cu`'s
//! records, the targets and the plot. `scan-bench` compares warpsafe's device-wide scans
//! and selections (`warpsafe_host::scan`) with CUB's `DeviceScan` and `DeviceSelect`, and
//! a device-to-device copy of the same bytes, in one run on one GPU.

pub mod cli;
pub mod data;
pub mod plot;
pub mod report;
pub mod targets;
