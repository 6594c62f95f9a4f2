//! The CPU emulator: runs kernels written against `warpsafe` on the host, without a GPU,
//! and checks the warp-level rules that the GPU lets pass silently.
//!
//! Compiled for the host, the crate's `warpsafe::arch` layer drives this emulator
//! instead of PTX instructions, so the same kernel source (declared with
//! `warpsafe::kernel!`) runs unchanged: on the host each kernel is a `static`
//! `warpsafe::kernel::Kernel` that [`launch`] runs with a grid, a block shape and a dynamic shared-memory
//! size.
//!
//! # What is modelled
//!
//! - **Threads**: every GPU thread is a stackful coroutine on the calling OS thread, and
//!   one scheduler, seeded by [`Options::seed`], picks which runs next. Threads switch
//!   only at the points where they communicate: every warp collective, block barrier,
//!   atomic, fence, volatile load or store, and shared-memory read or write. Between two
//!   such points a thread runs alone, so a kernel runs exactly as one interleaving of its
//!   threads' switch points, chosen by the seed: the same seed replays the same
//!   interleaving, and another seed tries another.
//! - **Independent thread scheduling** (Volta and newer): the lanes of a warp run
//!   independently and meet only at the collectives they call. A collective completes
//!   when every lane of its mask has arrived at it; until then the arrived lanes wait.
//!   `activemask` returns the lanes of the caller's warp that are at the same `activemask`
//!   call at the moment the scheduler resolves it: always the caller, often fewer lanes
//!   than took the branch, as on the GPU, so code that expects "all lanes of the branch"
//!   fails under some seeds.
//! - **Blocks** run concurrently: up to [`Options::max_resident_blocks`] blocks are live
//!   at once (new ones start, in index order, as others finish), and a cooperative launch
//!   keeps the whole grid live. Inter-block patterns (a last-block reduction, message
//!   passing with fences, a grid barrier built from atomics) behave as on the GPU;
//!   spin-waits work because every poll is a switch point.
//! - **Memory**: global memory is host memory (a pointer parameter is a host address);
//!   shared memory is allocated per block (static arrays from `warpsafe::shared!` and the
//!   dynamic window), filled with the [`POISON`] word; atomics are `core::sync::atomic`
//!   operations on the same addresses with the matching orderings, fences are
//!   `core::sync::atomic::fence`; every thread has its own lazily mapped stack
//!   ([`Options::stack_bytes`], the emulator's `cudaLimitStackSize`).
//! - Everything the GPU side offers: thread, block and grid coordinates, every `shfl.sync`
//!   mode (width, clamp and predicate as PTX defines them), `vote.sync`, `match.sync`,
//!   `redux.sync`, `elect.sync` (the leader is chosen by the seed), `bar.warp.sync`,
//!   `activemask`, the lane masks, `barrier.sync` (whole block, and named barriers with a
//!   thread count), `barrier.red`, all scoped atomics, ordered and volatile accesses,
//!   fences, `trap` and device `printf` (to stdout).
//!
//! # What is checked
//!
//! Each check ends the launch with an [`Error`] whose [`ErrorKind`] names it and whose
//! message names the kernel, the blocks, warps and lanes of both sides, both source
//! locations, the memory (shared array and element, or global buffer and element), the
//! seed, and a one-line hint of the usual fix. `docs/emulator.md` in the repository is
//! the precise page: the PTX memory-model mapping, what is explored, the costs, and a
//! comparison with compute-sanitizer.
//!
//! | check | kind |
//! | --- | --- |
//! | a lane calls a collective with a mask that does not contain it | [`ErrorKind::MaskExcludesCaller`] |
//! | lanes of one mask wait at different collectives, or with different masks or operands | [`ErrorKind::MismatchedCollective`] |
//! | a collective can never complete: a lane of its mask exited, does not exist, or waits elsewhere | [`ErrorKind::Deadlock`] |
//! | a whole-block barrier reached from different places, or after some thread of the block exited (CUDA's `__syncthreads` rule; PTX's exit rule with [`Options::exits_release_barriers`]); a barrier some live thread never reaches; different forms or counts | [`ErrorKind::BarrierMismatch`] |
//! | every thread that can run spins (re-reads values it already read, or waits on a lane that does), or nothing progresses for [`Options::livelock_steps`] steps | [`ErrorKind::Livelock`] (`BarrierMismatch` when a barrier waits for the spinners) |
//! | a grid barrier (`GridBarrier::sync`) in a launch that is not cooperative, or blocks spinning on blocks that cannot start | [`ErrorKind::NotCooperative`] |
//! | a shared-memory index past the end of its array, a part of the dynamic window past its end, or an access through a pointer (a shared atomic, `read_unchecked`) outside every shared allocation of the block | [`ErrorKind::SharedOutOfBounds`] |
//! | an index past the end of a global-memory view (`warpsafe::global`) | [`ErrorKind::GlobalOutOfBounds`] |
//! | an undefined value (shared memory no thread wrote, a shuffle from a lane outside its mask) reaches a store, an atomic or a computing collective | [`ErrorKind::UninitializedValue`] (at the source with [`Options::undefined_at_source`]; shuffles then [`ErrorKind::ShuffleFromInactiveLane`]) |
//! | two accesses to one byte of shared or global memory, one a write, by threads not ordered by happens-before (barriers, `syncwarp` and collectives, release/acquire and fences at their scope), unless both are morally strong | [`ErrorKind::DataRace`] ([`Options::check_races`], [`Options::check_global_races`]) |
//! | a shuffle reads a lane outside a mask from `activemask` that left out lanes of the same `activemask` call | [`ErrorKind::ActiveMaskSplit`] |
//! | a shuffle width that is not a power of two in `1..=32` | [`ErrorKind::InvalidShuffleWidth`] |
//! | a checked group collective whose lanes are not all present at one place (the GPU's `activemask` test traps with the same words) | [`ErrorKind::Trap`] |
//! | an emulated thread overflows its stack ([`Options::stack_bytes`]) | [`ErrorKind::StackOverflow`] |
//! | `trap`, a panic (including debug overflow checks), a misaligned atomic | [`ErrorKind::Trap`] |
//! | a launch the GPU would refuse (shape, parameter count, too large a cooperative grid, a static shared array that takes the block's shared memory past 227 KiB with the dynamic window, found when the kernel first touches it) | [`ErrorKind::InvalidLaunch`] |
//!
//! Deadlocks are exact: reported when no thread can run while some have not finished,
//! never by a timeout. Spins are found exactly too; the step budget is only a safety net.
//!
//! # What is not modelled
//!
//! - **Timing**: no clock, no instruction costs, no memory latency; only the order of
//!   switch points is chosen, so performance cannot be measured here.
//! - **Memory coalescing, caches, bank conflicts**, occupancy limits other than
//!   `max_resident_blocks`.
//! - **Weak executions**: every execution is sequentially consistent. Missing
//!   synchronisation is found by the race check instead (a race is exactly where the GPU
//!   may show a weak behaviour); the non-SC outcomes of race-free programs built from
//!   relaxed atomics alone are not produced.
//! - **Raw pointers**: accesses through raw pointers in `unsafe` kernels are plain host
//!   loads and stores, invisible to the race and undefined-value checks and unchecked for
//!   bounds (they may crash the test process). The views of `warpsafe::global`
//!   (`UnsafeSlice` for scratch buffers and protocols), shared arrays and the atomic API
//!   are seen.
//! - **Registers**: an undefined value is followed by its poison bits ([`POISON`]); float
//!   arithmetic keeps them, integer arithmetic does not, and branches are not seen.
//! - **Plain spin loops**: a thread polling memory with plain (non-volatile, non-atomic)
//!   loads never reaches a switch point and hangs the emulator (on the GPU the compiler may
//!   hoist the load and hang too): poll with `warpsafe::atomic::load_volatile` or an
//!   atomic load.
//! - Convergence after a branch: lanes do not reconverge, they only meet at collectives,
//!   which is what the Volta model guarantees.

