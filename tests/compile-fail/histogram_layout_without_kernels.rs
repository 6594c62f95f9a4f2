// A histogram of a sample type and channel layout that no kernel set covers (warpsafe's
// `BuiltIn` has `u16` in 1 channel only) does not compile: no kernel of another layout is
// ever launched on its buffers.
use warpsafe_host::histogram::Histogram;
use warpsafe_host::Device;

fn main() {
    let device = Device::emulator();
    let _rgba = Histogram::<u16, 4, 4>::even(&device, 16, 0, 65_536);
}
