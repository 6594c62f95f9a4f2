//! [`Communicator`]: the ranks of a clique, how they join, and the transport calls
//! (NCCL's or the emulated clique's) that the reducers are built from.

use std::any::TypeId;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytemuck::Pod;
use warpsafe::op::{Max, Min, Operator, Sum};

use super::{emulated, nccl};
use crate::{Backend, Device, DeviceBuffer, Error, Stream};

/// How long a communicator waits for other ranks: [`CommunicatorOptions::timeout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommunicatorOptions {
    /// The longest wait for other ranks: to join, and in every waiting operation. 120 s
    /// by default (NCCL's own setup across hosts can take tens of seconds).
    pub timeout: Duration,
}

impl Default for CommunicatorOptions {
    fn default() -> CommunicatorOptions {
        CommunicatorOptions { timeout: Duration::from_secs(120) }
    }
}

/// The identity of a clique that ranks join ([`Communicator::join`]): made once by rank 0
/// and sent to the others as text ([`UniqueId`]'s `Display` and `FromStr`), e.g.
/// `nccl:` followed by 256 hex digits.
#[derive(Clone, PartialEq, Eq)]
pub struct UniqueId {
    backend: Backend,
    bytes: [u8; nccl::UNIQUE_ID_BYTES],
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UniqueId({})", self.backend)
    }
}

/// The text prefixes of the two kinds of id.
const NCCL_PREFIX: &str = "nccl:";
const EMULATOR_PREFIX: &str = "emulator:";

impl UniqueId {
    /// A new id for a clique of `backend` devices: NCCL's (`ncclGetUniqueId`, which also
    /// starts NCCL's bootstrap listener on this host) for GPUs, a random key for emulated
    /// devices (which join within one process).
    ///
    /// # Errors
    /// [`Error::NcclUnavailable`] or [`Error::Nccl`] for GPUs without a usable NCCL.
    pub fn new(backend: Backend) -> Result<UniqueId, Error> {
        let bytes = match backend {
            Backend::Gpu => nccl::library()?.unique_id()?.bytes,
            Backend::Emulator => {
                let mut bytes = [0; nccl::UNIQUE_ID_BYTES];
                bytes[..emulated::KEY_BYTES].copy_from_slice(&emulated::new_key());
                bytes
            }
        };
        Ok(UniqueId { backend, bytes })
    }

    /// Which devices the clique is for.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The emulated clique's key.
    fn key(&self) -> [u8; emulated::KEY_BYTES] {
        let mut key = [0; emulated::KEY_BYTES];
        key.copy_from_slice(&self.bytes[..emulated::KEY_BYTES]);
        key
    }
}

impl std::fmt::Display for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (prefix, bytes) = match self.backend {
            Backend::Gpu => (NCCL_PREFIX, &self.bytes[..]),
            Backend::Emulator => (EMULATOR_PREFIX, &self.bytes[..emulated::KEY_BYTES]),
        };
        f.write_str(prefix)?;
        bytes.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::str::FromStr for UniqueId {
    type Err = Error;

    /// Parses the text [`UniqueId`]'s `Display` writes.
    fn from_str(text: &str) -> Result<UniqueId, Error> {
        let invalid = |why: &str| {
            Error::RankMismatch {
            operation: "parsing a unique id",
            detail: format!("{why}: expected `{NCCL_PREFIX}` and 256 hex digits or `{EMULATOR_PREFIX}` and 32, as UniqueId's Display writes; got {:?}", text.chars().take(48).collect::<String>()),
        }
        };
        let text = text.trim();
        let (backend, hex, len) = if let Some(hex) = text.strip_prefix(NCCL_PREFIX) {
            (Backend::Gpu, hex, nccl::UNIQUE_ID_BYTES)
        } else if let Some(hex) = text.strip_prefix(EMULATOR_PREFIX) {
            (Backend::Emulator, hex, emulated::KEY_BYTES)
        } else {
            return Err(invalid("unknown prefix"));
        };
        if hex.len() != 2 * len || !hex.is_ascii() {
            return Err(invalid("wrong length"));
        }
        let mut bytes = [0; nccl::UNIQUE_ID_BYTES];
        for (i, byte) in bytes[..len].iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| invalid("not hex"))?;
        }
        Ok(UniqueId { backend, bytes })
    }
}