//! # Seeds
//!
//! [`Options::default`] takes its seed from the `WARPSAFE_EMU_SEED` environment variable
//! (0 when it is unset or not a number). [`for_each_seed`] runs a launch under each seed of
//! a range; when `WARPSAFE_EMU_SEED` is set it runs that seed only, so a failure that
//! printed `seed 17` replays, step for step, with `WARPSAFE_EMU_SEED=17`.
//!
//! # Speed
//!
//! Each switch point costs one coroutine switch plus the bookkeeping of the checks it
//! feeds: about 0.2 µs with the device crates built at `opt-level = 1`, about 2 µs fully
//! unoptimised. The race check adds a join of the lanes' clocks per completed collective
//! (what they learned since the last barrier), O(block size) per barrier, and a shadow
//! lookup per byte accessed in shared memory and through the global API: measured, a
//! grid of 2 × 1024 threads making 50 warp reductions each runs in 0.15 s without it,
//! 0.53 s with the shared-memory check and 0.55 s with both; warpsafe's emulated tests
//! went from 3.7 s to 7.3 s. Turn the global shadow off with
//! [`Options::check_global_races`], all race checks with [`Options::check_races`]. Keep
//! emulated inputs to thousands or a few hundred thousand elements.
//!
//! To keep the working set of coroutine stacks small, and to look like a GPU, half of the
//! scheduler's picks come from the threads made runnable last (typically the lanes a
//! collective just released), the other half uniformly from all runnable threads.
//!
//! # Layers
//!
//! The modules import only downwards (no circles), and the `impl State` blocks of the
//! machines call only the layers below them:
//!
//! | layer | modules | what |
//! | --- | --- | --- |
//! | data | `site` | thread ids, source sites, memory-ordering strengths |
//! | data | `race`, `poison`, `warp`, `barrier` | vector clocks and shadows; the poison word and where undefined values came from; a warp's collective waits (and mask names); a block's barriers |
//! | data | `thread`, `block`, `state` | one thread; one block (threads, warps, barriers, shared memory); the launch |
//! | reading | `report` | who a thread is and what it does, stall and livelock reports |
//! | machines | `memory`, `undefined`, then `barrier_sync`, `collective` | accesses and happens-before edges; uses of undefined values; block barriers; warp collectives, each an `impl State` |
//! | scheduler | `engine`, `overflow` | coroutines, the seeded scheduler, stack overflows |
//! | adapter | `device` | the API the device crate's `arch` layer calls |

