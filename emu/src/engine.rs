//! The scheduler: one stackful coroutine per emulated thread, all driven from the
//! launching OS thread by one seeded random choice per switch point.
//!
//! A running thread reaches the emulator only through the `arch` layer, which calls the
//! functions below. Each of them takes the launch's [`State`] for a moment (it is never
//! borrowed across a switch), records what the thread does, and suspends the coroutine;
//! the scheduler loop in [`run`] then picks the next runnable thread at random.
//! Invariant: `State::runnable` holds every thread whose state is `Ready` or
//! `ActiveMask`, except the one running.

use core::cell::{Cell, RefCell};
use core::ffi::{c_void, CStr};
use core::panic::Location;
use std::any::Any;
use std::boxed::Box;
use std::collections::HashMap;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::block::Block;
use super::overflow;
use super::poison::Undefined;
use super::race::Shadow;
use super::site::{split, tid, Site, Tid};
use super::state::{Rng, State};
use super::thread::Run;
use super::{Error, ErrorKind, LaunchConfig, Options, Shape};
use warpsafe_types::Dim3;
use warpsafe_types::UntypedKernel;

/// The scheduler's own operations on the launch state.
impl State {
    /// Whether every runnable thread is spinning in the current epoch: none can make
    /// progress, since nothing they read can change until one of them writes.
    fn all_spinning(&self) -> bool {
        !self.runnable.is_empty()
            && self.runnable.iter().all(|&t| self.thread(t).spinning_epoch == self.epoch)
    }
    /// Starts the next block of the grid in `slot`, if one is left.
    fn start_block(&mut self, slot: usize) -> Option<u32> {
        if self.next_block == self.grid_blocks {
            return None;
        }
        let linear = self.next_block;
        self.next_block += 1;
        let g = self.config.grid;
        let index = Dim3 {
            x: (linear % g.x as u64) as u32,
            y: (linear / g.x as u64 % g.y as u64) as u32,
            z: (linear / (g.x as u64 * g.y as u64)) as u32,
        };
        let block = Block::new(index, linear, self.config, self.options.check_races);
        let threads = block.threads.len() as u32;
        self.slots[slot] = Some(block);
        for linear in 0..threads {
            self.runnable.push(tid(slot, linear));
        }
        self.progress();
        Some(threads)
    }
    /// Picks the next thread to run; `None` when the launch is over (finished, or an
    /// error was recorded, possibly by this call: a deadlock or a livelock).
    fn pick(&mut self) -> Option<Tid> {
        if self.error.is_some() {
            return None;
        }
        if self.runnable.is_empty() {
            if self.slots.iter().any(Option::is_some) {
                let (kind, message) = self.stall_report();
                self.fail(kind, message);
            }
            return None;
        }
        self.idle += 1;
        // The exact check is a scan of the runnable threads: made only once nothing has
        // changed for a while, and then every SPIN_CHECK steps.
        let spin = self.idle >= SPIN_CHECK && self.idle.is_multiple_of(SPIN_CHECK) && self.all_spinning();
        if spin || self.idle > self.options.livelock_steps {
            let (kind, message) = self.livelock_report(spin, self.idle);
            self.fail(kind, message);
            return None;
        }
        // Half the picks come from the threads made runnable last (the lanes a collective
        // just released, typically): warps then tend to run together, as on the GPU, and the
        // working set of coroutine stacks stays small. The other half is uniform.
        let n = self.runnable.len();
        let i = if n > RECENT && self.rng.next() & 1 == 0 {
            n - 1 - self.rng.below(RECENT)
        } else {
            self.rng.below(n)
        };
        let t = self.runnable.swap_remove(i);
        if let Run::ActiveMask(site) = self.thread(t).run {
            self.resolve_activemask(t, site);
        }
        Some(t)
    }
    /// Thread `t` finished: the lanes and barriers waiting for it learn so, and its block
    /// makes room for the next when it was the last. Returns the size of the block
    /// started in its slot, if one was.
    fn exit(&mut self, t: Tid) -> Option<u32> {
        self.thread_mut(t).run = Run::Exited;
        let block = self.block_mut(t);
        block.live -= 1;
        let done = block.live == 0;
        self.progress();
        if self.error.is_some() {
            return None;
        }
        self.lane_exited(t);
        self.barriers_after_exit(t);
        if done && self.error.is_none() {
            let slot = split(t).0;
            self.slots[slot] = None;
            return self.start_block(slot);
        }
        None
    }
}