/// A clique of devices that reduce together, one rank per device (see the module docs).
/// A cheap handle: clones share the clique. Operations from several threads take turns.
#[derive(Clone)]
pub struct Communicator {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    // Field order is drop order: the NCCL communicators are finalized while the local
    // ranks' streams and devices still exist.
    transport: Mutex<Transport>,
    /// Ranks in the whole clique.
    ranks: usize,
    /// The ranks this communicator drives, in rank order.
    pub(super) local: Vec<LocalRank>,
    options: CommunicatorOptions,
}

/// One rank that this process drives.
pub(super) struct LocalRank {
    pub(super) rank: usize,
    pub(super) device: Device,
    /// The stream of the waiting forms.
    pub(super) stream: Stream,
}

/// How the ranks exchange data.
enum Transport {
    /// One NCCL communicator per local rank.
    Nccl(Vec<nccl::Comm>),
    /// The in-process clique, and the number of this communicator's next operation.
    Emulated { clique: Arc<emulated::Clique>, round: u64 },
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let local: Vec<String> =
            self.inner.local.iter().map(|l| format!("rank {}: {}", l.rank, l.device.name())).collect();
        f.debug_struct("Communicator").field("ranks", &self.inner.ranks).field("local", &local).finish()
    }
}

impl Communicator {
    /// A communicator with every rank in this process: rank `r` on `devices[r]`, all GPUs
    /// (through NCCL) or all emulated devices. Default options.
    ///
    /// # Errors
    /// As for [`Communicator::with_options`].
    pub fn new(devices: &[Device]) -> Result<Communicator, Error> {
        Communicator::with_options(devices, CommunicatorOptions::default())
    }

    /// [`Communicator::new`] with `options`.
    ///
    /// # Errors
    /// [`Error::RankMismatch`] for no devices, GPUs mixed with emulated devices, or one
    /// GPU given twice (NCCL needs a device per rank); [`Error::NcclUnavailable`] for GPUs
    /// without NCCL; [`Error::Nccl`] when NCCL fails to set up;
    /// [`Error::CollectiveTimeout`] when the setup does not finish within the timeout.
    pub fn with_options(devices: &[Device], options: CommunicatorOptions) -> Result<Communicator, Error> {
        let Some(first) = devices.first() else {
            return Err(Error::RankMismatch { operation: "Communicator::new", detail: "no devices".into() });
        };
        let backend = first.backend();
        if devices.iter().any(|d| d.backend() != backend) {
            return Err(Error::RankMismatch {
                operation: "Communicator::new",
                detail: "GPUs and emulated devices cannot share a communicator".into(),
            });
        }
        let local = devices
            .iter()
            .enumerate()
            .map(|(rank, device)| Ok(LocalRank { rank, device: device.clone(), stream: device.stream()? }))
            .collect::<Result<Vec<_>, Error>>()?;
        let ranks = devices.len();
        let transport = match backend {
            Backend::Emulator => Transport::Emulated { clique: emulated::Clique::local(ranks), round: 0 },
            Backend::Gpu => {
                let ordinals: Vec<u32> =
                    devices.iter().filter_map(|d| d.as_gpu().map(|g| g.ordinal())).collect();
                for (i, ordinal) in ordinals.iter().enumerate() {
                    if ordinals[..i].contains(ordinal) {
                        return Err(Error::RankMismatch {
                            operation: "Communicator::new",
                            detail: format!("GPU {ordinal} is given twice; NCCL needs one device per rank"),
                        });
                    }
                }
                let nccl = nccl::library()?;
                let id = nccl.unique_id()?;
                let joining: Vec<(usize, &Device)> = local.iter().map(|l| (l.rank, &l.device)).collect();
                Transport::Nccl(connect(nccl, &id, &joining, ranks, options.timeout)?)
            }
        };
        Ok(Communicator {
            inner: Arc::new(Inner { ranks, local, transport: Mutex::new(transport), options }),
        })
    }

