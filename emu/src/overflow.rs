//! Stack overflow of an emulated thread, turned into the launch's error instead of a crash.
//!
//! Every emulated thread runs on its own coroutine stack with a guard page below it
//! (corosensei's `DefaultStack`, mapped lazily: a large stack costs address space, not
//! memory, until it is used). A thread that runs past its stack faults on the guard page.
//! On Linux (x86_64, aarch64) a `SIGSEGV`/`SIGBUS` handler, running on an alternate signal
//! stack, checks whether the faulting stack pointer lies in the running coroutine's stack;
//! if so it redirects that coroutine (corosensei's trap-handler support) to a function
//! that records [`crate::ErrorKind::StackOverflow`] and ends the coroutine, and the launch
//! returns the error. Any other fault goes to the handler that was installed before (the
//! Rust runtime's, or the default action). The overflowed thread's frames are abandoned,
//! not unwound: what they owned leaks.
//!
//! Elsewhere an overflow still kills the process (as a native stack overflow does).

use core::cell::Cell;

use corosensei::trap::CoroutineTrapHandler;

std::thread_local! {
    /// The trap handler of the coroutine running on this OS thread, while one runs.
    static RUNNING: Cell<Option<CoroutineTrapHandler<()>>> = const { Cell::new(None) };
    /// What that coroutine runs when its stack overflows.
    static ON_OVERFLOW: Cell<Option<fn()>> = const { Cell::new(None) };
}

/// Runs `resume` (resuming a coroutine whose trap handler is `handler`) so that an
/// overflow of its stack is caught: the coroutine then continues in `on_overflow`, on its
/// own stack (reset), which records the error and returns to end the coroutine.
pub(crate) fn guarded<R>(
    handler: CoroutineTrapHandler<()>,
    on_overflow: fn(),
    resume: impl FnOnce() -> R,
) -> R {
    platform::install();
    RUNNING.with(|r| r.set(Some(handler)));
    ON_OVERFLOW.with(|o| o.set(Some(on_overflow)));
    let result = resume();
    RUNNING.with(|r| r.set(None));
    result
}

/// Where an overflowed coroutine continues: the `on_overflow` of [`guarded`].
fn overflowed() {
    if let Some(on_overflow) = ON_OVERFLOW.with(Cell::get) {
        on_overflow();
    }
}

#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
mod platform {
    use core::mem::MaybeUninit;
    use std::sync::Once;

    use super::{overflowed, RUNNING};

    /// The handlers that were installed before ours, for SIGSEGV and SIGBUS.
    static mut PREVIOUS: [MaybeUninit<libc::sigaction>; 2] = [MaybeUninit::uninit(), MaybeUninit::uninit()];

    /// Bytes of each OS thread's alternate signal stack.
    const ALT_STACK_BYTES: usize = 64 * 1024;

    std::thread_local! {
        static ALT_STACK: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
    }