/// What the scheduler and the running coroutines share.
struct Engine {
    state: RefCell<State>,
    current: Cell<Tid>,
    kernel: *const UntypedKernel,
    args: *const [*mut c_void],
}

/// What an overflowed coroutine runs (on its own stack, reset; see `overflow`): records
/// the launch's error, naming the thread.
fn stack_overflowed() {
    let message = with(|state, t| {
        format!(
            "{} overflowed its stack of {} bytes (Options::stack_bytes, the emulator's cudaLimitStackSize; a GPU thread may use up to 512 KiB): a large local array, or deep recursion. Raise Options::stack_bytes if the kernel needs more",
            state.who(t),
            state.options.stack_bytes
        )
    });
    with(|state, _| state.fail(ErrorKind::StackOverflow, message));
}

/// The unwinding payload that ends a thread after it recorded the launch's error.
struct Abort;

thread_local! {
    /// The engine of the launch running on this OS thread (null when none is).
    static ENGINE: Cell<*const Engine> = const { Cell::new(core::ptr::null()) };
    /// Whether an emulated thread is running (its panics are the launch's errors).
    static IN_KERNEL: Cell<bool> = const { Cell::new(false) };
    /// Whether the scheduler is unwinding the coroutines of a failed launch.
    static TEARDOWN: Cell<bool> = const { Cell::new(false) };
    /// The message of the last panic in an emulated thread.
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Stacks of finished coroutines, by size, for the next ones.
    static STACKS: RefCell<Vec<(usize, DefaultStack)>> = const { RefCell::new(Vec::new()) };
}

/// How many of the most recently runnable threads the biased half of the picks chooses
/// from (one warp's worth).
const RECENT: usize = 32;

/// After this many steps without progress, and every this many steps after that, the
/// scheduler checks whether every runnable thread is spinning.
const SPIN_CHECK: u64 = 4096;

/// At most this many stacks are kept for reuse per OS thread (each is a mapping with a
/// guard page, two of the kernel's memory mappings).
const POOLED_STACKS: usize = 2048;

/// Runs `f` on the launch state and the running thread.
///
/// # Panics
/// When no emulated kernel is running on this OS thread: device functions exist on the
/// host only for the emulator.
pub(crate) fn with<R>(f: impl FnOnce(&mut State, Tid) -> R) -> R {
    let engine = ENGINE.with(Cell::get);
    if engine.is_null() {
        outside_launch();
    }
    // SAFETY: ENGINE is non-null only while `run` keeps the engine alive on its stack,
    // and only code running on this OS thread (the scheduler and its coroutines) sees it.
    let engine = unsafe { &*engine };
    let mut state = engine.state.borrow_mut();
    f(&mut state, engine.current.get())
}

#[cold]
fn outside_launch() -> ! {
    panic!("warpsafe: a device function was called on the host outside an emulated kernel launch")
}

/// Whether an emulated launch is running on this OS thread.
pub(crate) fn in_launch() -> bool {
    !ENGINE.with(Cell::get).is_null()
}

/// Suspends the running coroutine until the scheduler picks it again.
fn suspend(yielder: *const Yielder<(), ()>) {
    // SAFETY: `yielder` is the running coroutine's own, recorded when it started; it
    // lives as long as the coroutine.
    unsafe { (*yielder).suspend(()) }
}

/// Ends the running thread with the launch's error (recorded by the caller or here).
pub(crate) fn abort_thread(kind: ErrorKind, message: String) -> ! {
    with(|state, _| state.fail(kind, message));
    std::panic::resume_unwind(Box::new(Abort))
}