    /// Joins the clique of `id` as rank `rank` of `ranks`, on `device`: one rank of a
    /// clique whose other ranks join from other processes (GPUs) or threads (emulated
    /// devices). Waits until every rank has joined or the timeout has passed.
    ///
    /// # Errors
    /// [`Error::RankMismatch`] for a rank outside `0..ranks`, an id of the other backend,
    /// or (emulated) a rank that joined twice or a different rank count;
    /// [`Error::CollectiveTimeout`] when some rank does not join in time (the message
    /// names which, on the emulator); [`Error::NcclUnavailable`], [`Error::Nccl`].
    pub fn join(
        device: &Device,
        id: &UniqueId,
        rank: usize,
        ranks: usize,
        options: CommunicatorOptions,
    ) -> Result<Communicator, Error> {
        if rank >= ranks {
            return Err(Error::RankMismatch {
                operation: "Communicator::join",
                detail: format!("rank {rank} of {ranks}: ranks are 0 to {}", ranks.saturating_sub(1)),
            });
        }
        if id.backend != device.backend() {
            return Err(Error::RankMismatch {
                operation: "Communicator::join",
                detail: format!("an id for {} devices used to join on {}", id.backend, device.name()),
            });
        }
        let deadline = Instant::now() + options.timeout;
        let transport = match device.backend() {
            Backend::Emulator => Transport::Emulated {
                clique: emulated::Clique::join(id.key(), rank, ranks, deadline, options.timeout)?,
                round: 0,
            },
            Backend::Gpu => {
                let raw = nccl::RawUniqueId { bytes: id.bytes };
                Transport::Nccl(connect(nccl::library()?, &raw, &[(rank, device)], ranks, options.timeout)?)
            }
        };
        let local = vec![LocalRank { rank, device: device.clone(), stream: device.stream()? }];
        Ok(Communicator {
            inner: Arc::new(Inner { ranks, local, transport: Mutex::new(transport), options }),
        })
    }

    /// Ranks in the whole clique.
    pub fn ranks(&self) -> usize {
        self.inner.ranks
    }

    /// The ranks this communicator drives and their devices, in rank order.
    pub fn local_ranks(&self) -> impl Iterator<Item = (usize, &Device)> {
        self.inner.local.iter().map(|l| (l.rank, &l.device))
    }

    /// The options.
    pub fn options(&self) -> CommunicatorOptions {
        self.inner.options
    }

    /// Whether some ranks live in other processes (or, emulated, other communicators):
    /// then what one rank knows (its buffer's length) must be exchanged to be checked.
    pub(super) fn has_remote_ranks(&self) -> bool {
        self.inner.local.len() < self.inner.ranks
    }

