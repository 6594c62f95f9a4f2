//! NCCL called directly, the baseline of every comparison: its own communicators
//! (`ncclCommInitAll`) and streams, with no warpsafe code between the benchmark and NCCL.
//! It resolves its few symbols itself instead of using `warpsafe_host::collective`, so
//! that the baseline does not share the code it is compared with.

use std::ffi::{c_int, c_void};

use anyhow::{bail, Context as _};
use cust::context::{Context, CurrentContext};
use cust::stream::{Stream, StreamFlags};

type Comm = *mut c_void;
type InitAll = unsafe extern "C" fn(*mut Comm, c_int, *const c_int) -> c_int;
type Destroy = unsafe extern "C" fn(Comm) -> c_int;
type Group = unsafe extern "C" fn() -> c_int;
type AllReduce =
    unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, Comm, cust::sys::CUstream) -> c_int;
type AllGather =
    unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, Comm, cust::sys::CUstream) -> c_int;

/// `ncclFloat32`, `ncclUint8`, `ncclSum`.
const FLOAT32: c_int = 7;
const UINT8: c_int = 1;
const SUM: c_int = 0;

/// One NCCL communicator and stream per GPU `0..n`.
pub struct Direct {
    comms: Vec<Comm>,
    // Field order is drop order: streams before the contexts they live in.
    streams: Vec<Stream>,
    contexts: Vec<Context>,
    destroy: Destroy,
    group_start: Group,
    group_end: Group,
    all_reduce: AllReduce,
    all_gather: AllGather,
    _library: libloading::Library,
}

/// `Ok` for `ncclSuccess`.
fn check(result: c_int, what: &str) -> anyhow::Result<()> {
    if result != 0 {
        bail!("{what} returned ncclResult_t {result}");
    }
    Ok(())
}

impl Direct {
    /// Communicators over the first `n` GPUs.
    pub fn new(n: usize) -> anyhow::Result<Direct> {
        // SAFETY: loading NCCL runs only its own initialisers.
        let library = unsafe { libloading::Library::new("libnccl.so.2") }.context("loading libnccl.so.2")?;
        /// A symbol as a plain function pointer.
        fn symbol<F: Copy>(library: &libloading::Library, name: &str) -> anyhow::Result<F> {
            // SAFETY: each `F` is the C signature nccl.h declares for `name`.
            Ok(*unsafe { library.get::<F>(name.as_bytes()) }.with_context(|| format!("resolving {name}"))?)
        }
        let init_all: InitAll = symbol(&library, "ncclCommInitAll")?;
        let contexts = (0..n)
            .map(|i| Ok(Context::new(cust::device::Device::get_device(i as u32)?)?))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let streams = contexts
            .iter()
            .map(|c| {
                CurrentContext::set_current(c)?;
                Ok(Stream::new(StreamFlags::NON_BLOCKING, None)?)
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut comms = vec![std::ptr::null_mut(); n];
        let devices: Vec<c_int> = (0..n as c_int).collect();
        // SAFETY: `comms` has room for n handles, `devices` n ordinals.
        check(unsafe { init_all(comms.as_mut_ptr(), n as c_int, devices.as_ptr()) }, "ncclCommInitAll")?;
        Ok(Direct {
            comms,
            streams,
            contexts,
            destroy: symbol(&library, "ncclCommDestroy")?,
            group_start: symbol(&library, "ncclGroupStart")?,
            group_end: symbol(&library, "ncclGroupEnd")?,
            all_reduce: symbol(&library, "ncclAllReduce")?,
            all_gather: symbol(&library, "ncclAllGather")?,
            _library: library,
        })
    }

    /// Enqueues `call(rank)` for every rank inside one NCCL group.
    fn grouped(&self, mut call: impl FnMut(usize) -> c_int, what: &str) -> anyhow::Result<()> {
        // SAFETY: no arguments.
        check(unsafe { (self.group_start)() }, "ncclGroupStart")?;
        for rank in 0..self.comms.len() {
            check(call(rank), what)?;
        }
        // SAFETY: closes the group above.
        check(unsafe { (self.group_end)() }, "ncclGroupEnd")
    }

    /// Enqueues a sum all-reduce of `count` f32s from `send[r]` into `recv[r]`.
    ///
    /// # Safety
    /// Each address holds `count` f32s on GPU `r`, alive until the streams are synchronised.
    pub unsafe fn all_reduce_f32(&self, send: &[u64], recv: &[u64], count: usize) -> anyhow::Result<()> {
        self.grouped(
            |r| {
                // SAFETY: the caller's contract; comm and stream of GPU r.
                unsafe {
                    (self.all_reduce)(
                        send[r] as *const c_void,
                        recv[r] as *mut c_void,
                        count,
                        FLOAT32,
                        SUM,
                        self.comms[r],
                        self.streams[r].as_inner(),
                    )
                }
            },
            "ncclAllReduce",
        )
    }

    /// Enqueues an all-gather of `bytes` bytes from `send[r]` into `recv[r]`.
    ///
    /// # Safety
    /// `send[r]` holds `bytes` bytes and `recv[r]` `n * bytes` on GPU `r`, alive until the
    /// streams are synchronised.
    pub unsafe fn all_gather(&self, send: &[u64], recv: &[u64], bytes: usize) -> anyhow::Result<()> {
        self.grouped(
            |r| {
                // SAFETY: the caller's contract; comm and stream of GPU r.
                unsafe {
                    (self.all_gather)(
                        send[r] as *const c_void,
                        recv[r] as *mut c_void,
                        bytes,
                        UINT8,
                        self.comms[r],
                        self.streams[r].as_inner(),
                    )
                }
            },
            "ncclAllGather",
        )
    }

    /// Waits for every stream.
    pub fn synchronize(&self) -> anyhow::Result<()> {
        for (context, stream) in self.contexts.iter().zip(&self.streams) {
            CurrentContext::set_current(context)?;
            stream.synchronize()?;
        }
        Ok(())
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        let _ = self.synchronize();
        for &comm in &self.comms {
            // SAFETY: each communicator is destroyed once, after its work finished.
            let _ = unsafe { (self.destroy)(comm) };
        }
    }
}
