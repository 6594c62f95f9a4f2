//! The emulated thread's view of the machine: what a backend adapter (the host side of
//! `warpsafe::arch`) calls, one function per hardware operation. Every function here runs
//! on an emulated thread's coroutine, inside [`crate::launch`]; called anywhere else it
//! panics.

use core::ffi::CStr;
use core::panic::Location;
use std::format;
use std::string::String;

use super::barrier;
pub use super::barrier::BarOp;
use super::engine;
use super::race::Kind;
pub use super::site::Order;
use super::site::{split, Tid};
use super::state::State;
use super::thread::Run;
use super::warp;
pub use super::warp::{Op, Redux, Shfl, Vote};
use super::ErrorKind;
use warpsafe_types::Dim3;
use warpsafe_types::Scope;

/// `%tid`.
pub fn thread_idx() -> Dim3 {
    engine::with(|state, t| state.thread(t).idx)
}

/// `%ntid`.
pub fn block_dim() -> Dim3 {
    engine::with(|state, _| state.config.block)
}

/// `%ctaid`.
pub fn block_idx() -> Dim3 {
    engine::with(|state, t| state.block(t).index)
}

/// `%nctaid`.
pub fn grid_dim() -> Dim3 {
    engine::with(|state, _| state.config.grid)
}

/// `%laneid`.
pub fn lane_id() -> u32 {
    engine::with(|_, t| split(t).1 % 32)
}

/// A warp collective: waits for the lanes of `mask`, returns this lane's result.
pub fn collective(
    op: Op,
    mask: u32,
    b: u32,
    c: u32,
    value: u64,
    at: &'static Location<'static>,
) -> (u64, bool) {
    engine::wait_with(|state, t| {
        let site = state.site(t, at);
        state.arrive_warp(t, warp::Wait { op, mask, b, c, value, site })
    })
}

/// `activemask`: the lanes of the warp at this same call when the scheduler resolves it.
pub fn activemask(at: &'static Location<'static>) -> u32 {
    engine::wait_with(|state, t| {
        let site = state.site(t, at);
        let thread = state.thread_mut(t);
        thread.run = Run::ActiveMask(site);
        thread.last = Some(site);
        state.runnable.push(t);
        Ok(())
    })
    .0 as u32
}

/// A block barrier: `count` is `None` for the whole block; returns the reduction.
pub fn barrier(
    id: u32,
    op: BarOp,
    count: Option<u32>,
    predicate: bool,
    at: &'static Location<'static>,
) -> (u64, bool) {
    engine::wait_with(|state, t| {
        let site = state.site(t, at);
        state.arrive_barrier(t, barrier::Wait { id, op, count, predicate, site })
    })
}

/// An atomic or ordered access (`scope` given) or a volatile one (`scope` `None`: PTX
/// treats it as relaxed at system scope) of `bytes` bytes at `addr`: a switch point, then
/// `access`, which returns its result, the value it read (or wrote, for a store), whether
/// it read and whether it changed memory; then the race check and the happens-before
/// edges of its ordering.
pub fn memory<R>(
    addr: usize,
    bytes: usize,
    order: Order,
    scope: Option<Scope>,
    at: &'static Location<'static>,
    access: impl FnOnce() -> (R, u64, bool, bool),
) -> R {
    engine::switch_point(at);
    let (result, seen, read, wrote) = access();
    let write = wrote || !read;
    let kind = match scope {
        Some(scope) => Kind::Atomic(scope),
        None => Kind::Volatile,
    };
    let checked = engine::with(|state, t| {
        state.note_access(t, addr, seen, wrote, true);
        let site = state.site(t, at);
        state.record_access(t, addr..addr + bytes, write, kind, site, |s| memory_name(s, t, addr, bytes))?;
        state.atomic_edges(t, addr, order, scope.unwrap_or(Scope::Sys), read, write);
        Ok(())
    });
    if let Err((kind, message)) = checked {
        engine::abort_thread(kind, message);
    }
    result
}

/// A fence at `scope`: a switch point, then `core::sync::atomic::fence` with `ordering`,
/// and its happens-before edges.
pub fn fence(ordering: core::sync::atomic::Ordering, scope: Scope, at: &'static Location<'static>) {
    engine::switch_point(at);
    core::sync::atomic::fence(ordering);
    engine::with(|state, t| state.fence_edges(t, scope));
}

