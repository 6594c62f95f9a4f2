// One buffer as the input and the output of one launch: two views of it would race, and
// the borrow checker refuses it.
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
    let mut data = device.alloc_zeroed::<u32>(2)?;
    device.launch(&function, LaunchConfig::linear(1, 32), (&data, &mut data))
}
