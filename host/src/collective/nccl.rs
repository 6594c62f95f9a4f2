//! NCCL, loaded at run time: the few entry points warpsafe calls, and a communicator
//! handle that waits with a deadline instead of hanging.
//!
//! Why our own bindings: warpsafe needs a dozen functions of `libnccl.so.2` and must keep
//! working where NCCL is absent (a typed error, not a failed link or a panic). The
//! well-kept binding crates link NCCL at build time or panic when the library is missing,
//! and bring their own driver wrappers beside `cust`; a table of symbols resolved with
//! `libloading` is smaller than either. The library is the system's `libnccl.so.2` (as
//! the dynamic linker finds it), or the file `$WARPSAFE_NCCL_LIBRARY` names.
//!
//! Joining is NON-BLOCKING (`ncclConfig_t::blocking = 0`): NCCL returns `ncclInProgress`
//! instead of blocking inside `ncclCommInitRankConfig`, and [`Comm::settle`] polls
//! `ncclCommGetAsyncError` until the call completes or the deadline passes, so a rank that
//! never joins becomes [`Error::CollectiveTimeout`], after which the communicator is
//! aborted (`ncclCommAbort`). Once every rank has joined, [`Comm::into_blocking`] splits
//! it (`ncclCommSplit`, all ranks in one color) into a BLOCKING communicator of the same
//! ranks for the operations: on a non-blocking communicator every `ncclGroupEnd` starts a
//! thread (`pthread_create`) to launch the group, which measured 45 µs more per
//! all-reduce than NCCL's blocking call on two H200s. A blocking operation returns once
//! it is enqueued; waiting for it is the caller's stream wait, which has its own deadline
//! and aborts the communicator when it passes.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::gpu::RawStream;

use crate::Error;

/// The environment variable that names the NCCL library to load instead of
/// `libnccl.so.2`.
pub const LIBRARY_VARIABLE: &str = "WARPSAFE_NCCL_LIBRARY";

/// `ncclResult_t`.
type NcclResult = c_int;
const SUCCESS: NcclResult = 0;
const IN_PROGRESS: NcclResult = 7;

/// `ncclComm_t`.
type RawComm = *mut c_void;

/// `ncclUniqueId`: 128 opaque bytes, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct RawUniqueId {
    pub(crate) bytes: [u8; UNIQUE_ID_BYTES],
}

/// `NCCL_UNIQUE_ID_BYTES`.
pub(crate) const UNIQUE_ID_BYTES: usize = 128;

/// The prefix of `ncclConfig_t` as NCCL 2.17 defined it. The struct is versioned and
/// append-only: NCCL reads `size` bytes of it and leaves the fields it did not receive
/// at their defaults, so this prefix is valid for every NCCL from 2.17 on (warpsafe
/// needs 2.18, for `ncclCommSplit`).
#[repr(C)]
struct Config {
    size: usize,
    magic: u32,
    version: u32,
    blocking: c_int,
    cga_cluster_size: c_int,
    min_ctas: c_int,
    max_ctas: c_int,
    net_name: *const c_char,
    split_share: c_int,
}

/// `NCCL_API_MAGIC`.
const CONFIG_MAGIC: u32 = 0xcafe_beef;
/// `NCCL_VERSION(2, 17, 0)`: the layout of [`Config`].
const CONFIG_VERSION: u32 = 2_17_00;
/// `NCCL_CONFIG_UNDEF_INT`.
const UNDEFINED: c_int = c_int::MIN;

impl Config {
    /// NCCL's defaults, with `blocking` set.
    fn with_blocking(blocking: bool) -> Config {
        Config {
            size: std::mem::size_of::<Config>(),
            magic: CONFIG_MAGIC,
            version: CONFIG_VERSION,
            blocking: c_int::from(blocking),
            cga_cluster_size: UNDEFINED,
            min_ctas: UNDEFINED,
            max_ctas: UNDEFINED,
            net_name: std::ptr::null(),
            split_share: UNDEFINED,
        }
    }
}

/// `ncclRedOp_t` of the operators NCCL applies itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum RedOp {
    Sum = 0,
    Max = 2,
    Min = 3,
}

