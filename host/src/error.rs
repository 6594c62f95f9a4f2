//! The host crate's one error type.

use crate::gpu::CudaError;

use crate::emu;

/// Everything that can go wrong on the host side, with the context needed to act on it.
///
/// Both backends report through this type: driver failures come as [`Error::Driver`],
/// [`Error::Launch`] or [`Error::KernelFailed`] from the GPU, and every failure the CPU
/// emulator detects (a warp-rule violation, a deadlock, a trap) as [`Error::Emulator`],
/// whose message names the kernel, block, warp, lanes, masks and seed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No usable CUDA device: no driver, no GPU, or the driver refused to start.
    #[error("no CUDA device found ({reason}); warpsafe's GPU paths need an NVIDIA GPU of sm_70 or newer")]
    NoDevice {
        /// What the driver said.
        reason: String,
    },
    /// The device is older than sm_70, the oldest architecture warpsafe supports.
    #[error(
        "{name} has compute capability {major}.{minor}; warpsafe needs 7.0 (Volta) or newer, where warps have independent thread scheduling"
    )]
    UnsupportedDevice {
        /// The device's name.
        name: String,
        /// Compute capability, major part.
        major: u32,
        /// Compute capability, minor part.
        minor: u32,
    },
    /// A program has no PTX that the device runs: built for newer architectures only, or
    /// with none at all.
    #[error(
        "{program} has no PTX that {device} (sm_{sm}) runs: it was built for {}; add an architecture at \
         or below sm_{sm} to its warpsafe_build::Builder (Arch::SM_70 runs on every GPU from Volta on)",
        if built.is_empty() { "no architecture".to_string() } else { built.iter().map(|sm| format!("sm_{sm}")).collect::<Vec<_>>().join(", ") }
    )]
    NoPtxForDevice {
        /// The program's name.
        program: String,
        /// The device's name.
        device: String,
        /// The device's architecture, `major * 10 + minor`.
        sm: u32,
        /// The architectures the program has PTX for.
        built: Vec<u32>,
    },
    /// A driver call failed; `during` says which step.
    #[error("CUDA driver error while {during}: {source}")]
    Driver {
        /// The step that failed, e.g. "copying 4096 bytes to the device".
        during: String,
        /// The driver's error.
        source: CudaError,
    },
    /// Device memory could not be allocated (on the GPU: usually out of memory; on the
    /// emulator: the host allocator refused, or the size overflows).
    #[error("could not allocate {bytes} bytes of device memory{}", .source.map_or(String::new(), |e| format!(": {e}")))]
    Alloc {
        /// The size asked for.
        bytes: usize,
        /// The driver's error, on the GPU.
        source: Option<CudaError>,
    },
    /// The driver rejected a PTX module (malformed PTX, or a PTX ISA version newer than the
    /// driver supports): the text outside every kernel when the module was loaded, or a
    /// kernel's own module when it was first looked up (kernels load on first use).
    #[error("the driver could not load the PTX module{}: {source}; check that the PTX is complete and that the driver is new enough for its .version", .kernel.as_ref().map_or(String::new(), |k| format!(" of kernel {k}")))]
    ModuleLoad {
        /// The kernel whose module it was, or `None` for the text outside every kernel.
        kernel: Option<String>,
        /// The driver's error.
        source: CudaError,
    },
    /// A PTX text contained a NUL byte, which the driver's string interface cannot carry.
    #[error("the PTX text contains a NUL byte at offset {offset}")]
    PtxContainsNul {
        /// Byte offset of the first NUL.
        offset: usize,
    },
    /// The module has no kernel of that name.
    #[error("the module has no kernel named {name:?}{}", .source.map_or(String::new(), |e| format!(": {e}")))]
    KernelNotFound {
        /// The name asked for.
        name: String,
        /// The driver's error, on the GPU.
        source: Option<CudaError>,
    },
    /// A launch passed a different number of arguments than the kernel has parameters.
    #[error("{kernel} takes {expected} parameters but the launch passed {got} arguments")]
    ArgumentCount {
        /// The kernel's name.
        kernel: String,
        /// The kernel's parameter count.
        expected: usize,
        /// The number of argument pointers passed.
        got: usize,
    },
    /// A launch's shape that no device runs: an empty grid or block, too many threads.
    #[error("cannot launch {kernel}: {problem}")]
    InvalidLaunch {
        /// The kernel's name.
        kernel: String,
        /// What is wrong with the shape.
        problem: String,
    },
    /// A launch argument is a buffer of another device (another GPU, or host memory of the
    /// emulator passed to a GPU): the kernel could not reach it.
    #[error(
        "{kernel}: the buffer passed for {param} belongs to another device than the one launching the kernel"
    )]
    ForeignBuffer {
        /// The kernel's name.
        kernel: String,
        /// Which parameter, with its name and type when known.
        param: String,
    },
    /// A buffer the kernel declares `#[covers]` (one element per thread) has more elements
    /// than the launch has threads: the rest would silently stay unwritten.
    #[error(
        "{kernel}: the launch has {threads} threads but {param} has {len} elements, and the kernel \
         covers it with one thread per element: launch at least {len} threads"
    )]
    GridDoesNotCover {
        /// The kernel's name.
        kernel: String,
        /// Which parameter, with its name and type.
        param: String,
        /// The buffer's length.
        len: usize,
        /// Threads in the launch.
        threads: u64,
    },
    /// The driver refused to launch a kernel (bad configuration or arguments).
    #[error("launching {kernel} failed: {source}")]
    Launch {
        /// The kernel's name.
        kernel: String,
        /// The driver's error.
        source: CudaError,
    },
    /// A cooperative launch asked for more blocks than can be resident at once: a grid
    /// barrier in such a grid would wait forever for blocks that cannot start.
    #[error(
        "cooperative launch of {kernel} asks for {blocks} blocks but at most {max} can be resident at once \
         ({block_threads} threads and {dynamic_shared_bytes} dynamic shared bytes per block)"
    )]
    CooperativeGridTooLarge {
        /// The kernel's name.
        kernel: String,
        /// Blocks asked for.
        blocks: u64,
        /// The most blocks that can be resident together.
        max: u32,
        /// Threads per block of the launch.
        block_threads: u32,
        /// Dynamic shared memory per block of the launch.
        dynamic_shared_bytes: u32,
    },
    /// A kernel started but failed while running (a `trap`, a bad memory access).
    #[error("{kernel} failed while running: {source}")]
    KernelFailed {
        /// The kernel's name.
        kernel: String,
        /// The driver's error.
        source: CudaError,
    },
    /// The CPU emulator stopped a launch: a warp-rule violation, a deadlock, an
    /// out-of-bounds shared access, a data race, a trap or an invalid launch. The message is
    /// the emulator's (kernel, block, warp, lanes, masks, location and the seed that
    /// replays it).
    #[error(transparent)]
    Emulator(emu::Error),
    /// The operation does not exist on this backend, or the objects come from different
    /// backends or devices.
    #[error("unsupported: {what}")]
    Unsupported {
        /// What was asked for.
        what: String,
    },
    /// A host slice and a device buffer of different lengths.
    #[error("{operation}: the device buffer holds {buffer} elements but the host slice {host}")]
    LengthMismatch {
        /// The operation.
        operation: &'static str,
        /// The buffer's length.
        buffer: usize,
        /// The host slice's length.
        host: usize,
    },
    /// Buffers an operation pairs element by element have different lengths (a scan's
    /// input and output, a selection's input and flags, a partition's input and output).
    #[error("{operation}: {what} holds {actual} elements but must hold {expected}, as many as the input")]
    MismatchedLengths {
        /// The operation.
        operation: &'static str,
        /// Which buffer.
        what: &'static str,
        /// The input's length.
        expected: usize,
        /// The buffer's length.
        actual: usize,
    },
    /// A selection kept more elements than its output buffer holds: the first `len` were
    /// written, the rest dropped (nothing was written out of bounds).
    #[error("{operation}: {selected} elements were selected but the output holds {len}; only the first {len} were written")]
    OutputTooSmall {
        /// The operation.
        operation: &'static str,
        /// Elements selected.
        selected: u64,
        /// The output buffer's length.
        len: usize,
    },
    /// An input is larger than the operation can address in one launch.
    #[error("input of {len} elements is too large for {operation}: at most {max}")]
    InputTooLarge {
        /// The operation.
        operation: &'static str,
        /// The input's length.
        len: usize,
        /// The largest supported length.
        max: usize,
    },
    /// A segmented reduction's segments do not fit its input or output: see
    /// [`SegmentsProblem`]. Nothing was read outside the input or the offsets.
    #[error("{operation}: {problem}")]
    InvalidSegments {
        /// The operation.
        operation: &'static str,
        /// What is wrong.
        problem: SegmentsProblem,
    },
    /// An argument no launch can serve: a histogram with no bins, bounds that are not
    /// increasing or are NaN, levels that are not strictly increasing, a counts buffer of
    /// the wrong length, samples that are not whole pixels.
    #[error("{operation}: {problem}")]
    InvalidArgument {
        /// The operation.
        operation: &'static str,
        /// What is wrong, with the values involved.
        problem: String,
    },
    /// NCCL, which GPU communicators need, cannot be loaded.
    #[error("NCCL is not available: {reason}")]
    NcclUnavailable {
        /// What was tried, and how to fix it.
        reason: String,
    },
    /// An NCCL call failed.
    #[error("NCCL failed while {during}: {message} (ncclResult_t {code})")]
    Nccl {
        /// The step that failed.
        during: String,
        /// NCCL's result code.
        code: i32,
        /// NCCL's description, with its last error message when it has one.
        message: String,
    },
    /// Other ranks did not join or take part in a collective within the communicator's
    /// timeout; the communicator was aborted (make a new one).
    #[error("timed out after {waited:?} {during}; every rank must join and call the same operations in the same order (CommunicatorOptions::timeout sets the wait)")]
    CollectiveTimeout {
        /// What was waited for.
        during: String,
        /// The timeout.
        waited: std::time::Duration,
    },
    /// The ranks' arguments do not fit together: buffer or shard counts other than the
    /// local ranks', lengths that differ between ranks, a rank outside the clique, an id
    /// of the other backend or one that does not parse.
    #[error("{operation}: {detail}")]
    RankMismatch {
        /// The operation.
        operation: &'static str,
        /// What does not fit.
        detail: String,
    },
    /// A buffer or stream that does not belong to the device of the rank it was given
    /// for.
    #[error("{operation}: {detail}; each rank's buffers and streams must be its own device's")]
    NotInCommunicator {
        /// The operation.
        operation: &'static str,
        /// Which rank and object.
        detail: String,
    },
}

