//! The emulator runs correct kernels.
use core::ffi::c_void;
use warpsafe::emu::{self, LaunchConfig, Options};

#[test]
fn smoke() {
    let mut out = vec![0u32; 64];
    let mut ptr = out.as_mut_ptr();
    let args = [&mut ptr as *mut *mut u32 as *mut c_void];
    unsafe {
        emu::launch(&emu_test_kernels::smoke, &LaunchConfig::linear(2, 32), &args, &Options::default())
    }
    .unwrap();
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, (i as u32 % 32) ^ 1);
    }
}