/// `ncclDataType_t` of the element types NCCL reduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum DataType {
    Uint8 = 1,
    Int32 = 2,
    Uint32 = 3,
    Int64 = 4,
    Uint64 = 5,
    Float32 = 7,
    Float64 = 8,
}

type GetVersion = unsafe extern "C" fn(*mut c_int) -> NcclResult;
type GetUniqueId = unsafe extern "C" fn(*mut RawUniqueId) -> NcclResult;
type CommInitRankConfig =
    unsafe extern "C" fn(*mut RawComm, c_int, RawUniqueId, c_int, *mut Config) -> NcclResult;
type CommGetAsyncError = unsafe extern "C" fn(RawComm, *mut NcclResult) -> NcclResult;
type CommSplit = unsafe extern "C" fn(RawComm, c_int, c_int, *mut RawComm, *mut Config) -> NcclResult;
type CommOp = unsafe extern "C" fn(RawComm) -> NcclResult;
type GroupOp = unsafe extern "C" fn() -> NcclResult;
type AllReduce = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    DataType,
    RedOp,
    RawComm,
    RawStream,
) -> NcclResult;
type AllGather =
    unsafe extern "C" fn(*const c_void, *mut c_void, usize, DataType, RawComm, RawStream) -> NcclResult;
type GetErrorString = unsafe extern "C" fn(NcclResult) -> *const c_char;
type GetLastError = unsafe extern "C" fn(RawComm) -> *const c_char;

/// The loaded library and its entry points (valid while `_library` lives, which is for
/// the rest of the process: the table is a `static`).
pub(crate) struct Nccl {
    version: (u32, u32, u32),
    get_unique_id: GetUniqueId,
    comm_init_rank_config: CommInitRankConfig,
    comm_get_async_error: CommGetAsyncError,
    comm_split: CommSplit,
    comm_finalize: CommOp,
    comm_destroy: CommOp,
    comm_abort: CommOp,
    group_start: GroupOp,
    group_end: GroupOp,
    all_reduce: AllReduce,
    all_gather: AllGather,
    get_error_string: GetErrorString,
    get_last_error: GetLastError,
    _library: libloading::Library,
}

/// The library name tried when `$WARPSAFE_NCCL_LIBRARY` is not set.
const DEFAULT_LIBRARY: &str = "libnccl.so.2";

/// The process's NCCL, loaded on first use; the error says what was tried.
pub(crate) fn library() -> Result<&'static Nccl, Error> {
    static NCCL: OnceLock<Result<Nccl, String>> = OnceLock::new();
    NCCL.get_or_init(|| {
        let path = std::env::var(LIBRARY_VARIABLE).unwrap_or_else(|_| DEFAULT_LIBRARY.to_string());
        Nccl::load(&path)
    })
    .as_ref()
    .map_err(|reason| Error::NcclUnavailable { reason: reason.clone() })
}