/// A switch point: the running thread stays runnable and the scheduler picks anew.
pub(crate) fn switch_point(at: &'static Location<'static>) {
    let yielder = with(|state, t| {
        let site = state.site(t, at);
        let thread = state.thread_mut(t);
        thread.last = Some(site);
        let yielder = thread.yielder;
        state.runnable.push(t);
        yielder
    });
    suspend(yielder);
}

/// Waits after `arrive` has put the running thread in a waiting state (or made it
/// runnable with its result), then returns its result.
pub(crate) fn wait_with(
    arrive: impl FnOnce(&mut State, Tid) -> Result<(), (ErrorKind, String)>,
) -> (u64, bool) {
    let outcome = with(|state, t| arrive(state, t).map(|()| state.thread(t).yielder));
    match outcome {
        Ok(yielder) => suspend(yielder),
        Err((kind, message)) => abort_thread(kind, message),
    }
    with(|state, t| state.thread(t).result)
}

/// Opens a site for thread `t` if none is open; returns whether it did.
pub(crate) fn enter_site(via: &'static CStr, at: &'static Location<'static>, checked: bool) -> bool {
    if !in_launch() {
        return false;
    }
    with(|state, t| {
        let thread = state.thread_mut(t);
        if thread.site.is_none() {
            thread.site = Some(Site { at, via: Some(via), group_checked: checked });
            true
        } else {
            false
        }
    })
}

/// Closes the running thread's site.
pub(crate) fn leave_site() {
    if in_launch() {
        with(|state, t| state.thread_mut(t).site = None);
    }
}

/// Ends the launch with a trap at `at`.
pub(crate) fn trap(at: &'static Location<'static>) -> ! {
    let message = with(|state, t| {
        let site = state.site(t, at);
        format!("{} executed `trap` {site}", state.who(t))
    });
    abort_thread(ErrorKind::Trap, message)
}

