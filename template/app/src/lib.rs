//! The app's GPU code: its kernels as a program, and the host functions that launch them.

use warpsafe_host::{Device, Error, LaunchConfig};

/// The kernel crate: PTX for sm_70 and sm_90 (built by `build.rs`) and host code.
pub static KERNELS: warpsafe_host::Program = warpsafe_host::include_program!("my_kernels");

/// `a * x + y`, computed on `device`.
///
/// # Errors
/// Any launch or copy error of `warpsafe_host`; `x` and `y` of different lengths are
/// [`Error::LengthMismatch`].
pub fn saxpy(device: &Device, a: f32, x: &[f32], y: &[f32]) -> Result<Vec<f32>, Error> {
    if x.len() != y.len() {
        return Err(Error::LengthMismatch { operation: "saxpy", buffer: y.len(), host: x.len() });
    }
    let kernel = device.load(&KERNELS)?.kernel(&my_kernels::saxpy)?;
    let x = device.upload(x)?;
    let mut y = device.upload(y)?;
    let blocks = (y.len() as u32).div_ceil(256).clamp(1, 1024);
    device.launch(&kernel, LaunchConfig::linear(blocks, 256), (a, &x, &mut y))?;
    y.download()
}

/// Every point mirrored in the diagonal, on `device`.
///
/// # Errors
/// Any launch or copy error of `warpsafe_host`.
pub fn mirror(device: &Device, points: &[my_kernels::Point]) -> Result<Vec<my_kernels::Point>, Error> {
    let kernel = device.load(&KERNELS)?.kernel(&my_kernels::mirror)?;
    let mut points = device.upload(points)?;
    device.launch(&kernel, LaunchConfig::linear(4, 128), (&mut points,))?;
    points.download()
}

/// The sum of `input`, computed on `device`.
///
/// # Errors
/// Any launch or copy error of `warpsafe_host`.
pub fn total(device: &Device, input: &[u32]) -> Result<u64, Error> {
    let kernel = device.load(&KERNELS)?.kernel(&my_kernels::total)?;
    let input = device.upload(input)?;
    let mut total = device.alloc_zeroed::<u64>(1)?;
    let blocks = (input.len() as u32).div_ceil(256).clamp(1, 64);
    device.launch(&kernel, LaunchConfig::linear(blocks, 256), (&input, &mut total))?;
    Ok(total.download()?[0])
}
