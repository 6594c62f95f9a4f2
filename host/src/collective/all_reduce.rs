//! [`AllReducer`]: element-wise all-reduce of device buffers.

use bytemuck::Pod;
use warpsafe::global::{DisjointSlice, Slice};

use super::communicator::{native, Communicator};
use crate::reduce::Reduction;
use crate::{kernel_args, DeviceBuffer, Error, Function, LaunchConfig, Stream};

/// How an [`AllReducer`] combines: NCCL's operator, or gathered copies folded by a
/// kernel on each local device.
enum Combine<T> {
    Native,
    Gathered {
        /// `fold_copies` on each local device.
        folds: Vec<Function>,
        /// `ranks * len` elements per local rank, grown on demand.
        scratch: Vec<DeviceBuffer<T>>,
    },
}

/// Element-wise all-reduce of device buffers with `O` (the gradient-averaging use):
/// afterwards every rank's buffer holds, at each index, the combination of all ranks'
/// elements there. Built once per communicator, element type and operator; reused for
/// any number of calls and lengths. See the module docs for the two paths and their
/// determinism.
pub struct AllReducer<T: Pod, O: Reduction<T>> {
    comm: Communicator,
    combine: Combine<T>,
    operator: std::marker::PhantomData<fn() -> O>,
}

impl<T: Pod, O: Reduction<T>> std::fmt::Debug for AllReducer<T, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = match self.combine {
            Combine::Native => "NCCL's operator",
            Combine::Gathered { .. } => "all-gather and fold",
        };
        f.debug_struct("AllReducer")
            .field("type", &std::any::type_name::<T>())
            .field("operator", &std::any::type_name::<O>())
            .field("path", &path)
            .field("comm", &self.comm)
            .finish()
    }
}

/// Threads per block of the fold kernel.
const FOLD_THREADS: u32 = 256;

