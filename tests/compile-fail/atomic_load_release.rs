// PTX has no release load: the ordering does not compile.
use warpsafe::atomic::{DeviceAtomicU32, Release};

fn load(atomic: &DeviceAtomicU32) -> u32 {
    atomic.load(Release)
}

fn main() {
    let _ = load;
}