/// A plain access of `bytes` bytes to element `index` of the global buffer at `base`
/// (through `warpsafe::global::UnsafeSlice`), at `addr`: the race check (a store's value
/// is checked with [`check_stored`]).
pub fn global_access(
    addr: usize,
    bytes: usize,
    write: bool,
    base: usize,
    index: usize,
    at: &'static Location<'static>,
) {
    let checked = engine::with(|state, t| {
        let site = state.site(t, at);
        state.record_access(t, addr..addr + bytes, write, Kind::Plain, site, |_| {
            format!("element {index} of the global buffer at {base:#x}")
        })
    });
    if let Err((kind, message)) = checked {
        engine::abort_thread(kind, message);
    }
}

/// How a report names the memory at `addr`: a shared element, or a global address.
fn memory_name(state: &State, t: Tid, addr: usize, bytes: usize) -> String {
    match state.block(t).allocation_of(addr) {
        Some(_) => shared_element(state, t, addr, bytes),
        None => format!("global address {addr:#x}"),
    }
}

/// The calling block's copy of a static shared array, allocated on first use.
pub fn shared_static(key: usize, bytes: usize, align: usize, label: impl FnOnce() -> String) -> *mut u8 {
    let outcome = engine::with(|state, t| state.block_mut(t).shared_static(key, bytes, align, label));
    match outcome {
        Ok(ptr) => ptr,
        Err((kind, message)) => engine::abort_thread(kind, message),
    }
}

/// The calling block's dynamic shared memory and its size in bytes.
pub fn shared_dynamic() -> (*mut u8, usize) {
    let outcome = engine::with(|state, t| state.block_mut(t).shared_dynamic());
    match outcome {
        Ok(window) => window,
        Err(message) => engine::abort_thread(ErrorKind::Trap, message),
    }
}

/// Ends the launch with [`ErrorKind::SharedOutOfBounds`] unless the `bytes` bytes at
/// `addr` lie in one shared allocation of the calling block (a static array or the
/// dynamic window), before anything touches them: a shared access through a pointer
/// (`read_unchecked`, a shared atomic) is checked as compute-sanitizer's memcheck checks
/// it on the GPU. A pointer that lands inside another allocation of the block passes, as
/// it does there.
pub fn check_shared_bounds(addr: usize, bytes: usize, at: &'static Location<'static>) {
    let outside = engine::with(|state, t| {
        let block = state.block(t);
        let inside = block.allocation_of(addr).is_some_and(|a| a.contains(addr + bytes.max(1) - 1));
        (!inside).then(|| {
            format!(
                "{} accessed {bytes} bytes at shared address {addr:#x}, outside every shared allocation of its \
                 block (its static arrays and its {} bytes of dynamic shared memory) {}",
                state.who(t),
                block.dynamic_bytes,
                state.site(t, at)
            )
        })
    });
    if let Some(message) = outside {
        engine::abort_thread(ErrorKind::SharedOutOfBounds, message);
    }
}

/// A plain shared-memory access of `bytes` bytes at `addr`, a write of `stored` when it
/// is `Some`: the bounds check ([`check_shared_bounds`]), a switch point, the race check,
/// and the undefined-value checks (a store of an undefined value is reported; a read of
/// bytes no thread wrote produces one); `access` then performs it.
pub fn shared_access<R>(
    addr: usize,
    bytes: usize,
    stored: Option<&[u8]>,
    at: &'static Location<'static>,
    access: impl FnOnce() -> R,
) -> R {
    let write = stored.is_some();
    check_shared_bounds(addr, bytes, at);
    engine::switch_point(at);
    let checked = engine::with(|state, t| {
        let site = state.site(t, at);
        state.record_access(t, addr..addr + bytes, write, Kind::Plain, site, |s| {
            shared_element(s, t, addr, bytes)
        })
    });
    if let Err((kind, message)) = checked {
        engine::abort_thread(kind, message);
    }
    if let Some(value) = stored {
        let checked = engine::with(|state, t| {
            state.check_defined(t, value, || {
                format!("stores to {} {}", shared_element(state, t, addr, bytes), state.site(t, at))
            })
        });
        if let Err((kind, message)) = checked {
            engine::abort_thread(kind, message);
        }
    }
    let result = access();
    let unwritten = engine::with(|state, t| {
        state.note_access(t, addr, 0, write, false);
        let allocation = state.block_mut(t).allocation_of_mut(addr)?;
        let offset = allocation.offset(addr);
        if write {
            allocation.mark_written(offset, bytes);
            return None;
        }
        allocation.first_unwritten(offset, bytes)?;
        let what = format!(
            "{} read {} {} before any thread of the block wrote it",
            state.who(t),
            shared_element(state, t, addr, bytes),
            state.site(t, at)
        );
        if state.options.undefined_at_source {
            return Some(what);
        }
        state.undefined_produced(t, what);
        None
    });
    if let Some(message) = unwritten {
        engine::abort_thread(ErrorKind::UninitializedValue, message);
    }
    result
}

