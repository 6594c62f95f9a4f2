//! The PTX of warpsafe's own kernels, embedded at build time.

/// `(sm, PTX text)` for every architecture `build.rs` compiled `warpsafe-entry` for,
/// oldest first. A device runs the newest entry whose `sm` is at most its own compute
/// capability (PTX is forward compatible: the driver compiles it for newer GPUs).
pub const EMBEDDED: &[(u32, &str)] = include!(concat!(env!("OUT_DIR"), "/embedded_ptx.rs"));

/// The embedded PTX that a device of compute capability `major.minor` runs, or `None` when
/// the device is older than every embedded architecture (older than sm_70).
pub fn for_compute_capability(major: u32, minor: u32) -> Option<(u32, &'static str)> {
    let sm = major * 10 + minor;
    EMBEDDED.iter().rev().find(|(arch, _)| *arch <= sm).copied()
}