/// Runs a launch; see [`super::launch`].
///
/// # Safety
/// As for [`super::launch`].
pub(crate) unsafe fn run(
    kernel: &UntypedKernel,
    launch: &LaunchConfig,
    cooperative: bool,
    args: &[*mut c_void],
    options: &Options,
) -> Result<(), Error> {
    let invalid =
        |message: String| Err(Error::new(ErrorKind::InvalidLaunch, options.seed, kernel.name(), message));
    if in_launch() {
        return invalid("a kernel cannot launch another kernel on the emulator".into());
    }
    if let Some(message) = launch_problem(kernel, launch, cooperative, args, options) {
        return invalid(message);
    }
    let config = &Shape::new(launch, cooperative);
    let grid_blocks = launch.blocks();
    let slots =
        if config.cooperative { grid_blocks } else { grid_blocks.min(options.max_resident_blocks as u64) };
    install_panic_hook();
    let engine = Engine {
        state: RefCell::new(State {
            kernel: kernel.name(),
            config: *config,
            options: options.clone(),
            rng: Rng(options.seed),
            slots: (0..slots).map(|_| None).collect(),
            next_block: 0,
            grid_blocks,
            runnable: Vec::new(),
            error: None,
            idle: 0,
            global_shadow: Shadow::default(),
            published: HashMap::new(),
            undefined: Undefined::default(),
            epoch: 1,
        }),
        current: Cell::new(0),
        kernel,
        args,
    };
    ENGINE.with(|e| e.set(&engine));
    // Clears ENGINE however `run` ends, a panic of the scheduler included: a later launch,
    // or a device function called outside one, must never see a dangling engine. Declared
    // before the coroutines, so that it is dropped after them (their unwinding may still
    // reach the engine).
    let published = EnginePublished;
    let mut coroutines: Vec<Vec<Option<ThreadCoroutine>>> = (0..slots).map(|_| Vec::new()).collect();
    let mut outcome = Ok(());
    for (slot, threads) in coroutines.iter_mut().enumerate() {
        let started = engine.state.borrow_mut().start_block(slot);
        if let Some(n) = started {
            outcome = outcome.and_then(|()| spawn(&engine, slot, n, options.stack_bytes, threads));
        }
    }
    if let Err(message) = outcome {
        engine.state.borrow_mut().fail(ErrorKind::InvalidLaunch, message);
    }
    loop {
        #[cfg(test)]
        if tests::PANIC_IN_SCHEDULER.with(Cell::get) {
            panic!("a planted panic of the scheduler");
        }
        let next = engine.state.borrow_mut().pick();
        let Some(t) = next else { break };
        let (slot, linear) = split(t);
        engine.current.set(t);
        let Some(coroutine) = coroutines[slot][linear as usize].as_mut() else {
            unreachable!("a runnable thread has a coroutine")
        };
        IN_KERNEL.with(|k| k.set(true));
        let result = overflow::guarded(coroutine.trap_handler(), stack_overflowed, || coroutine.resume(()));
        IN_KERNEL.with(|k| k.set(false));
        if let CoroutineResult::Return(()) = result {
            if let Some(done) = coroutines[slot][linear as usize].take() {
                recycle(done.into_stack(), options.stack_bytes);
            }
            let started = engine.state.borrow_mut().exit(t);
            if let Some(n) = started {
                if let Err(message) = spawn(&engine, slot, n, options.stack_bytes, &mut coroutines[slot]) {
                    engine.state.borrow_mut().fail(ErrorKind::InvalidLaunch, message);
                }
            }
        }
    }
    teardown(&mut coroutines, options.stack_bytes);
    drop(coroutines);
    drop(published);
    match engine.state.into_inner().error {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// While it lives, `ENGINE` names the running launch's engine; dropping it clears that.
struct EnginePublished;

impl Drop for EnginePublished {
    fn drop(&mut self) {
        ENGINE.with(|e| e.set(core::ptr::null()));
    }
}

/// Why the GPU would refuse this launch, if it would.
fn launch_problem(
    kernel: &UntypedKernel,
    config: &LaunchConfig,
    cooperative: bool,
    args: &[*mut c_void],
    options: &Options,
) -> Option<String> {
    if args.len() != kernel.param_count() {
        return Some(format!(
            "the kernel takes {} parameters but {} arguments were passed",
            kernel.param_count(),
            args.len()
        ));
    }
    if let Some(problem) = config.problem() {
        return Some(problem);
    }
    let grid_blocks = config.blocks();
    if cooperative && grid_blocks > options.max_resident_blocks as u64 {
        return Some(format!(
            "a cooperative launch of {grid_blocks} blocks, but only {} can be resident at once (Options::max_resident_blocks)",
            options.max_resident_blocks
        ));
    }
    if options.max_resident_blocks == 0 {
        return Some("Options::max_resident_blocks is 0".into());
    }
    None
}

/// The coroutine type of an emulated thread.
type ThreadCoroutine = Coroutine<(), (), (), DefaultStack>;

/// Makes the coroutines of the `n` threads of the block just started in `slot`.
fn spawn(
    engine: &Engine,
    slot: usize,
    n: u32,
    stack_bytes: usize,
    into: &mut Vec<Option<ThreadCoroutine>>,
) -> Result<(), String> {
    into.clear();
    let engine: *const Engine = engine;
    for linear in 0..n {
        let stack = take_stack(stack_bytes)
            .map_err(|e| format!("cannot allocate a {stack_bytes}-byte thread stack: {e}"))?;
        let t = tid(slot, linear);
        into.push(Some(Coroutine::with_stack(stack, move |yielder: &Yielder<(), ()>, ()| {
            thread_main(engine, t, yielder)
        })));
    }
    Ok(())
}

/// The body of every emulated thread: runs the kernel, and turns a panic into the
/// launch's error.
fn thread_main(engine: *const Engine, t: Tid, yielder: &Yielder<(), ()>) {
    // SAFETY: `run` keeps the engine alive until every coroutine has finished.
    let engine = unsafe { &*engine };
    engine.state.borrow_mut().thread_mut(t).yielder = yielder;
    // SAFETY: as above, for the kernel and the arguments `run` borrowed.
    let (kernel, args) = unsafe { (&*engine.kernel, &*engine.args) };
    // SAFETY: the launch's contract: `args` holds valid values of the kernel's
    // parameters, and the kernel's own contract holds.
    let outcome =
        std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| unsafe { (kernel.host_entry())(args) }));
    if let Err(payload) = outcome {
        if TEARDOWN.with(Cell::get) {
            std::panic::resume_unwind(payload);
        }
        if !payload.is::<Abort>() {
            let message = PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| payload_text(&*payload));
            let mut state = engine.state.borrow_mut();
            let who = state.who(t);
            let note = state.undefined_note(t).map(|n| format!(". {n}")).unwrap_or_default();
            state.fail(ErrorKind::Trap, format!("{who} panicked at {message}{note}"));
        }
    }
}

fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".into()
    }
}

/// Installs, once per process, a panic hook that keeps the messages of panics in
/// emulated threads (they become the launch's error) and passes every other panic to
/// the hook that was there before.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_KERNEL.with(Cell::get) {
                let at = info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                let text = payload_text(info.payload());
                let message = format!("{}: {text}", at.unwrap_or_else(|| "an unknown location".into()));
                PANIC.with(|p| *p.borrow_mut() = Some(message));
            } else {
                previous(info);
            }
        }));
    });
}

fn take_stack(bytes: usize) -> std::io::Result<DefaultStack> {
    let pooled = STACKS.with(|s| {
        let mut stacks = s.borrow_mut();
        let i = stacks.iter().rposition(|(size, _)| *size == bytes)?;
        Some(stacks.swap_remove(i).1)
    });
    match pooled {
        Some(stack) => Ok(stack),
        None => DefaultStack::new(bytes),
    }
}

fn recycle(stack: DefaultStack, bytes: usize) {
    STACKS.with(|s| {
        let mut stacks = s.borrow_mut();
        if stacks.len() < POOLED_STACKS {
            stacks.push((bytes, stack));
        }
    });
}

/// Unwinds every coroutine still suspended (after an error) and keeps their stacks.
fn teardown(coroutines: &mut [Vec<Option<ThreadCoroutine>>], stack_bytes: usize) {
    TEARDOWN.with(|t| t.set(true));
    for slot in coroutines.iter_mut() {
        for coroutine in slot.iter_mut() {
            if let Some(mut coroutine) = coroutine.take() {
                IN_KERNEL.with(|k| k.set(true));
                coroutine.force_unwind();
                IN_KERNEL.with(|k| k.set(false));
                recycle(coroutine.into_stack(), stack_bytes);
            }
        }
    }
    TEARDOWN.with(|t| t.set(false));
}

#[cfg(test)]
mod tests {
    use core::cell::Cell;
    use core::ffi::c_void;

    use super::in_launch;
    use crate::{launch, LaunchConfig, Options};
    use warpsafe_types::UntypedKernel;

    std::thread_local! {
        /// Makes the scheduler loop panic, to test what a panic there leaves behind.
        pub(super) static PANIC_IN_SCHEDULER: Cell<bool> = const { Cell::new(false) };
    }

    /// # Safety
    /// Takes no arguments and touches no memory.
    unsafe fn nothing(_: &[*mut c_void]) {}

    static NOTHING: UntypedKernel = UntypedKernel::__new("nothing", &[], nothing);

    #[test]
    fn a_scheduler_panic_leaves_no_dangling_engine() {
        PANIC_IN_SCHEDULER.with(|p| p.set(true));
        let run = std::panic::catch_unwind(|| {
            // SAFETY: the kernel takes no arguments.
            unsafe { launch(&NOTHING, &LaunchConfig::linear(1, 32), &[], &Options::default()) }
        });
        PANIC_IN_SCHEDULER.with(|p| p.set(false));
        assert!(run.is_err(), "the planted panic did not happen");
        assert!(!in_launch(), "the engine of the panicked launch is still published");
        // SAFETY: as above.
        let again = unsafe { launch(&NOTHING, &LaunchConfig::linear(1, 32), &[], &Options::default()) };
        assert_eq!(again, Ok(()));
    }
}
