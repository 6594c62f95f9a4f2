// A kernel that takes a `u64` launched with a `u32`: the launch does not compile.
use warpsafe::global::DisjointSlice;
use warpsafe_host::{Device, LaunchConfig, Program};

warpsafe::kernel! {
    pub fn fill(out: DisjointSlice<u64>, value: u64) {
        if let Some(i) = out.get(warpsafe::thread::index()) {
            out.write(i, value);
        }
    }
}

static PROGRAM: Program = Program::new("compile-fail", &[]);

fn main() -> Result<(), warpsafe_host::Error> {
    let device = Device::emulator();
    let function = device.load(&PROGRAM)?.kernel(&fill)?;
    let mut out = device.alloc_zeroed::<u64>(4)?;
    device.launch(&function, LaunchConfig::linear(1, 32), (&mut out, 7u32))
}
