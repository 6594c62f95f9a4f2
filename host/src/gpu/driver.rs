//! The CUDA driver calls that `cust` 0.3.2 does not wrap (launching through a raw
//! function handle, cooperative launches, occupancy, raw allocations), and the mapping of
//! their status codes onto `cust`'s [`CudaError`].

use cust::error::CudaError;
use cust::sys::{self as cuda, CUresult};

/// Every driver status `cust` names, for [`check`]'s lookup by code.
#[rustfmt::skip]
const KNOWN: &[CudaError] = {
    use CudaError::*;
    &[
        InvalidValue, OutOfMemory, NotInitialized, Deinitialized, ProfilerDisabled,
        ProfilerNotInitialized, ProfilerAlreadyStarted, ProfilerAlreadyStopped, NoDevice,
        InvalidDevice, InvalidImage, InvalidContext, ContextAlreadyCurrent, MapFailed,
        UnmapFailed, ArrayIsMapped, AlreadyMapped, NoBinaryForGpu, AlreadyAcquired, NotMapped,
        NotMappedAsArray, NotMappedAsPointer, EccUncorrectable, UnsupportedLimit,
        ContextAlreadyInUse, PeerAccessUnsupported, InvalidPtx, InvalidGraphicsContext,
        NvlinkUncorrectable, InvalidSource, FileNotFound, SharedObjectSymbolNotFound,
        SharedObjectInitFailed, OperatingSystemError, InvalidHandle, NotFound, NotReady,
        IllegalAddress, LaunchOutOfResources, LaunchTimeout, LaunchIncompatibleTexturing,
        PeerAccessAlreadyEnabled, PeerAccessNotEnabled, PrimaryContextActive, ContextIsDestroyed,
        AssertError, TooManyPeers, HostMemoryAlreadyRegistered, HostMemoryNotRegistered,
        HardwareStackError, IllegalInstruction, MisalignedAddress, InvalidAddressSpace,
        InvalidProgramCounter, LaunchFailed, NotPermitted, NotSupported, UnknownError,
    ]
};

/// `Ok` for `CUDA_SUCCESS`, else the matching [`CudaError`] (`cust`'s discriminants are the
/// driver's codes); a code `cust` does not name becomes [`CudaError::UnknownError`].
pub(crate) fn check(status: CUresult) -> Result<(), CudaError> {
    let code = status as u32;
    if code == 0 {
        return Ok(());
    }
    Err(KNOWN.iter().copied().find(|e| *e as u32 == code).unwrap_or(CudaError::UnknownError))
}

/// Grid and block shape and dynamic shared memory of one raw launch.
pub(crate) struct RawLaunch {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_mem_bytes: u32,
}

/// Enqueues `function` on `stream`, cooperatively (`cuLaunchCooperativeKernel`: the whole
/// grid is resident at once, so grid-wide barriers work) or not (`cuLaunchKernel`).
///
/// # Safety
/// The function's context is current; `args` has one pointer per kernel parameter, each
/// pointing at a value of the parameter's type, and every device pointer among those
/// values is valid for what the kernel does with it until the launch completes.
pub(crate) unsafe fn launch(
    function: cuda::CUfunction,
    stream: cuda::CUstream,
    shape: &RawLaunch,
    args: &[*mut core::ffi::c_void],
    cooperative: bool,
) -> Result<(), CudaError> {
    let (g, b) = (shape.grid, shape.block);
    // The driver reads the parameter array and copies every value before returning; it
    // never writes through it, so the cast from a shared slice is sound.
    let params = args.as_ptr() as *mut *mut core::ffi::c_void;
    // SAFETY: forwarded from the caller; the shape is passed by value.
    let status = unsafe {
        if cooperative {
            cuda::cuLaunchCooperativeKernel(
                function,
                g.0,
                g.1,
                g.2,
                b.0,
                b.1,
                b.2,
                shape.shared_mem_bytes,
                stream,
                params,
            )
        } else {
            cuda::cuLaunchKernel(
                function,
                g.0,
                g.1,
                g.2,
                b.0,
                b.1,
                b.2,
                shape.shared_mem_bytes,
                stream,
                params,
                core::ptr::null_mut(),
            )
        }
    };
    check(status)
}

/// Dynamic shared memory every launch may ask for without its kernel opting in to more
/// (48 KiB on every GPU since sm_70; the driver refuses a launch over it otherwise).
pub(crate) const SHARED_WITHOUT_OPT_IN: u32 = 48 * 1024;

/// `cuFuncGetAttribute`: one attribute of `function`.
///
/// # Safety
/// The function's context is current.
pub(crate) unsafe fn function_attribute(
    function: cuda::CUfunction,
    attribute: cuda::CUfunction_attribute,
) -> Result<u32, CudaError> {
    let mut value = 0;
    // SAFETY: `value` is a valid out-pointer; the function handle is live (caller).
    check(unsafe { cuda::cuFuncGetAttribute(&mut value, attribute, function) })?;
    Ok(value.max(0) as u32)
}

/// `cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)`: launches of `function` may ask
/// for up to `bytes` of dynamic shared memory (the driver refuses more than the device's
/// opt-in limit less the function's static shared memory).
///
/// # Safety
/// The function's context is current.
pub(crate) unsafe fn set_max_dynamic_shared(function: cuda::CUfunction, bytes: u32) -> Result<(), CudaError> {
    let bytes = i32::try_from(bytes).map_err(|_| CudaError::InvalidValue)?;
    // SAFETY: the function handle is live (caller); the attribute takes a byte count.
    check(unsafe {
        cuda::cuFuncSetAttribute(
            function,
            cuda::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            bytes,
        )
    })
}

/// `cuOccupancyMaxActiveBlocksPerMultiprocessor`: how many blocks of `block_threads`
/// threads and `dynamic_shared_bytes` of dynamic shared memory one SM holds at once.
///
/// # Safety
/// The function's context is current.
pub(crate) unsafe fn max_active_blocks(
    function: cuda::CUfunction,
    block_threads: u32,
    dynamic_shared_bytes: u32,
) -> Result<u32, CudaError> {
    let threads = i32::try_from(block_threads).map_err(|_| CudaError::InvalidValue)?;
    let mut blocks = 0;
    // SAFETY: `blocks` is a valid out-pointer; the function handle is live (caller).
    check(unsafe {
        cuda::cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &mut blocks,
            function,
            threads,
            dynamic_shared_bytes as usize,
        )
    })?;
    Ok(blocks.max(0) as u32)
}

/// A device attribute, read with `cuDeviceGetAttribute`.
pub(crate) fn device_attribute(
    device: cuda::CUdevice,
    attribute: cuda::CUdevice_attribute,
) -> Result<i32, CudaError> {
    let mut value = 0;
    // SAFETY: `value` is a valid out-pointer; an invalid device is reported as an error.
    check(unsafe { cuda::cuDeviceGetAttribute(&mut value, attribute, device) })?;
    Ok(value)
}