    fn transport(&self) -> MutexGuard<'_, Transport> {
        self.inner.transport.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits for the local ranks' streams (the ones given, or the communicator's own)
    /// until the deadline; at the deadline the communicator is aborted.
    pub(super) fn wait(&self, streams: Option<&[&Stream]>, during: &str) -> Result<(), Error> {
        let deadline = Instant::now() + self.inner.options.timeout;
        for (i, local) in self.inner.local.iter().enumerate() {
            let stream = streams.map_or(&local.stream, |s| s[i]);
            if !stream.wait_until(deadline)? {
                if let Transport::Nccl(comms) = &mut *self.transport() {
                    comms.iter_mut().for_each(nccl::Comm::abort);
                }
                return Err(Error::CollectiveTimeout {
                    during: format!("{during}: rank {} waited for the other ranks", local.rank),
                    waited: self.inner.options.timeout,
                });
            }
        }
        Ok(())
    }

    /// Checks that `list` has one `noun` ("buffer", "shard") per local rank, each memory
    /// of its rank's device.
    pub(super) fn check_placement<T: Pod>(
        &self,
        operation: &'static str,
        noun: &str,
        list: &[&DeviceBuffer<T>],
    ) -> Result<(), Error> {
        let local = &self.inner.local;
        if list.len() != local.len() {
            return Err(Error::RankMismatch {
                operation,
                detail: format!("{} {noun}s for the {} ranks of this process", list.len(), local.len()),
            });
        }
        for (buffer, rank) in list.iter().zip(local) {
            if !buffer.is_on(&rank.device) {
                return Err(Error::NotInCommunicator {
                    operation,
                    detail: format!(
                        "the {noun} for rank {} is not memory of that rank's device ({})",
                        rank.rank,
                        rank.device.name()
                    ),
                });
            }
        }
        Ok(())
    }

    /// Checks every list as [`Communicator::check_placement`] does, and that all their
    /// buffers have the first one's length, which it returns.
    pub(super) fn check_local<T: Pod>(
        &self,
        operation: &'static str,
        lists: &[&[&DeviceBuffer<T>]],
    ) -> Result<usize, Error> {
        for list in lists {
            self.check_placement(operation, "buffer", list)?;
        }
        let len = lists.first().and_then(|l| l.first()).map_or(0, |b| b.len());
        for list in lists {
            if list.iter().any(|b| b.len() != len) {
                let lengths: Vec<String> = self
                    .inner
                    .local
                    .iter()
                    .zip(*list)
                    .map(|(r, b)| format!("rank {}: {}", r.rank, b.len()))
                    .collect();
                return Err(Error::RankMismatch {
                    operation,
                    detail: format!(
                        "buffers of different lengths ({}, first list {len}); every rank must pass the same length",
                        lengths.join(", ")
                    ),
                });
            }
        }
        Ok(len)
    }

    /// Checks that the streams belong to the local ranks' devices.
    pub(super) fn check_streams(&self, operation: &'static str, streams: &[&Stream]) -> Result<(), Error> {
        if streams.len() != self.inner.local.len() {
            return Err(Error::RankMismatch {
                operation,
                detail: format!(
                    "{} streams for the {} ranks of this process",
                    streams.len(),
                    self.inner.local.len()
                ),
            });
        }
        for (stream, rank) in streams.iter().zip(&self.inner.local) {
            if !stream.is_on(&rank.device) {
                return Err(Error::NotInCommunicator {
                    operation,
                    detail: format!(
                        "the stream for rank {} is not a stream of {}",
                        rank.rank,
                        rank.device.name()
                    ),
                });
            }
        }
        Ok(())
    }

    /// Across all ranks, checks that every rank passed `len` (one small all-reduce of
    /// `[len, !len]` with `Max`, which yields the largest and the complement of the
    /// smallest); waits for it.
    pub(super) fn agree_on_length(&self, operation: &'static str, len: usize) -> Result<(), Error> {
        let words = [len as u64, !(len as u64)];
        let buffers =
            self.inner.local.iter().map(|l| l.device.upload(&words)).collect::<Result<Vec<_>, Error>>()?;
        let addresses: Vec<u64> = buffers.iter().map(DeviceBuffer::device_address).collect();
        let streams: Vec<&Stream> = self.inner.local.iter().map(|l| &l.stream).collect();
        // SAFETY: each buffer holds 2 u64 of its rank's device and lives until the wait.
        unsafe { self.all_reduce_raw::<u64, Max>(&addresses, &addresses, 2, &streams)? };
        self.wait(None, operation)?;
        let agreed = buffers[0].download()?;
        let (largest, smallest) = (agreed[0], !agreed[1]);
        if largest != smallest {
            return Err(Error::RankMismatch {
                operation,
                detail: format!(
                    "the ranks' buffers differ in length (from {smallest} to {largest} elements; this process has {len}); every rank must pass the same length"
                ),
            });
        }
        Ok(())
    }

    /// Enqueues an all-reduce with `O` of `count` elements from `sends[i]` into
    /// `recvs[i]` on `streams[i]` for local rank `i`: NCCL's own operator when it has
    /// `O` over `T` (the caller checked), or the emulated clique's fold.
    ///
    /// # Safety
    /// The addresses hold `count` elements of `T` on their rank's device (a send may
    /// equal its receive) and stay valid and unaccessed by others until the streams have
    /// run the operation.
    pub(super) unsafe fn all_reduce_raw<T: Pod, O: Operator<T> + Default + 'static>(
        &self,
        sends: &[u64],
        recvs: &[u64],
        count: usize,
        streams: &[&Stream],
    ) -> Result<(), Error> {
        match &mut *self.transport() {
            Transport::Nccl(comms) => {
                let Some((op, data_type)) = native::<T, O>() else {
                    return Err(Error::unsupported("an all-reduce NCCL cannot apply"));
                };
                self.each_in_group(comms, streams, "ncclAllReduce", |comm, i, stream| {
                    // SAFETY: forwarded from the caller.
                    unsafe { comm.all_reduce(sends[i], recvs[i], count, data_type, op, stream) }
                })
            }
            Transport::Emulated { clique, round } => {
                let bytes = count * std::mem::size_of::<T>();
                // SAFETY: forwarded from the caller: host memory of emulated buffers.
                let parts = unsafe { self.exchange(clique, round, sends, bytes, "all-reduce")? };
                let op = O::default();
                let mut folded = vec![op.identity(); count];
                for part in &parts {
                    let values: Vec<T> = part
                        .chunks_exact(std::mem::size_of::<T>().max(1))
                        .map(bytemuck::pod_read_unaligned)
                        .collect();
                    for (acc, value) in folded.iter_mut().zip(values) {
                        *acc = op.combine(*acc, value);
                    }
                }
                for &recv in recvs {
                    // SAFETY: forwarded from the caller.
                    unsafe { write_host(recv, bytemuck::cast_slice(&folded)) };
                }
                Ok(())
            }
        }
    }

    /// Enqueues an all-gather of `bytes` bytes from `sends[i]` into `recvs[i]` (rank r's
    /// bytes at offset `r * bytes`) on `streams[i]` for local rank `i`.
    ///
    /// # Safety
    /// Each send holds `bytes` bytes and each receive `ranks * bytes`, on their rank's
    /// device, valid and unaccessed by others until the streams have run the operation.
    pub(super) unsafe fn all_gather_raw(
        &self,
        sends: &[u64],
        recvs: &[u64],
        bytes: usize,
        streams: &[&Stream],
    ) -> Result<(), Error> {
        match &mut *self.transport() {
            Transport::Nccl(comms) => {
                self.each_in_group(comms, streams, "ncclAllGather", |comm, i, stream| {
                    // SAFETY: forwarded from the caller.
                    unsafe { comm.all_gather(sends[i], recvs[i], bytes, stream) }
                })
            }
            Transport::Emulated { clique, round } => {
                // SAFETY: forwarded from the caller.
                let parts = unsafe { self.exchange(clique, round, sends, bytes, "all-gather")? };
                let gathered = parts.concat();
                for &recv in recvs {
                    // SAFETY: forwarded from the caller.
                    unsafe { write_host(recv, &gathered) };
                }
                Ok(())
            }
        }
    }

    /// Calls `enqueue(comm, i, stream)` for every local rank `i` inside one NCCL group,
    /// then settles the communicators. (NCCL switches devices itself inside a group: no
    /// context switch here, which would cost every call.)
    fn each_in_group(
        &self,
        comms: &mut [nccl::Comm],
        streams: &[&Stream],
        during: &str,
        mut enqueue: impl FnMut(&mut nccl::Comm, usize, crate::gpu::RawStream) -> Result<(), Error>,
    ) -> Result<(), Error> {
        nccl::library()?.group(|| {
            for (i, comm) in comms.iter_mut().enumerate() {
                enqueue(comm, i, streams[i].gpu_stream_of(&self.inner.local[i].device)?)?;
            }
            Ok(())
        })?;
        self.settle(comms, during)
    }

    /// Settles every local NCCL communicator after an enqueueing call.
    fn settle(&self, comms: &mut [nccl::Comm], during: &str) -> Result<(), Error> {
        let deadline = Instant::now() + self.inner.options.timeout;
        comms.iter_mut().try_for_each(|comm| comm.settle(deadline, during, self.inner.options.timeout))
    }

    /// The emulated exchange of one operation: deposits each local rank's `bytes` bytes
    /// from its send address and collects every rank's, in rank order.
    ///
    /// # Safety
    /// Each send address is host memory (an emulated buffer) holding `bytes` bytes.
    unsafe fn exchange(
        &self,
        clique: &emulated::Clique,
        round: &mut u64,
        sends: &[u64],
        bytes: usize,
        during: &str,
    ) -> Result<Vec<Vec<u8>>, Error> {
        let this = *round;
        *round += 1;
        for (local, &send) in self.inner.local.iter().zip(sends) {
            // SAFETY: forwarded from the caller.
            clique.deposit(this, local.rank, unsafe { read_host(send, bytes) });
        }
        let deadline = Instant::now() + self.inner.options.timeout;
        let mut parts = None;
        for local in &self.inner.local {
            parts = Some(clique.collect(this, local.rank, deadline, during, self.inner.options.timeout)?);
        }
        debug_assert_eq!(clique.ranks(), self.inner.ranks);
        Ok(parts.unwrap_or_default())
    }
}