mod barrier;
mod barrier_sync;
mod block;
mod collective;
pub mod device;
mod engine;
mod error;
mod memory;
mod overflow;
mod poison;
mod race;
mod report;
mod site;
mod state;
#[cfg(test)]
mod tests;
mod thread;
mod undefined;
mod warp;

pub use error::{Error, ErrorKind};
pub use poison::POISON;

use core::ffi::c_void;

use warpsafe_types::UntypedKernel;
pub use warpsafe_types::{Dim3, LaunchConfig};

/// A launch as the engine runs it: the shape in [`Dim3`]s, and whether it is cooperative.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared_bytes: u32,
    /// Every block is live at once, so blocks may wait for each other (a grid barrier).
    pub cooperative: bool,
}

impl Shape {
    /// The engine's form of `config`, once it passed [`LaunchConfig::problem`].
    pub(crate) fn new(config: &LaunchConfig, cooperative: bool) -> Shape {
        let dim = |(x, y, z): (u32, u32, u32)| Dim3 { x, y, z };
        Shape {
            grid: dim(config.grid),
            block: dim(config.block),
            dynamic_shared_bytes: config.shared_mem_bytes,
            cooperative,
        }
    }
}

/// How the emulator runs a launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Seeds the scheduler: the same seed gives the same interleaving of threads.
    pub seed: u64,
    /// How many blocks are live at once (the emulated GPU's capacity). A cooperative launch
    /// must fit: a larger grid is an [`ErrorKind::InvalidLaunch`].
    pub max_resident_blocks: u32,
    /// Check memory accesses for data races ([`ErrorKind::DataRace`]): keeps vector
    /// clocks and a shadow of every shared-memory byte accessed.
    pub check_races: bool,
    /// With `check_races`, also keep a shadow of every global-memory byte accessed
    /// through the API (atomics, volatile and ordered accesses, `global::UnsafeSlice`).
    pub check_global_races: bool,
    /// The step budget: switch points without progress (no memory changed, no new value
    /// read, no collective or barrier completed, no thread finished or started) after
    /// which the launch ends with [`ErrorKind::Livelock`]. A safety net only: spinning
    /// threads are found exactly long before (every runnable thread re-reading values it
    /// already read), and a long kernel makes progress at every collective; raise it for a
    /// kernel that loops for longer without a collective or a memory access.
    pub livelock_steps: u64,
    /// PTX's rule for threads that exit: a whole-block barrier is released when the only
    /// threads missing have exited (the GPU behaves so since Volta). Off by default: the
    /// emulator then applies CUDA C++'s rule for `__syncthreads` (every thread of the block
    /// reaches it) and reports a barrier after an early return as
    /// [`ErrorKind::BarrierMismatch`], the usual bug behind it being reads of the slots
    /// that the exited threads never wrote.
    pub exits_release_barriers: bool,
    /// Report an undefined value where it is produced (a read of shared memory that no
    /// thread wrote, as [`ErrorKind::UninitializedValue`]; a shuffle from a lane outside
    /// its mask, as [`ErrorKind::ShuffleFromInactiveLane`]), like compute-sanitizer's
    /// initcheck, instead of where it is used (the default: a store or a computing
    /// collective of a value that carries the poison word, see [`POISON`]).
    pub undefined_at_source: bool,
    /// Bytes of stack for each emulated thread: the emulator's `cudaLimitStackSize` (a GPU
    /// thread may have up to 512 KiB; kernel code built without optimisation needs more
    /// than on the GPU). Stacks are mapped lazily with a guard page, so a large value
    /// costs address space, not memory, until used; a launch keeps `max_resident_blocks`
    /// times the block size of them. Overflowing it ends the launch with
    /// [`ErrorKind::StackOverflow`] (on Linux x86_64 and aarch64; elsewhere the process
    /// dies).
    pub stack_bytes: usize,
}

