//! Device memory: [`DeviceBuffer`].
//!
//! On the GPU a buffer is a `cuMemAlloc` allocation (256-byte aligned); on the emulator it
//! is a host allocation with the same alignment, since emulated kernels read and write
//! host memory through the addresses they are given. Either way a new buffer is zeroed and
//! [`DeviceBuffer::device_address`] is what a `*const T` / `*mut T` kernel parameter
//! receives.

use std::alloc::Layout;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

use bytemuck::Pod;

use crate::gpu::GpuContext;
use crate::{Device, Error};

/// The alignment of every allocation: what `cudaMalloc` guarantees, so that code moving
/// between backends sees the same alignment (and vector loads of any width are aligned
/// at the start of a buffer).
pub const ALLOCATION_ALIGNMENT: usize = 256;

/// `len` elements of `T` in device memory: [`crate::Device::alloc_zeroed`],
/// [`crate::Device::upload`].
///
/// ```
/// # fn main() -> Result<(), warpsafe_host::Error> {
/// let device = warpsafe_host::Device::emulator();
/// let mut buffer = device.upload(&[1u32, 2, 3])?;
/// assert_eq!(buffer.len(), 3);
/// assert_eq!(buffer.device_address() % 256, 0);
/// buffer.copy_from_host(&[4, 5, 6])?;
/// assert_eq!(buffer.download()?, vec![4, 5, 6]);
/// # Ok(())
/// # }
/// ```
pub struct DeviceBuffer<T> {
    len: usize,
    storage: Storage,
    element: PhantomData<T>,
}

enum Storage {
    /// Nothing allocated: an empty buffer, address 0.
    Empty,
    // Field order is drop order; `Drop for DeviceBuffer` frees the memory first anyway.
    Gpu {
        address: u64,
        bytes: usize,
        context: Arc<GpuContext>,
    },
    Host {
        base: NonNull<u8>,
        layout: Layout,
        /// The emulated device that owns it.
        emulator: u64,
    },
}

// SAFETY: the buffer owns its allocation; shared references only read it (download) or
// give out its address (device_address), whose use in a launch is the launcher's `unsafe`
// promise. GPU allocations are usable from any thread of the process.
unsafe impl<T: Send> Send for DeviceBuffer<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for DeviceBuffer<T> {}

impl<T> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let backend = match self.storage {
            Storage::Empty => "empty",
            Storage::Gpu { .. } => "GPU",
            Storage::Host { .. } => "emulator",
        };
        write!(f, "DeviceBuffer<{}>({backend}, {} elements)", std::any::type_name::<T>(), self.len)
    }
}

/// `len * size_of::<T>()`, or the typed error for a length no allocation can hold.
fn byte_size<T>(len: usize, operation: &'static str) -> Result<usize, Error> {
    let size = std::mem::size_of::<T>().max(1);
    let max = isize::MAX as usize / size;
    if len > max {
        return Err(Error::InputTooLarge { operation, len, max });
    }
    Ok(len * std::mem::size_of::<T>())
}

impl<T: Pod> DeviceBuffer<T> {
    /// Whether this buffer's memory belongs to `device`: allocated in the same GPU
    /// context, or by the same emulated device. An empty buffer belongs to every device.
    /// Kernels of one device must never receive another device's addresses: a GPU
    /// cannot read host memory this way, and the emulator would read a GPU address as a
    /// host pointer.
    pub(crate) fn is_on(&self, device: &Device) -> bool {
        match (&self.storage, device.as_gpu()) {
            (Storage::Empty, _) => true,
            (Storage::Gpu { context, .. }, Some(gpu)) => Arc::ptr_eq(context, gpu.context()),
            (Storage::Host { emulator, .. }, None) => device.emulator_id() == Some(*emulator),
            _ => false,
        }
    }

    /// `len` zeroed elements on the GPU of `context`.
    pub(crate) fn gpu_zeroed(context: &Arc<GpuContext>, len: usize) -> Result<Self, Error> {
        let bytes = byte_size::<T>(len, "alloc_zeroed")?;
        if bytes == 0 {
            return Ok(DeviceBuffer { len, storage: Storage::Empty, element: PhantomData });
        }
        let address = context.alloc_zeroed(bytes)?;
        // From here on, dropping the buffer frees the allocation.
        Ok(DeviceBuffer {
            len,
            storage: Storage::Gpu { address, bytes, context: Arc::clone(context) },
            element: PhantomData,
        })
    }