impl<T: Pod, O: Reduction<T> + 'static> AllReducer<T, O> {
    /// An all-reducer over `comm`'s ranks; loads the fold kernel on each local device
    /// when the transport cannot apply `O` itself.
    ///
    /// # Errors
    /// [`Error::KernelNotFound`] or [`Error::ModuleLoad`] when the kernels cannot be
    /// loaded.
    pub fn new(comm: &Communicator) -> Result<Self, Error> {
        let combine = if native::<T, O>().is_some() {
            Combine::Native
        } else {
            let kernels = O::kernels();
            let folds = comm
                .inner
                .local
                .iter()
                .map(|l| l.device.load(&kernels.program)?.untyped_kernel(kernels.fold_copies))
                .collect::<Result<Vec<_>, Error>>()?;
            Combine::Gathered { folds, scratch: Vec::new() }
        };
        Ok(AllReducer { comm: comm.clone(), combine, operator: std::marker::PhantomData })
    }

    /// Whether NCCL (or the emulated clique) applies the operator itself, without the
    /// all-gather and fold.
    pub fn is_native(&self) -> bool {
        matches!(self.combine, Combine::Native)
    }

    /// All-reduces in place: `buffers[i]` is local rank `i`'s. Waits for the result.
    ///
    /// # Errors
    /// [`Error::RankMismatch`] for a buffer count other than the local ranks' or lengths
    /// that differ between ranks (checked across processes with one small all-reduce when
    /// some ranks are remote); [`Error::NotInCommunicator`] for a buffer of another
    /// device; [`Error::CollectiveTimeout`] when other ranks do not take part within the
    /// timeout; [`Error::Nccl`], launch and driver failures.
    pub fn all_reduce(&mut self, buffers: &mut [DeviceBuffer<T>]) -> Result<(), Error> {
        let refs: Vec<&DeviceBuffer<T>> = buffers.iter().collect();
        // SAFETY: the buffers are borrowed exclusively until the call returns.
        unsafe { self.enqueue_and_wait(&refs, &refs) }
    }

    /// All-reduces `send[i]` into `recv[i]` (local rank `i`'s); the sends are unchanged.
    /// Waits for the result.
    ///
    /// # Errors
    /// As for [`AllReducer::all_reduce`], and [`Error::RankMismatch`] when a receive
    /// buffer's length differs from the sends'.
    pub fn all_reduce_into(
        &mut self,
        send: &[DeviceBuffer<T>],
        recv: &mut [DeviceBuffer<T>],
    ) -> Result<(), Error> {
        let sends: Vec<&DeviceBuffer<T>> = send.iter().collect();
        let recvs: Vec<&DeviceBuffer<T>> = recv.iter().collect();
        // SAFETY: the sends are borrowed shared and the receives exclusively (so no buffer
        // is both) until the call returns.
        unsafe { self.enqueue_and_wait(&sends, &recvs) }
    }

    /// Enqueues the all-reduce of `send[i]` into `recv[i]` on `streams[i]` for local rank
    /// `i` and returns without waiting; `send[i]` may be `recv[i]` (in place).
    /// Synchronise the streams before reading the results. Multi-process communicators
    /// first check the length across ranks, which waits for one small all-reduce.
    ///
    /// # Safety
    /// Until the streams have run the operation: the buffers stay alive; nothing else
    /// writes a send or accesses a receive; a receive is no other rank's send. No other
    /// operation of this all-reducer runs on other streams meanwhile (its scratch is
    /// shared).
    ///
    /// # Errors
    /// As for [`AllReducer::all_reduce_into`], and [`Error::NotInCommunicator`] for a
    /// stream of another device.
    pub unsafe fn all_reduce_on(
        &mut self,
        streams: &[&Stream],
        send: &[&DeviceBuffer<T>],
        recv: &[&DeviceBuffer<T>],
    ) -> Result<(), Error> {
        // SAFETY: forwarded from the caller.
        unsafe { self.enqueue(streams, send, recv) }
    }

    /// One all-reduce on the communicator's own streams, waited for (with the timeout).
    ///
    /// # Safety
    /// As for [`AllReducer::all_reduce_on`], until this returns.
    unsafe fn enqueue_and_wait(
        &mut self,
        send: &[&DeviceBuffer<T>],
        recv: &[&DeviceBuffer<T>],
    ) -> Result<(), Error> {
        let comm = self.comm.clone();
        let streams: Vec<&Stream> = comm.inner.local.iter().map(|l| &l.stream).collect();
        // SAFETY: forwarded from the caller; the wait below ends the operation.
        unsafe { self.enqueue(&streams, send, recv)? };
        comm.wait(None, "all-reduce")
    }

    /// The checks and launches of one all-reduce.
    ///
    /// # Safety
    /// As for [`AllReducer::all_reduce_on`].
    unsafe fn enqueue(
        &mut self,
        streams: &[&Stream],
        send: &[&DeviceBuffer<T>],
        recv: &[&DeviceBuffer<T>],
    ) -> Result<(), Error> {
        const OPERATION: &str = "all_reduce";
        let comm = &self.comm;
        comm.check_streams(OPERATION, streams)?;
        let len = comm.check_local(OPERATION, &[send, recv])?;
        if comm.has_remote_ranks() {
            comm.agree_on_length(OPERATION, len)?;
        }
        if len == 0 {
            return Ok(());
        }
        let sends: Vec<u64> = send.iter().map(|b| b.device_address()).collect();
        let recvs: Vec<u64> = recv.iter().map(|b| b.device_address()).collect();
        match &mut self.combine {
            // SAFETY: checked lengths and devices; the rest is the caller's contract.
            Combine::Native => unsafe { comm.all_reduce_raw::<T, O>(&sends, &recvs, len, streams) },
            Combine::Gathered { folds, scratch } => {
                let ranks = comm.ranks();
                let copies = ranks.checked_mul(len).ok_or(Error::InputTooLarge {
                    operation: "all_reduce (gathered copies)",
                    len,
                    max: usize::MAX / ranks,
                })?;
                if scratch.first().is_none_or(|s| s.len() < copies) {
                    // The streams may still be reading the old scratch.
                    streams.iter().try_for_each(|s| s.synchronize())?;
                    *scratch = comm
                        .inner
                        .local
                        .iter()
                        .map(|l| l.device.alloc_zeroed(copies))
                        .collect::<Result<_, _>>()?;
                }
                let gathered: Vec<u64> = scratch.iter().map(DeviceBuffer::device_address).collect();
                let bytes = len * std::mem::size_of::<T>();
                // SAFETY: each scratch holds ranks * len elements of its rank's device; the
                // sends `len` (checked); the rest is the caller's contract.
                unsafe { comm.all_gather_raw(&sends, &gathered, bytes, streams)? };
                for (i, local) in comm.inner.local.iter().enumerate() {
                    let blocks = (len as u64)
                        .div_ceil(FOLD_THREADS as u64)
                        .min(local.device.multiprocessor_count() as u64 * 8)
                        .max(1) as u32;
                    // SAFETY: the scratch holds `copies` elements and is read only by this
                    // launch (ordered after the gather by the stream); the receive holds
                    // `len` and is written only by it (the caller's contract).
                    let (mut copies_view, mut count, mut out) = unsafe {
                        (
                            Slice::from_raw_parts(gathered[i] as *const T, copies),
                            ranks as u32,
                            DisjointSlice::<T>::from_raw_parts(recvs[i] as *mut T, len),
                        )
                    };
                    let args = kernel_args![copies_view, count, out];
                    // SAFETY: fold_copies(copies: Slice<T>, count: u32, out: DisjointSlice<T>)
                    // with the views above, on this rank's stream.
                    unsafe {
                        local.device.launch_raw_on(
                            streams[i],
                            &folds[i],
                            LaunchConfig::linear(blocks, FOLD_THREADS),
                            &args,
                        )?
                    };
                }
                Ok(())
            }
        }
    }
}
