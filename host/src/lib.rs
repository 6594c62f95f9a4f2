//! # warpsafe-host
//!
//! The host side of warpsafe: one launch API over two backends, a CUDA GPU and warpsafe's
//! CPU emulator (`warpsafe::emu`), so the same host code and the same tests run on either.
//!
//! - [`Device`]: [`Device::auto`] takes the GPU when there is one and the emulator
//!   otherwise; [`Device::gpu`] and [`Device::emulator`] pick explicitly.
//! - [`Program`]: a kernel crate, as PTX per architecture (built by `warpsafe-build` in a
//!   build script) and as host code (the statics `warpsafe::kernel!` declares on the host).
//!   [`ptx::ENTRY`] holds warpsafe's own kernels.
//! - [`Module`] ([`Device::load`]) and [`Function`] ([`Module::kernel`]): what to launch.
//! - [`DeviceBuffer`]: device memory, 256-byte aligned and zeroed on both backends; on the
//!   emulator it is host memory, and its [`DeviceBuffer::device_address`] is what the
//!   emulated kernel's pointer parameter receives.
//! - [`Stream`] and [`Event`]: enqueued launches and timing (on the emulator launches are
//!   synchronous and events are wall-clock).
//! - [`Device::launch_cooperative`], [`Device::max_cooperative_blocks`]: grids whose
//!   blocks are all resident at once (`cuLaunchCooperativeKernel` on the GPU).
//! - [`collective`]: several devices reducing together (NCCL between GPUs, an in-process
//!   clique between emulated devices): element-wise all-reduce and sharded reductions.
//!
//! On the GPU the driver runs the kernels; on the emulator they run on the calling thread
//! under a seeded scheduler, and every warp-rule violation (a collective whose mask
//! excludes the caller, lanes that never arrive, a block barrier some thread misses, an
//! out-of-bounds shared access) ends the launch with [`Error::Emulator`], whose message
//! names the kernel, block, warp, lanes, masks and seed.
//!
//! - [`testing`]: one test body on the emulator under several seeds and on every GPU,
//!   honouring `WARPSAFE_REQUIRE_GPU`, for the integration tests of kernel crates.
//! - Re-exported for apps, so that a host crate needs only `warpsafe-host` (and
//!   `warpsafe-build` in its build script): [`warpsafe`] (operators, the views' types),
//!   [`emu`] (the emulator's `Options`), and [`bytemuck`] (with its derives).
//!
//! Without the default `cuda` feature the crate is emulator-only: nothing links
//! `libcuda`, no PTX is built, [`Device::auto`] picks the emulator and [`Device::gpu`] is
//! [`Error::NoDevice`] saying why.
//!
//! Every failure is an [`Error`] with a message; nothing here panics on bad input.
//!
//! ```
//! # fn main() -> Result<(), warpsafe_host::Error> {
//! use warpsafe_host::{kernel_args, ptx, Device, LaunchConfig};
//!
//! let device = Device::auto()?;
//! // warpsafe's own warp-sum kernel, launched by hand (Device::warp_sums does this).
//! let module = device.load(&ptx::ENTRY)?;
//! let function = module.function_by_name("warpsafe_warp_sum_u32")?;
//! let input = device.upload(&(0..64u32).collect::<Vec<_>>())?;
//! let sums = device.alloc_zeroed::<u32>(2)?;
//! let (mut p_input, mut len, mut p_sums) = (input.device_address(), 64u64, sums.device_address());
//! let args = kernel_args![p_input, len, p_sums];
//! // SAFETY: the kernel takes (*const u32, u64, *mut u32) with `len` inputs and
//! // len / 32 outputs, in blocks of a multiple of 32 threads.
//! unsafe { device.launch_raw(&function, LaunchConfig::linear(1, 64), &args)? };
//! assert_eq!(sums.download()?, vec![(0..32).sum(), (32..64).sum()]);
//! # Ok(())
//! # }
//! ```

mod buffer;
pub mod collective;
mod device;
mod emulator;
mod error;
// The GPU backend, or (without the `cuda` feature) its value-less stand-in.
#[cfg_attr(not(feature = "cuda"), path = "gpu_absent.rs")]
mod gpu;
pub mod histogram;
mod launch;
mod lookback;
mod program;
pub mod ptx;
mod ptx_split;
pub mod reduce;
pub mod scan;
pub mod segmented;
mod stream;
pub mod testing;
mod warp_sum;

pub use bytemuck;
pub use warpsafe;
pub use warpsafe::emu;
use warpsafe_entry::kernels as entry_kernels;

pub use buffer::{DeviceBuffer, ALLOCATION_ALIGNMENT};
pub use device::{Backend, Device};
pub use error::{Error, SegmentsProblem};
pub use gpu::Gpu;
pub use launch::{KernelArg, KernelArgs, LaunchConfig, ParamAt, ParamValues};
pub use program::{Function, Module, Program, Untyped};
pub use stream::{Event, Stream};
pub use warp_sum::WarpSumElement;

#[cfg(test)]
mod ptx_selection {
    use crate::{Error, Program};

    static HOPPER_ONLY: Program = Program::new("my-kernels", &[(90, "// sm_90 PTX")]);
    static NONE: Program = Program::new("my-kernels", &[]);

    #[test]
    fn a_device_without_ptx_in_the_program_is_an_error_that_says_what_to_build() {
        assert_eq!(HOPPER_ONLY.ptx_for_device("H100", 9, 0).unwrap().0, 90);
        let err = HOPPER_ONLY.ptx_for_device("A100", 8, 0).unwrap_err();
        assert!(matches!(err, Error::NoPtxForDevice { sm: 80, .. }), "{err}");
        let text = err.to_string();
        assert!(text.contains("built for sm_90") && text.contains("Arch::SM_70"), "{text}");
        assert!(NONE
            .ptx_for_device("A100", 8, 0)
            .unwrap_err()
            .to_string()
            .contains("built for no architecture"));
        let old = HOPPER_ONLY.ptx_for_device("P100", 6, 0).unwrap_err();
        assert!(matches!(old, Error::UnsupportedDevice { .. }), "{old}");
    }
}

/// Emulator-only builds (`--no-default-features`): no GPU backend, a typed error for it,
/// and the emulator fully working.
#[cfg(all(test, not(feature = "cuda")))]
mod without_cuda {
    use crate::{Backend, Device, Error, Gpu};

    #[test]
    fn the_gpu_is_a_typed_error_and_auto_picks_the_emulator() {
        let err = Device::gpu().unwrap_err();
        assert!(matches!(err, Error::NoDevice { .. }), "{err}");
        assert!(err.to_string().contains("without its `cuda` feature"), "{err}");
        assert_eq!(Gpu::count(), 0);
        assert!(Device::gpus().unwrap().is_empty());
        let device = Device::auto().unwrap();
        assert_eq!(device.backend(), Backend::Emulator);
        assert_eq!(device.warp_sums(&[2u32; 33]).unwrap(), vec![64, 2]);
        assert!(crate::ptx::EMBEDDED.is_empty(), "no PTX is built without the GPU backend");
    }
}