    /// `len` zeroed elements of host memory for emulated device `emulator`.
    pub(crate) fn host_zeroed(len: usize, emulator: u64) -> Result<Self, Error> {
        let bytes = byte_size::<T>(len, "alloc_zeroed")?;
        if bytes == 0 {
            return Ok(DeviceBuffer { len, storage: Storage::Empty, element: PhantomData });
        }
        let align = ALLOCATION_ALIGNMENT.max(std::mem::align_of::<T>());
        let layout =
            Layout::from_size_align(bytes, align).map_err(|_| Error::Alloc { bytes, source: None })?;
        // SAFETY: the layout has a non-zero size.
        let base = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
            .ok_or(Error::Alloc { bytes, source: None })?;
        Ok(DeviceBuffer { len, storage: Storage::Host { base, layout, emulator }, element: PhantomData })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address a `*const T` / `*mut T` kernel parameter receives: a GPU virtual
    /// address, or on the emulator the host address of the allocation. `0` for a buffer
    /// with no bytes. Pass it by value in the argument array ([`crate::kernel_args!`]).
    pub fn device_address(&self) -> u64 {
        match &self.storage {
            Storage::Empty => 0,
            Storage::Gpu { address, .. } => *address,
            Storage::Host { base, .. } => base.as_ptr() as u64,
        }
    }

    /// Copies the buffer to a new host vector.
    ///
    /// On the GPU the copy waits for the legacy default stream only: after
    /// [`crate::Device::launch_on`], synchronize the stream first.
    ///
    /// # Errors
    /// [`Error::Driver`] when the copy fails (on the GPU also when an earlier kernel
    /// faulted).
    pub fn download(&self) -> Result<Vec<T>, Error> {
        let mut out = vec![T::zeroed(); self.len];
        let dst: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
        match &self.storage {
            Storage::Empty => {}
            Storage::Gpu { address, bytes, context } => {
                debug_assert_eq!(dst.len(), *bytes);
                // SAFETY: `address` holds `bytes` bytes, as many as `dst` has.
                unsafe { context.copy_to_host(*address, dst)? };
            }
            Storage::Host { base, layout, .. } => {
                // SAFETY: the allocation holds `layout.size()` initialised bytes (zeroed at
                // allocation, written since only as `T`s, which are Pod), as many as `dst`.
                dst.copy_from_slice(unsafe { std::slice::from_raw_parts(base.as_ptr(), layout.size()) });
            }
        }
        Ok(out)
    }

    /// Overwrites the whole buffer with `data`.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `data.len() == self.len()`; [`Error::Driver`] when
    /// the copy fails.
    pub fn copy_from_host(&mut self, data: &[T]) -> Result<(), Error> {
        if data.len() != self.len {
            return Err(Error::LengthMismatch {
                operation: "copy_from_host",
                buffer: self.len,
                host: data.len(),
            });
        }
        let src: &[u8] = bytemuck::cast_slice(data);
        match &self.storage {
            Storage::Empty => {}
            Storage::Gpu { address, bytes, context } => {
                debug_assert_eq!(src.len(), *bytes);
                // SAFETY: `address` holds `bytes` bytes, as many as `src` has, and `&mut
                // self` excludes every other access from the host.
                unsafe { context.copy_from_host(*address, src)? };
            }
            Storage::Host { base, layout, .. } => {
                // SAFETY: the allocation holds `layout.size()` == `src.len()` bytes, and
                // `&mut self` excludes every other access from the host.
                unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), base.as_ptr(), layout.size()) };
            }
        }
        Ok(())
    }
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        match &self.storage {
            Storage::Empty => {}
            Storage::Gpu { address, context, .. } => context.free(*address),
            Storage::Host { base, layout, .. } => {
                // SAFETY: allocated with this layout in `host_zeroed`, freed only here.
                unsafe { std::alloc::dealloc(base.as_ptr(), *layout) };
            }
        }
    }
}
