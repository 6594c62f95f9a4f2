// An output view needs the buffer borrowed exclusively: `&buffer` does not compile.
use warpsafe::global::DisjointSlice;
use warpsafe_host::{Device, LaunchConfig, Program};

warpsafe::kernel! {
    pub fn fill(out: DisjointSlice<u32>) {
        if let Some(i) = out.get(warpsafe::thread::index()) {
            out.write(i, 1);
        }
    }
}

static PROGRAM: Program = Program::new("compile-fail", &[]);

fn main() -> Result<(), warpsafe_host::Error> {
    let device = Device::emulator();
    let function = device.load(&PROGRAM)?.kernel(&fill)?;
    let out = device.alloc_zeroed::<u32>(2)?;
    device.launch(&function, LaunchConfig::linear(1, 32), (&out,))
}
