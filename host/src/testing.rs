//! Helpers for the integration tests of kernel crates (warpsafe's own use them too): run
//! one test body on the CPU emulator, under several scheduler seeds, and on every GPU of
//! the machine, so that one `cargo test` checks both backends wherever it runs.
//!
//! Without a GPU the GPU half prints a visible `skipped: no CUDA device (...)` line on
//! stderr (libtest does not capture it) and the test passes on the emulator alone; with
//! `WARPSAFE_REQUIRE_GPU=1` (a GPU machine's CI) a missing GPU fails the test instead, so
//! a GPU run cannot pass by skipping.
//!
//! ```
//! use warpsafe_host::testing;
//!
//! // In a #[test] function:
//! testing::for_each_device("warp_sums", 0..3, |device| {
//!     assert_eq!(device.warp_sums(&[1u32; 64])?, vec![32, 32]);
//!     Ok::<(), warpsafe_host::Error>(())
//! });
//! ```

use std::io::Write as _;
use std::ops::Range;

use crate::{emu, Device, Error};

/// The environment variable that makes a missing GPU fail the tests: `1`.
pub const REQUIRE_GPU_VARIABLE: &str = "WARPSAFE_REQUIRE_GPU";

/// Whether `WARPSAFE_REQUIRE_GPU=1`.
pub fn gpu_required() -> bool {
    std::env::var(REQUIRE_GPU_VARIABLE).as_deref() == Ok("1")
}

/// Prints `line` to the process's stderr, where a passing test run shows it.
fn note(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// What a test does without a GPU: fails with `WARPSAFE_REQUIRE_GPU=1`, else prints a
/// visible `skipped: no CUDA device (<what>: <reason><tail>)` line.
fn without_gpu(test: &str, what: &str, reason: &str, tail: &str) {
    if gpu_required() {
        panic!("{test}: {REQUIRE_GPU_VARIABLE}=1 but no CUDA device: {reason}");
    }
    note(&format!("skipped: no CUDA device ({what}: {reason}{tail})"));
}

/// The first GPU, for a test that runs only on a GPU; `None` after a visible
/// `skipped: no CUDA device` line when there is none.
///
/// # Panics
/// With `WARPSAFE_REQUIRE_GPU=1` and no GPU, and when a GPU is present but cannot be
/// opened (a broken driver is a failure, not a skip).
pub fn test_gpu(test: &str) -> Option<Device> {
    match Device::gpu() {
        Ok(gpu) => Some(gpu),
        Err(Error::NoDevice { reason }) => {
            without_gpu(test, test, &reason, "");
            None
        }
        Err(err) => panic!("{test}: opening the GPU failed: {err}"),
    }
}

/// Every GPU of the machine; empty after a visible `skipped: no CUDA device` line when
/// there is none.
///
/// # Panics
/// With `WARPSAFE_REQUIRE_GPU=1` and no GPU, and when a GPU is present but cannot be
/// opened (a broken driver is a failure, not a skip).
pub fn test_gpus(test: &str) -> Vec<Device> {
    let gpus = Device::gpus().unwrap_or_else(|err| panic!("{test}: opening the GPUs failed: {err}"));
    if gpus.is_empty() {
        let reason = match Device::gpu() {
            Err(Error::NoDevice { reason }) => reason,
            _ => "no GPU".to_string(),
        };
        without_gpu(test, &format!("GPU half of {test}"), &reason, "; ran on the emulator");
    }
    gpus
}

/// The devices a kernel test runs on: the emulator with default options (its seed from
/// `$WARPSAFE_EMU_SEED`), then every GPU ([`test_gpus`]).
///
/// # Panics
/// As for [`test_gpus`].
pub fn test_devices(test: &str) -> Vec<Device> {
    let mut devices = vec![Device::emulator()];
    devices.extend(test_gpus(test));
    devices
}

/// Runs `body` on the emulator under every seed of `seeds` (only `$WARPSAFE_EMU_SEED`
/// when it is set, to replay a failure), then on every GPU.
///
/// # Panics
/// When `body` fails on a device (the message names the device and seed, so a failing
/// seed can be replayed with `WARPSAFE_EMU_SEED`), and as for [`test_gpus`].
pub fn for_each_device<E: std::fmt::Display>(
    test: &str,
    seeds: Range<u64>,
    mut body: impl FnMut(&Device) -> Result<(), E>,
) {
    let seeds: Vec<u64> = match std::env::var("WARPSAFE_EMU_SEED").ok().and_then(|s| s.parse().ok()) {
        Some(seed) => vec![seed],
        None => seeds.collect(),
    };
    let emulated =
        seeds.into_iter().map(|seed| Device::emulator_with(emu::Options { seed, ..emu::Options::default() }));
    for device in emulated.chain(test_gpus(test)) {
        if let Err(err) = body(&device) {
            panic!("{test} failed on {}: {err}", device.name());
        }
    }
}