impl Nccl {
    fn load(path: &str) -> Result<Nccl, String> {
        // SAFETY: loading NCCL runs its initialisers, which only set up its own state.
        let library = unsafe { libloading::Library::new(path) }.map_err(|e| {
            format!(
                "loading {path} failed ({e}); install NCCL (it comes with the CUDA deep-learning \
                 images and `pip install nvidia-nccl-cu12`) or point ${LIBRARY_VARIABLE} at libnccl.so.2"
            )
        })?;
        /// One symbol, copied out of the library as a plain function pointer.
        fn symbol<F: Copy>(library: &libloading::Library, path: &str, name: &str) -> Result<F, String> {
            // SAFETY: each `F` below is the C signature nccl.h declares for `name`.
            unsafe { library.get::<F>(name.as_bytes()) }
                .map(|s| *s)
                .map_err(|e| format!("{path} has no {name} ({e}): it is not NCCL 2.18 or newer"))
        }
        let get_version: GetVersion = symbol(&library, path, "ncclGetVersion")?;
        let mut code = 0;
        // SAFETY: `code` is a valid out-pointer.
        if unsafe { get_version(&mut code) } != SUCCESS {
            return Err(format!("{path}: ncclGetVersion failed"));
        }
        let code = code as u32;
        let version = (code / 10000, code / 100 % 100, code % 100);
        if version < (2, 18, 0) {
            return Err(format!(
                "{path} is NCCL {}.{}.{}; warpsafe needs 2.18 or newer (non-blocking joins, ncclCommSplit)",
                version.0, version.1, version.2
            ));
        }
        Ok(Nccl {
            version,
            get_unique_id: symbol(&library, path, "ncclGetUniqueId")?,
            comm_init_rank_config: symbol(&library, path, "ncclCommInitRankConfig")?,
            comm_get_async_error: symbol(&library, path, "ncclCommGetAsyncError")?,
            comm_split: symbol(&library, path, "ncclCommSplit")?,
            comm_finalize: symbol(&library, path, "ncclCommFinalize")?,
            comm_destroy: symbol(&library, path, "ncclCommDestroy")?,
            comm_abort: symbol(&library, path, "ncclCommAbort")?,
            group_start: symbol(&library, path, "ncclGroupStart")?,
            group_end: symbol(&library, path, "ncclGroupEnd")?,
            all_reduce: symbol(&library, path, "ncclAllReduce")?,
            all_gather: symbol(&library, path, "ncclAllGather")?,
            get_error_string: symbol(&library, path, "ncclGetErrorString")?,
            get_last_error: symbol(&library, path, "ncclGetLastError")?,
            _library: library,
        })
    }

    /// `(major, minor, patch)` of the loaded library.
    pub(crate) fn version(&self) -> (u32, u32, u32) {
        self.version
    }

    /// A fresh unique id (`ncclGetUniqueId`): rank 0 makes it and sends it to the others.
    pub(crate) fn unique_id(&self) -> Result<RawUniqueId, Error> {
        let mut id = RawUniqueId { bytes: [0; UNIQUE_ID_BYTES] };
        // SAFETY: `id` is a valid out-pointer of the declared type.
        let result = unsafe { (self.get_unique_id)(&mut id) };
        self.check(result, None, "making a unique id (ncclGetUniqueId)")?;
        Ok(id)
    }

    /// `Ok` for `ncclSuccess`, else [`Error::Nccl`] with NCCL's own words.
    fn check(&self, result: NcclResult, comm: Option<RawComm>, during: &str) -> Result<(), Error> {
        if result == SUCCESS {
            return Ok(());
        }
        // SAFETY: NCCL returns a static string for every code.
        let text = unsafe { CStr::from_ptr((self.get_error_string)(result)) }.to_string_lossy().into_owned();
        let last = comm
            // SAFETY: `comm` is a live communicator; the string lives until the next call.
            .map(|c| unsafe { CStr::from_ptr((self.get_last_error)(c)) }.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty());
        let message = match last {
            Some(last) => format!("{text}: {last}"),
            None => text,
        };
        Err(Error::Nccl { during: during.to_string(), code: result, message })
    }

    /// Brackets the calls of `body` in `ncclGroupStart`/`ncclGroupEnd`, so that NCCL
    /// issues the operations of several local ranks (or several operations) as one.
    pub(crate) fn group(&self, body: impl FnOnce() -> Result<(), Error>) -> Result<(), Error> {
        // SAFETY: no arguments; groups nest.
        self.check(unsafe { (self.group_start)() }, None, "ncclGroupStart")?;
        let ran = body();
        // SAFETY: closes the group opened above, even when `body` failed.
        let ended = unsafe { (self.group_end)() };
        ran?;
        if ended == IN_PROGRESS {
            return Ok(());
        }
        self.check(ended, None, "ncclGroupEnd")
    }
}

/// One rank's communicator, created non-blocking; destroyed (or aborted, after a
/// failure) on drop.
pub(crate) struct Comm {
    nccl: &'static Nccl,
    /// The handle, in a heap slot that NCCL may write when a group ends.
    slot: Box<RawComm>,
    /// Set once an operation failed or timed out: the communicator was aborted.
    aborted: bool,
}

