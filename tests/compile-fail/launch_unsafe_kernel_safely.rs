// An `unsafe fn` kernel cannot be launched by the safe `launch`.
use warpsafe_host::{Device, LaunchConfig, Program};

warpsafe::kernel! {
    /// # Safety
    /// `out` holds one element per thread.
    pub unsafe fn fill(out: *mut u32) {
        let i = warpsafe::thread::index().get();
        // SAFETY: the kernel's contract.
        unsafe { *out.add(i) = 1 };
    }
}

static PROGRAM: Program = Program::new("compile-fail", &[]);

fn main() -> Result<(), warpsafe_host::Error> {
    let device = Device::emulator();
    let function = device.load(&PROGRAM)?.kernel(&fill)?;
    let mut out = device.alloc_zeroed::<u32>(2)?;
    device.launch(&function, LaunchConfig::linear(1, 32), (&mut out,))
}