/// Joins this process's ranks (`(rank, device)`) to the NCCL clique of `id` with `ranks`
/// ranks in all, within `timeout`: non-blocking joins (so a missing rank is a timeout and
/// an abort, not a hang), then a split into blocking communicators of the same ranks for
/// the operations (see `nccl`'s module docs for why).
fn connect(
    nccl: &'static nccl::Nccl,
    id: &nccl::RawUniqueId,
    joining: &[(usize, &Device)],
    ranks: usize,
    timeout: Duration,
) -> Result<Vec<nccl::Comm>, Error> {
    let deadline = Instant::now() + timeout;
    let mut joined = Vec::with_capacity(joining.len());
    nccl.group(|| {
        for &(rank, device) in joining {
            device.make_current()?;
            joined.push(nccl::Comm::start(nccl, id, rank, ranks)?);
        }
        Ok(())
    })?;
    let missing = |rank: usize| {
        if joining.len() == ranks {
            format!("setting up NCCL for {ranks} GPUs")
        } else {
            format!("waiting for all {ranks} ranks to join (this is rank {rank})")
        }
    };
    for (comm, &(rank, _)) in joined.iter_mut().zip(joining) {
        comm.settle(deadline, &missing(rank), timeout)?;
    }
    let mut blocking = Vec::with_capacity(joining.len());
    nccl.group(|| {
        for (comm, &(rank, device)) in joined.iter_mut().zip(joining) {
            device.make_current()?;
            blocking.push(comm.split_blocking(rank)?);
        }
        Ok(())
    })?;
    for (comm, &(rank, _)) in blocking.iter_mut().zip(joining).chain(joined.iter_mut().zip(joining)) {
        comm.settle(deadline, &format!("splitting rank {rank}'s communicator (ncclCommSplit)"), timeout)?;
    }
    Ok(blocking)
}