// SAFETY: an NCCL communicator may be used from any thread, one call at a time; `&mut
// self` on every call that uses it gives the one-at-a-time rule.
unsafe impl Send for Comm {}

impl Comm {
    /// Starts creating rank `rank` of `ranks` for the clique of `id` on the device whose
    /// context is current (`ncclCommInitRankConfig`, non-blocking). Call [`Comm::settle`]
    /// (after the group, when several are created in one) before using it.
    pub(crate) fn start(
        nccl: &'static Nccl,
        id: &RawUniqueId,
        rank: usize,
        ranks: usize,
    ) -> Result<Comm, Error> {
        let (rank_c, ranks_c) = match (c_int::try_from(rank), c_int::try_from(ranks)) {
            (Ok(r), Ok(n)) => (r, n),
            _ => return Err(Error::unsupported(format!("a communicator of {ranks} ranks"))),
        };
        let mut slot = Box::new(std::ptr::null_mut());
        let mut config = Config::with_blocking(false);
        // SAFETY: the out-pointer is a heap slot that lives as long as the returned
        // communicator (inside a group NCCL may fill it in at the group's end); the config
        // is read during the call; the id is passed by value; the caller made the rank's
        // device context current.
        let result = unsafe { (nccl.comm_init_rank_config)(&mut *slot, ranks_c, *id, rank_c, &mut config) };
        if result != SUCCESS && result != IN_PROGRESS {
            let comm = (!slot.is_null()).then_some(*slot);
            nccl.check(result, comm, &format!("joining as rank {rank} of {ranks} (ncclCommInitRankConfig)"))?;
        }
        Ok(Comm { nccl, slot, aborted: false })
    }

    /// Waits until the communicator's last call has completed (`ncclCommGetAsyncError`
    /// is no longer `ncclInProgress`), at most until `deadline`. A failure or the
    /// deadline aborts the communicator: its operations in flight end, and every later
    /// call fails.
    pub(crate) fn settle(&mut self, deadline: Instant, during: &str, waited: Duration) -> Result<(), Error> {
        self.usable(during)?;
        let started = Instant::now();
        loop {
            let mut state = IN_PROGRESS;
            // A handle that NCCL has not filled in yet (a group still starting) is in
            // progress.
            let result = if self.raw().is_null() {
                SUCCESS
            } else {
                // SAFETY: a live communicator and a valid out-pointer.
                unsafe { (self.nccl.comm_get_async_error)(self.raw(), &mut state) }
            };
            if result != SUCCESS {
                let err = self.nccl.check(result, Some(self.raw()), during);
                self.abort();
                return err;
            }
            if state != IN_PROGRESS {
                let checked = self.nccl.check(state, Some(self.raw()), during);
                if checked.is_err() {
                    self.abort();
                }
                return checked;
            }
            if Instant::now() >= deadline {
                self.abort();
                return Err(Error::CollectiveTimeout { during: during.to_string(), waited });
            }
            crate::stream::pause(started);
        }
    }

    /// Starts splitting this joined, non-blocking communicator into a blocking one of the
    /// same ranks in the same order (`ncclCommSplit` with one color and the rank as key).
    /// Every rank must call it (in one group when this process holds several); settle the
    /// new communicator, then drop this one.
    pub(crate) fn split_blocking(&mut self, rank: usize) -> Result<Comm, Error> {
        self.usable("splitting a communicator")?;
        let key = c_int::try_from(rank).map_err(|_| Error::unsupported(format!("rank {rank}")))?;
        let mut slot = Box::new(std::ptr::null_mut());
        let mut config = Config::with_blocking(true);
        // SAFETY: a live communicator; the out-pointer is a heap slot that lives as long
        // as the returned communicator (inside a group NCCL may fill it in at the group's
        // end); the config is read during the call.
        let result = unsafe { (self.nccl.comm_split)(self.raw(), 0, key, &mut *slot, &mut config) };
        if result != SUCCESS && result != IN_PROGRESS {
            let err = self.nccl.check(result, Some(self.raw()), "splitting a communicator (ncclCommSplit)");
            self.abort();
            err?;
        }
        Ok(Comm { nccl: self.nccl, slot, aborted: false })
    }

