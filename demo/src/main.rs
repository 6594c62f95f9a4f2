//! The README's demo: sums every warp's 32 inputs on a device and checks the sums on the
//! CPU. The device is the GPU when one is present and warpsafe's CPU emulator otherwise
//! (`Device::auto`); the demo says which it used.

use std::time::Instant;

use warpsafe_host::Device;

fn main() -> anyhow::Result<()> {
    let device = Device::auto()?;
    let (details, n) = match device.as_gpu() {
        Some(gpu) => {
            let (major, minor) = gpu.compute_capability();
            (format!("compute capability {major}.{minor}, PTX sm_{}", gpu.ptx_arch()), 1_000_003usize)
        }
        // Every emulated thread is a coroutine: a smaller input keeps the demo quick.
        None => (
            "no CUDA device found: the same kernels run on the CPU, every warp rule checked".to_string(),
            100_003usize,
        ),
    };
    println!("warpsafe demo on {} (backend: {}; {details})", device.name(), device.backend());

    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 8).collect();
    let start = Instant::now();
    let sums = device.warp_sums(&input)?;
    let elapsed = start.elapsed();
    let expected: Vec<u32> =
        input.chunks(32).map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b))).collect();
    anyhow::ensure!(sums == expected, "the {} warp sums differ from the CPU's", device.backend());
    println!(
        "warp_sums over {n} u32 values: {} warp sums, all equal to the CPU's ({} round trip {:.1} ms)",
        sums.len(),
        device.backend(),
        elapsed.as_secs_f64() * 1e3
    );
    println!("first sums: {:?}", &sums[..4]);
    Ok(())
}