/// `bytes` bytes of host memory at `address` (0 bytes: nothing is read).
///
/// # Safety
/// `address` is readable host memory of `bytes` bytes when `bytes` is not 0.
unsafe fn read_host(address: u64, bytes: usize) -> Vec<u8> {
    if bytes == 0 {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(address as *const u8, bytes) }.to_vec()
}

/// Writes `data` to host memory at `address`.
///
/// # Safety
/// `address` is writable host memory of `data.len()` bytes, accessed by no one else now.
unsafe fn write_host(address: u64, data: &[u8]) {
    if !data.is_empty() {
        // SAFETY: the caller's contract; `data` is a separate allocation.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), address as *mut u8, data.len()) };
    }
}

/// NCCL's operator and element type for `O` over `T`, when NCCL has them.
pub(super) fn native<T: 'static, O: 'static>() -> Option<(nccl::RedOp, nccl::DataType)> {
    use nccl::DataType as D;
    let t = TypeId::of::<T>();
    let data_type = [
        (TypeId::of::<i32>(), D::Int32),
        (TypeId::of::<u32>(), D::Uint32),
        (TypeId::of::<i64>(), D::Int64),
        (TypeId::of::<u64>(), D::Uint64),
        (TypeId::of::<f32>(), D::Float32),
        (TypeId::of::<f64>(), D::Float64),
    ]
    .into_iter()
    .find_map(|(id, d)| (id == t).then_some(d))?;
    let o = TypeId::of::<O>();
    let op = [
        (TypeId::of::<Sum>(), nccl::RedOp::Sum),
        (TypeId::of::<Min>(), nccl::RedOp::Min),
        (TypeId::of::<Max>(), nccl::RedOp::Max),
    ]
    .into_iter()
    .find_map(|(id, op)| (id == o).then_some(op))?;
    Some((op, data_type))
}
