//! The README's demo: sums every warp's 32 inputs on the GPU and checks the sums on the
//! CPU. Without a GPU it says so and exits successfully (the CPU emulator will give it a
//! path there).

use warpsafe_host::{Error, Gpu};

fn main() -> anyhow::Result<()> {
    let gpu = match Gpu::new() {
        Ok(gpu) => gpu,
        Err(Error::NoDevice { reason }) => {
            println!("warpsafe demo: no CUDA device found ({reason}); nothing was run on a GPU.");
            println!("(the CPU emulator, which will run the same kernels without a GPU, is not built yet)");
            return Ok(());
        }
        Err(err) => return Err(err.into()),
    };
    let (major, minor) = gpu.compute_capability();
    println!(
        "warpsafe demo on {} (compute capability {major}.{minor}, PTX sm_{})",
        gpu.name(),
        gpu.ptx_arch()
    );

    let n = 1_000_003usize;
    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 8).collect();
    let sums = gpu.warp_sums(&input)?;
    let expected: Vec<u32> =
        input.chunks(32).map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b))).collect();
    anyhow::ensure!(sums == expected, "GPU warp sums differ from the CPU's");
    println!("warp_sums over {n} u32 values: {} warp sums, all equal to the CPU's", sums.len());
    println!("first sums: {:?}", &sums[..4]);
    Ok(())
}