/// The environment variable that sets the default seed.
pub const SEED_ENV: &str = "WARPSAFE_EMU_SEED";

/// The seed `WARPSAFE_EMU_SEED` names, if it is set to a number.
fn env_seed() -> Option<u64> {
    std::env::var(SEED_ENV).ok()?.trim().parse().ok()
}

impl Default for Options {
    /// Seed from `WARPSAFE_EMU_SEED` (else 0), 8 resident blocks, races checked, a step
    /// budget of 10^8 switch points without progress (about 20 s), CUDA's barrier rule,
    /// undefined values reported where used, 1 MiB stacks.
    fn default() -> Options {
        Options {
            seed: env_seed().unwrap_or(0),
            max_resident_blocks: 8,
            check_races: true,
            check_global_races: true,
            livelock_steps: 100_000_000,
            exits_release_barriers: false,
            undefined_at_source: false,
            stack_bytes: 1024 * 1024,
        }
    }
}

/// Runs the whole grid to completion on the calling OS thread, deterministically for
/// `options.seed`.
///
/// `args` holds one pointer per kernel parameter, each pointing at the parameter's value
/// (exactly like `cuLaunchKernel`'s `kernelParams`). Global memory is host memory: a
/// device-pointer parameter is a host address.
///
/// # Errors
/// [`ErrorKind::InvalidLaunch`] for a shape the GPU would refuse
/// ([`LaunchConfig::problem`]) or a wrong number of arguments; every other kind when the
/// kernel breaks the rule it names (see the module docs). The launch stops at the first
/// error.
///
/// # Safety
/// Each `args[i]` points at a valid value of the kernel's `i`-th parameter type, and the
/// kernel's own contract (the memory its pointer parameters name) holds, as for a GPU
/// launch.
pub unsafe fn launch(
    kernel: &UntypedKernel,
    config: &LaunchConfig,
    args: &[*mut c_void],
    options: &Options,
) -> Result<(), Error> {
    // SAFETY: forwarded from the caller.
    unsafe { engine::run(kernel, config, false, args, options) }
}

/// [`launch`], cooperatively (`cuLaunchCooperativeKernel`): every block of the grid is live
/// at once, so blocks may wait for each other. A grid of more than
/// [`Options::max_resident_blocks`] blocks is an [`ErrorKind::InvalidLaunch`].
///
/// # Errors
/// As for [`launch`].
///
/// # Safety
/// As for [`launch`].
pub unsafe fn launch_cooperative(
    kernel: &UntypedKernel,
    config: &LaunchConfig,
    args: &[*mut c_void],
    options: &Options,
) -> Result<(), Error> {
    // SAFETY: forwarded from the caller.
    unsafe { engine::run(kernel, config, true, args, options) }
}

/// Test helper: [`for_each_seed_with`] the default [`Options`].
pub fn for_each_seed(
    seeds: core::ops::Range<u64>,
    run: impl FnMut(&Options) -> Result<(), Error>,
) -> Result<(), Error> {
    for_each_seed_with(seeds, &Options::default(), run)
}

/// Test helper: runs `run` once for each seed of `seeds` (or only for the seed in
/// `WARPSAFE_EMU_SEED`, when it is set), with `base` for every other option. Every seed
/// runs, also after a failure; the result is the first failing seed's error, its message
/// ending with how many seeds failed and which (`failed under 3 of 16 seeds: 2, 7, 11`),
/// so one run tells whether a bug is rare or certain.
pub fn for_each_seed_with(
    seeds: core::ops::Range<u64>,
    base: &Options,
    mut run: impl FnMut(&Options) -> Result<(), Error>,
) -> Result<(), Error> {
    if let Some(seed) = env_seed() {
        return run(&Options { seed, ..base.clone() });
    }
    let tried = seeds.end.saturating_sub(seeds.start);
    let mut first: Option<Error> = None;
    let mut failed = Vec::new();
    for seed in seeds {
        if let Err(error) = run(&Options { seed, ..base.clone() }) {
            failed.push(seed);
            first.get_or_insert(error);
        }
    }
    match first {
        None => Ok(()),
        Some(error) => {
            let list = failed.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
            Err(error.with_note(format!("failed under {} of {tried} seeds: {list}", failed.len())))
        }
    }
}
