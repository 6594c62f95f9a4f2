// A buffer of `f32` passed for a view of `u32`: the launch does not compile.
use warpsafe::global::{DisjointSlice, Slice};
use warpsafe_host::{Device, LaunchConfig, Program};

warpsafe::kernel! {
    pub fn copy(input: Slice<u32>, out: DisjointSlice<u32>) {
        if let Some(i) = out.get(warpsafe::thread::index()) {
            out.write(i, input[i]);
        }
    }
}

static PROGRAM: Program = Program::new("compile-fail", &[]);

fn main() -> Result<(), warpsafe_host::Error> {
    let device = Device::emulator();
    let function = device.load(&PROGRAM)?.kernel(&copy)?;
    let input = device.upload(&[1.0f32, 2.0])?;
    let mut out = device.alloc_zeroed::<u32>(2)?;
    device.launch(&function, LaunchConfig::linear(1, 32), (&input, &mut out))
}