impl Error {
    /// A [`Error::Driver`] for the step `during`.
    pub(crate) fn driver(during: impl Into<String>) -> impl FnOnce(CudaError) -> Error {
        let during = during.into();
        move |source| Error::Driver { during, source }
    }

    /// An [`Error::Unsupported`] for `what`.
    pub(crate) fn unsupported(what: impl Into<String>) -> Error {
        Error::Unsupported { what: what.into() }
    }
}

/// What is wrong with the segments of a segmented reduction ([`Error::InvalidSegments`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SegmentsProblem {
    /// A fixed segment length of 0.
    #[error("a segment length of 0; segments must hold at least one element")]
    ZeroSegmentLength,
    /// An offsets array with no element: `segments + 1` offsets are needed, at least one.
    #[error("an empty offsets array; n segments need n + 1 offsets (one for no segment)")]
    EmptyOffsets,
    /// The output holds fewer elements than there are segments.
    #[error("{segments} segments but the output holds {len} elements")]
    OutputTooShort {
        /// Segments of the input.
        segments: u64,
        /// The output's length.
        len: usize,
    },
    /// `offsets[segment + 1] < offsets[segment]` (the lowest such segment).
    #[error("offsets are not monotonic: segment {segment} ends before it begins")]
    NotMonotonic {
        /// The segment.
        segment: u64,
    },
    /// `offsets[segment + 1]` is past the end of the input (the lowest such segment).
    #[error("segment {segment} ends past the input's {len} elements")]
    PastInput {
        /// The segment.
        segment: u64,
        /// The input's length.
        len: u64,
    },
}