/// A store of `value` (through a typed global view, or an atomic's, volatile or ordered
/// store's operand): ends the launch when it carries an undefined value (see
/// [`crate::POISON`]).
pub fn check_stored(value: &[u8], at: &'static Location<'static>) {
    let checked =
        engine::with(|state, t| state.check_defined(t, value, || format!("stores {}", state.site(t, at))));
    if let Err((kind, message)) = checked {
        engine::abort_thread(kind, message);
    }
}

/// "element 7 of `SLOTS` (declared at file:line)": the shared element of `bytes` bytes at
/// `addr` in thread `t`'s block.
fn shared_element(state: &State, t: Tid, addr: usize, bytes: usize) -> String {
    match state.block(t).allocation_of(addr) {
        Some(a) => format!("element {} of {}", a.offset(addr) / bytes.max(1), a.label),
        None => format!("shared address {addr:#x}"),
    }
}

/// A shared-memory index past the end of its array: ends the launch.
pub fn index_out_of_bounds(
    memory: warpsafe_types::Memory,
    index: usize,
    len: usize,
    at: &'static Location<'static>,
) -> ! {
    let (kind, what) = match memory {
        warpsafe_types::Memory::Shared => (ErrorKind::SharedOutOfBounds, "a shared array"),
        warpsafe_types::Memory::Global => (ErrorKind::GlobalOutOfBounds, "a global buffer"),
    };
    let message = engine::with(|state, t| {
        let site = state.site(t, at);
        format!("{} accessed index {index} of {what} of length {len} {site}", state.who(t))
    });
    engine::abort_thread(kind, message)
}

/// A shuffle with a width that is not a power of two in `1..=32`: ends the launch.
pub fn invalid_shuffle_width(width: u32, at: &'static Location<'static>) -> ! {
    let message = engine::with(|state, t| {
        let site = state.site(t, at);
        format!(
            "{} shuffled with width {width} {site}: the width must be a power of two in 1..=32 (PTX leaves the source lane unspecified otherwise); hint: pass the segment size, e.g. 16 for half-warp segments",
            state.who(t)
        )
    });
    engine::abort_thread(ErrorKind::InvalidShuffleWidth, message)
}

/// A grid-wide wait (a grid barrier) at `at`: ends the launch with
/// [`ErrorKind::NotCooperative`] when the launch is not cooperative, since blocks that
/// wait for the whole grid keep the blocks that are not resident yet from ever starting.
pub fn requires_cooperative_launch(at: &'static Location<'static>) {
    let problem = engine::with(|state, t| {
        (!state.config.cooperative).then(|| {
            let site = state.site(t, at);
            format!(
                "{} waits for the whole grid {site}, but the launch is not cooperative: its {} blocks are not guaranteed to be resident at once (the emulator keeps {} resident, Options::max_resident_blocks), so blocks that wait can keep the others from starting; hint: launch it with `launch_cooperative`, with a grid that fits (`Device::max_cooperative_blocks`)",
                state.who(t),
                state.grid_blocks(),
                state.options.max_resident_blocks
            )
        })
    });
    if let Some(message) = problem {
        engine::abort_thread(ErrorKind::NotCooperative, message);
    }
}

/// A kernel was entered with the wrong number of arguments.
pub fn bad_arguments(expected: usize, got: usize) -> ! {
    engine::abort_thread(
        ErrorKind::InvalidLaunch,
        format!("the kernel takes {expected} parameters but {got} arguments were passed"),
    )
}

/// An atomic or volatile access at a misaligned address: the GPU faults.
pub fn misaligned(addr: usize, bytes: usize, at: &'static Location<'static>) -> ! {
    let message = engine::with(|state, t| {
        let site = state.site(t, at);
        format!("{} made a {bytes}-byte atomic or volatile access at {addr:#x}, which is not aligned to {bytes} bytes, {site}", state.who(t))
    });
    engine::abort_thread(ErrorKind::Trap, message)
}

/// `trap`.
pub fn trap(at: &'static Location<'static>) -> ! {
    engine::trap(at)
}

/// Opens a site (see `crate::arch::site`); returns whether it did.
/// `checked`: a group collective whose presence check the GPU makes with `activemask`.
pub fn enter_site(via: &'static CStr, at: &'static Location<'static>, checked: bool) -> bool {
    engine::enter_site(via, at, checked)
}

/// Closes the site opened by `enter_site`.
pub fn leave_site() {
    engine::leave_site()
}
