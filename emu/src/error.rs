//! The emulator's error: what rule a launch broke, where, and the seed that replays it.

use std::fmt;
use std::string::String;

/// What an emulated launch did wrong. See the table in the [module docs](super).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The launch's shape or arguments are not what the GPU accepts.
    InvalidLaunch,
    /// A lane called a collective with a mask that does not contain itself.
    MaskExcludesCaller,
    /// Lanes of one mask wait at different collectives, or with different masks or
    /// operands.
    MismatchedCollective,
    /// A collective or barrier can never complete, or threads spin forever.
    Deadlock,
    /// A block barrier is not reached by every thread that must reach it, or its threads
    /// disagree on its form.
    BarrierMismatch,
    /// A shared-memory index past the end of its array.
    SharedOutOfBounds,
    /// An index past the end of a global-memory view (`warpsafe::global`).
    GlobalOutOfBounds,
    /// Two threads accessed one shared- or global-memory location, at least one writing,
    /// without a happens-before order between them (see the crate docs for the edges).
    DataRace,
    /// The kernel executed `trap`, panicked, or made an access the GPU faults on.
    Trap,
    /// A shuffle read from a lane outside its mask (the value would be undefined).
    ShuffleFromInactiveLane,
    /// Threads spin forever: every thread that can run only re-reads locations that no
    /// thread that can run will write.
    Livelock,
    /// An undefined value (shared or global memory read before any write, a shuffle from a
    /// lane outside its mask) reached a use: a store, an atomic, or a collective's result.
    UninitializedValue,
    /// An emulated thread overflowed its stack (`Options::stack_bytes`, the emulator's
    /// `cudaLimitStackSize`).
    StackOverflow,
    /// Lanes that reached the same `activemask` in the same divergent region were left out
    /// of the mask a collective then used (the CUDA programming guide's `activemask`
    /// pitfall).
    ActiveMaskSplit,
    /// A shuffle width that is not a power of two in `1..=32`.
    InvalidShuffleWidth,
    /// Blocks wait for each other (a grid barrier) in a launch that is not cooperative,
    /// so the blocks they wait for may never be resident.
    NotCooperative,
}

impl ErrorKind {
    fn describe(self) -> &'static str {
        match self {
            ErrorKind::InvalidLaunch => "invalid launch",
            ErrorKind::MaskExcludesCaller => "collective mask excludes its caller",
            ErrorKind::MismatchedCollective => "mismatched collective",
            ErrorKind::Deadlock => "deadlock",
            ErrorKind::BarrierMismatch => "block barrier not reached by every thread",
            ErrorKind::SharedOutOfBounds => "shared-memory index out of bounds",
            ErrorKind::GlobalOutOfBounds => "global-memory index out of bounds",
            ErrorKind::DataRace => "data race",
            ErrorKind::Trap => "trap",
            ErrorKind::ShuffleFromInactiveLane => "shuffle from a lane outside its mask",
            ErrorKind::Livelock => "livelock",
            ErrorKind::UninitializedValue => "use of an undefined value",
            ErrorKind::StackOverflow => "thread stack overflow",
            ErrorKind::ActiveMaskSplit => "activemask split a divergent region",
            ErrorKind::InvalidShuffleWidth => "invalid shuffle width",
            ErrorKind::NotCooperative => "grid-wide wait in a launch that is not cooperative",
        }
    }
}

/// An emulated launch's failure. Its `Display` is one message naming the kernel, the
/// block, warp, lanes and masks involved, the source locations, and the seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    seed: u64,
    kernel: &'static str,
    message: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, seed: u64, kernel: &'static str, message: String) -> Error {
        Error { kind, seed, kernel, message }
    }

    /// The same error with `note` appended to its details.
    pub(crate) fn with_note(mut self, note: String) -> Error {
        self.message = std::format!("{}; {note}", self.message);
        self
    }

    /// Which rule the launch broke.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The scheduler seed of the failing run: `WARPSAFE_EMU_SEED=<seed>` replays it.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The kernel's name.
    pub fn kernel(&self) -> &'static str {
        self.kernel
    }

    /// The details: threads, masks, locations (without the kind, kernel and seed).
    pub fn details(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "warpsafe emulator: {} in kernel `{}` (seed {}; replay with {}={}): {}",
            self.kind.describe(),
            self.kernel,
            self.seed,
            super::SEED_ENV,
            self.seed,
            self.message
        )
    }
}

impl std::error::Error for Error {}