    /// Installs the handler (once per process) and an alternate signal stack (once per OS
    /// thread that launches), so that the handler runs even when the stack overflowed.
    pub(super) fn install() {
        if !ALT_STACK.with(|a| a.replace(true)) {
            // The alternate stack lives as long as the OS thread: leaked on purpose.
            let stack = Box::leak(vec![0u8; ALT_STACK_BYTES].into_boxed_slice());
            let alt =
                libc::stack_t { ss_sp: stack.as_mut_ptr().cast(), ss_flags: 0, ss_size: ALT_STACK_BYTES };
            // SAFETY: `alt` describes memory that stays valid for the thread's lifetime.
            unsafe { libc::sigaltstack(&alt, core::ptr::null_mut()) };
        }
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            for (i, signal) in [libc::SIGSEGV, libc::SIGBUS].into_iter().enumerate() {
                // SAFETY: a zeroed sigaction is a valid value to fill in; the handler has
                // the SA_SIGINFO signature; PREVIOUS[i] is written once, here, before any
                // signal can reach our handler (it is installed by this very call).
                unsafe {
                    let mut action: libc::sigaction = core::mem::zeroed();
                    action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                    action.sa_sigaction = handler as *const () as usize;
                    libc::sigemptyset(&mut action.sa_mask);
                    let previous = (&raw mut PREVIOUS[i]).cast::<libc::sigaction>();
                    libc::sigaction(signal, &action, previous);
                }
            }
        });
    }

    /// The signal handler: an overflow of the running coroutine's stack redirects it to
    /// `overflowed`; anything else goes to the previous handler.
    extern "C" fn handler(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
        let running = RUNNING.with(|r| r.get());
        // SAFETY: the kernel passes a valid ucontext_t for an SA_SIGINFO handler.
        let context = unsafe { &mut *context.cast::<libc::ucontext_t>() };
        let sp = stack_pointer(context);
        match running {
            Some(trap) if trap.stack_ptr_in_bounds(sp) => {
                // SAFETY: the fault happened on the coroutine's own stack (checked), and the
                // registers are set exactly as `setup_trap_handler` asks; `overflowed` runs
                // after this handler returns, on the reset coroutine stack.
                let regs = unsafe { trap.setup_trap_handler(overflowed) };
                redirect(context, regs);
            }
            _ => previous(signal, info, context),
        }
    }

    /// Passes a fault that is not ours to the handler installed before: calls it, or
    /// restores the default action so that the fault, repeated on return, ends the
    /// process as it would have.
    fn previous(signal: libc::c_int, info: *mut libc::siginfo_t, context: &mut libc::ucontext_t) {
        let i = usize::from(signal != libc::SIGSEGV);
        // SAFETY: PREVIOUS[i] was written by `install` before our handler was installed.
        let previous = unsafe { &*(&raw const PREVIOUS[i]).cast::<libc::sigaction>() };
        let f = previous.sa_sigaction;
        if f == libc::SIG_DFL || f == libc::SIG_IGN {
            // SAFETY: restoring the saved disposition of this signal.
            unsafe { libc::sigaction(signal, previous, core::ptr::null_mut()) };
        } else if previous.sa_flags & libc::SA_SIGINFO != 0 {
            // SAFETY: an SA_SIGINFO handler takes these three arguments.
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { core::mem::transmute(f) };
            f(signal, info, (context as *mut libc::ucontext_t).cast());
        } else {
            // SAFETY: a plain handler takes the signal number.
            let f: extern "C" fn(libc::c_int) = unsafe { core::mem::transmute(f) };
            f(signal);
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn stack_pointer(context: &libc::ucontext_t) -> usize {
        context.uc_mcontext.gregs[libc::REG_RSP as usize] as usize
    }

    #[cfg(target_arch = "x86_64")]
    fn redirect(context: &mut libc::ucontext_t, regs: corosensei::trap::TrapHandlerRegs) {
        let corosensei::trap::TrapHandlerRegs { rip, rsp, rbp, rdi, rsi } = regs;
        let gregs = &mut context.uc_mcontext.gregs;
        gregs[libc::REG_RIP as usize] = rip as i64;
        gregs[libc::REG_RSP as usize] = rsp as i64;
        gregs[libc::REG_RBP as usize] = rbp as i64;
        gregs[libc::REG_RDI as usize] = rdi as i64;
        gregs[libc::REG_RSI as usize] = rsi as i64;
    }

    #[cfg(target_arch = "aarch64")]
    fn stack_pointer(context: &libc::ucontext_t) -> usize {
        context.uc_mcontext.sp as usize
    }

    #[cfg(target_arch = "aarch64")]
    fn redirect(context: &mut libc::ucontext_t, regs: corosensei::trap::TrapHandlerRegs) {
        let corosensei::trap::TrapHandlerRegs { pc, sp, x0, x1, x29, lr } = regs;
        context.uc_mcontext.pc = pc;
        context.uc_mcontext.sp = sp;
        context.uc_mcontext.regs[0] = x0;
        context.uc_mcontext.regs[1] = x1;
        context.uc_mcontext.regs[29] = x29;
        context.uc_mcontext.regs[30] = lr;
    }
}

#[cfg(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))))]
mod platform {
    /// Nothing: on this platform an overflow kills the process.
    pub(super) fn install() {}
}