    /// The handle (null until NCCL has filled it in).
    fn raw(&self) -> RawComm {
        *self.slot
    }

    /// An error when the communicator was aborted.
    pub(crate) fn usable(&self, during: &str) -> Result<(), Error> {
        if self.aborted {
            return Err(Error::Nccl {
                during: during.to_string(),
                code: 0,
                message: "the communicator was aborted after an earlier failure or timeout; make a new one"
                    .into(),
            });
        }
        Ok(())
    }

    /// Aborts the communicator (`ncclCommAbort`): NCCL kernels waiting for other ranks
    /// end, and the handle is released.
    pub(crate) fn abort(&mut self) {
        if !self.aborted {
            self.aborted = true;
            if !self.raw().is_null() {
                // SAFETY: a live communicator, not used again (aborted is set).
                let _ = unsafe { (self.nccl.comm_abort)(self.raw()) };
            }
        }
    }

    /// Enqueues an all-reduce of `count` elements on `stream`.
    ///
    /// # Safety
    /// `send` and `recv` hold `count` elements of `data_type` on this rank's device (or
    /// are equal, for in place), and stay valid and unaccessed by others until `stream`
    /// has run the operation; the stream belongs to this rank's device.
    pub(crate) unsafe fn all_reduce(
        &mut self,
        send: u64,
        recv: u64,
        count: usize,
        data_type: DataType,
        op: RedOp,
        stream: RawStream,
    ) -> Result<(), Error> {
        self.usable("ncclAllReduce")?;
        // SAFETY: forwarded from the caller.
        let result = unsafe {
            (self.nccl.all_reduce)(
                send as *const c_void,
                recv as *mut c_void,
                count,
                data_type,
                op,
                self.raw(),
                stream,
            )
        };
        self.enqueued(result, "ncclAllReduce")
    }

    /// Enqueues an all-gather of `bytes` bytes from each rank into `recv` (rank r's at
    /// offset `r * bytes`) on `stream`.
    ///
    /// # Safety
    /// `send` holds `bytes` bytes and `recv` `ranks * bytes`, on this rank's device, valid
    /// and unaccessed by others until `stream` has run the operation; the stream belongs
    /// to this rank's device.
    pub(crate) unsafe fn all_gather(
        &mut self,
        send: u64,
        recv: u64,
        bytes: usize,
        stream: RawStream,
    ) -> Result<(), Error> {
        self.usable("ncclAllGather")?;
        // SAFETY: forwarded from the caller.
        let result = unsafe {
            (self.nccl.all_gather)(
                send as *const c_void,
                recv as *mut c_void,
                bytes,
                DataType::Uint8,
                self.raw(),
                stream,
            )
        };
        self.enqueued(result, "ncclAllGather")
    }

    /// The result of an enqueueing call: `ncclInProgress` is fine on a non-blocking
    /// communicator (the caller settles it); an error aborts.
    fn enqueued(&mut self, result: NcclResult, during: &str) -> Result<(), Error> {
        if result == SUCCESS || result == IN_PROGRESS {
            return Ok(());
        }
        let err = self.nccl.check(result, Some(self.raw()), during);
        self.abort();
        err
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        if self.aborted || self.raw().is_null() {
            return;
        }
        // Finalize flushes the communicator's work (a non-blocking one returns at once:
        // wait for it, briefly, as the owner has already waited for its streams), then
        // free it. Any trouble on the way ends in an abort, which always frees.
        // SAFETY: a live communicator, used by no one else (we are dropping it).
        let finalized = unsafe { (self.nccl.comm_finalize)(self.raw()) };
        if finalized != SUCCESS && finalized != IN_PROGRESS {
            self.abort();
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        if self.settle(deadline, "finalizing a communicator", Duration::from_secs(10)).is_err() {
            return;
        }
        // SAFETY: finalized and settled; freed only here, and never aborted after.
        let _ = unsafe { (self.nccl.comm_destroy)(self.raw()) };
        self.aborted = true;
    }
}
