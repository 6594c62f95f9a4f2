//! Runs the kernels once on the GPU, or on the CPU emulator without one.
fn main() -> Result<(), warpsafe_host::Error> {
    let device = warpsafe_host::Device::auto()?;
    println!("running on {} ({})", device.name(), device.backend());
    println!("saxpy: {:?}", my_app::saxpy(&device, 2.0, &[1.0, 2.0, 3.0], &[10.0; 3])?);
    println!("total of 1..=1000: {}", my_app::total(&device, &(1..=1000).collect::<Vec<u32>>())?);
    Ok(())
}
