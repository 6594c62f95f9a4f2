// PTX has no acquire store: the ordering does not compile.
use warpsafe::atomic::{Acquire, DeviceAtomicU32};

fn store(atomic: &DeviceAtomicU32) {
    atomic.store(1, Acquire)
}

fn main() {
    let _ = store;
}
