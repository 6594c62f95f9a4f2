//! The host backend of `arch`: every function has the name and signature of its GPU
//! counterpart (see the `nvptx` side for the hardware rules) and runs on the CPU
//! emulator (`warpsafe_emu`), which checks those rules. The functions may only be called
//! from a kernel that the emulator is running; elsewhere they panic.

mod check;
mod declare;
mod memory;
mod printf;
mod warp;
pub use check::*;
pub use declare::*;
pub use memory::*;
pub use printf::*;
pub use warp::*;

use core::panic::Location;

use super::Dim3;
use warpsafe_emu::device as emu;

/// `%tid`: this thread's index within its block.
#[inline]
pub fn thread_idx() -> Dim3 {
    emu::thread_idx()
}

/// `%ntid`: the block's shape.
#[inline]
pub fn block_dim() -> Dim3 {
    emu::block_dim()
}

/// `%ctaid`: this block's index within the grid.
#[inline]
pub fn block_idx() -> Dim3 {
    emu::block_idx()
}

/// `%nctaid`: the grid's shape in blocks.
#[inline]
pub fn grid_dim() -> Dim3 {
    emu::grid_dim()
}

/// `%laneid`: this thread's lane within its warp, `0..32`.
#[inline]
pub fn lane_id() -> u32 {
    emu::lane_id()
}

/// `fns.b32`: the lane of the `n`-th (from 0) set bit of `mask`, counting up from lane 0;
/// 32 when `mask` has at most `n` bits set.
#[inline]
pub fn nth_set_lane(mask: u32, n: u32) -> u32 {
    let mut rest = mask;
    for _ in 0..n {
        rest &= rest.wrapping_sub(1);
    }
    rest.trailing_zeros()
}

/// `trap`: ends the launch with `warpsafe_emu::ErrorKind::Trap`, naming the caller's location.
#[inline]
#[track_caller]
pub fn trap() -> ! {
    emu::trap(Location::caller())
}
