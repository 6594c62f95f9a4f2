//! Safe warp groups: collectives whose mask cannot be wrong.
//!
//! Since Volta a warp's lanes are scheduled independently, so every warp collective names
//! the lanes that take part in a 32-bit mask, and it is undefined behaviour when a lane of
//! that mask is not there (it exited, or it is on another path) or when the caller is not
//! in it. The raw layer ([`crate::warp`]) leaves that to the caller as `unsafe`. Here a
//! *group* carries its mask, made once from the block's geometry, the active mask or a
//! vote, so:
//!
//! - a caller never writes a mask: a group's collectives always use the mask it was made
//!   from, and that mask always contains the caller (it is made from the caller's lane).
//!   [`Group`] is sealed, so the groups of this module are the only ones: a type made
//!   elsewhere cannot hand the hardware a mask that leaves out its caller, which PTX makes
//!   undefined behaviour for every `.sync` collective;
//! - what cannot be proven when the kernel is compiled, that every lane of the group is
//!   present at the collective, is checked when it runs, like a bounds check: before each
//!   collective the group compares its mask with `activemask` (and checks that the caller
//!   is in the mask, which no group of this module can break). If a lane is missing, the
//!   kernel prints `warpsafe: <collective> on a group whose lanes are not all present`
//!   with the source location, block, warp, lane, the group's mask and the lanes present,
//!   then executes `trap`, which ends the launch (the host reports
//!   `Error::KernelFailed` naming the kernel). It never hangs and never returns garbage.
//!
//! On the CPU emulator (`warpsafe::emu`) the check is exact instead: the emulator knows
//! which lane waits at which collective, so a lane that never arrives is reported (as a
//! deadlock or a mismatch naming the group collective, its source location and the
//! lanes), while lanes that arrive by paths that never join simply meet (the GPU's
//! `activemask` test traps on those, see below).
//!
//! The check costs one `activemask`, a compare and a not-taken branch per collective. It
//! can be left out only in the code that says so, with `unsafe`:
//! [`Group::assume_present`] turns a group into an [`Unchecked`] one, whose collectives
//! skip the check, and whose caller promises instead that every lane of the group reaches
//! each of them, as in CUDA C++. No build flag removes the check: a crate's safety cannot
//! depend on a flag that the crates using it cannot see.
//!
//! `activemask` reports the lanes converged with the caller. Lanes that reach the same
//! collective through structured control flow (an `if` that joins again, a loop that
//! ends) are converged there, since the compiler reconverges at the join. A kernel that
//! sends lanes to a collective by different paths that never join will trap even if every
//! lane would have arrived: call such collectives through the raw layer.
//!
//! # Groups
//! | group | made by | lanes |
//! | --- | --- | --- |
//! | [`Warp`] | [`Warp::this`] | every lane of the caller's warp that exists in the block (fewer than 32 in the last warp of a block whose size is not a multiple of 32) |
//! | [`Tile<N>`] | [`Warp::tiles`] | the caller's aligned segment of `N` lanes, `N` in 1, 2, 4, 8, 16, 32, checked at compile time |
//! | [`Coalesced`] | [`Coalesced::active`] | the lanes converged with the caller right now (CUDA's `coalesced_threads()`) |
//! | [`Partition`] | [`Group::labeled_partition`], [`Group::binary_partition`] | the lanes of a group with the same label (`match.any`) or predicate (`vote.ballot`) |
//!
//! Ranks: a lane's rank in a group is the number of group lanes below it, so ranks run
//! `0..size()` in lane order. Shuffles address ranks, not lanes; a source rank outside
//! the group returns the caller's own value, as `shfl.sync` does past its segment. The
//! bit masks a group returns ([`Group::ballot`], [`Group::match_any`],
//! [`Group::match_all`]) count ranks too, as CUDA's cooperative-groups tiles do: bit `r`
//! stands for the lane of rank `r`, so `g.shfl(x, g.ballot(p).trailing_zeros())` reads
//! the lowest-ranked lane where `p` holds, in a tile or a partition as in a whole warp.
//! Only [`Group::mask`] names warp lanes. The raw layer ([`crate::warp`]) is lane-based
//! throughout: `warp::ballot_sync` sets bit `i` for lane `i`.
//!
//! # Divergence patterns
//! - The Volta partial-mask reduction: instead of reducing inside a branch over the lanes
//!   that took it, stay converged and give the others the operator's identity:
//!   [`Warp::reduce_where`].
//! - Ballot in a loop: a loop whose trip count differs between lanes must not vote inside
//!   the divergent part. Make the loop condition the same for the whole group (loop to the
//!   group's maximum) and vote on the in-range predicate:
//!   ```
//!   use warpsafe::global::{DisjointSlice, Slice};
//!   use warpsafe::group::{Group, Warp};
//!   warpsafe::kernel! {
//!       /// `out[t]`: the positive elements of `data` that thread `t`'s warp counted
//!       /// (one warp walks all of `data`, 32 elements a step).
//!       pub fn count_positive(data: Slice<i32>, out: DisjointSlice<u32>) {
//!           let warp = Warp::this();
//!           let (mut i, mut count) = (warp.thread_rank() as usize, 0);
//!           while warp.any(i < data.len()) { // same answer in every lane: no divergence
//!               count += warp.ballot(i < data.len() && data[i] > 0).count_ones();
//!               i += 32;
//!           }
//!           if let Some(t) = out.get(warpsafe::thread::index()) {
//!               out.write(t, count);
//!           }
//!       }
//!   }
//!   # fn main() -> Result<(), warpsafe_host::Error> {
//!   # static PROGRAM: warpsafe_host::Program =
//!   #     warpsafe_host::Program::new("doc", &[]).with_kernels(&[count_positive.untyped()]);
//!   # let device = warpsafe_host::Device::emulator();
//!   # let f = device.load(&PROGRAM)?.kernel(&count_positive)?;
//!   # let data = device.upload(&(0..70).map(|i| if i % 3 == 0 { 5 } else { -1 }).collect::<Vec<i32>>())?;
//!   # let mut out = device.alloc_zeroed::<u32>(32)?;
//!   # device.launch(&f, warpsafe_host::LaunchConfig::linear(1, 32), (&data, &mut out))?;
//!   # assert_eq!(out.download()?, vec![24; 32]);
//!   # Ok(())
//!   # }
//!   ```
//! - Warp-synchronous exchanges through shared memory: call [`Group::sync`] between the
//!   writes and the reads of each step; lanes are not in lockstep.

use core::ffi::CStr;
use core::panic::Location;

use bytemuck::Pod;

use crate::arch::{self, FULL_MASK, WARP_SIZE};
use crate::op::Operator;
use crate::thread;
use crate::warp::{self, MatchValue};

mod sealed {
    /// Implemented by this module's groups and by nothing else: every safe collective
    /// hands a group's mask to a `.sync` instruction, so only masks made here, which hold
    /// their caller, may reach one.
    pub trait Sealed {
        /// Whether the group's collectives check that its lanes are present: `false` only
        /// for [`super::Unchecked`].
        const CHECKED: bool = true;
        /// Whether the group's mask is always one run of consecutive lanes (a [`super::Warp`]:
        /// lanes `0..n`; a [`super::Tile`]: `N` aligned lanes), so that the lane of rank `r`
        /// is the lowest lane plus `r`, found without `fns`.
        const ONE_RUN: bool = false;
    }
}

/// Traps with a message when a lane of `mask` is not converged with the caller, or when
/// the caller is not in `mask` (see the module docs): [`arch::lanes_present`] is
/// `activemask` on the GPU, and all lanes on the emulator, which checks each collective's
/// rendezvous exactly instead. Nothing is checked for an [`Unchecked`] group `G`.
/// The returned site names the group collective and its caller in the emulator's
/// messages while the collective runs.
#[inline(always)]
#[track_caller]
fn check_present<G: sealed::Sealed>(mask: u32, collective: &'static CStr) -> arch::Site {
    if G::CHECKED {
        let present = arch::lanes_present();
        // The caller's own bit is always present, so this equals `mask` exactly when every
        // lane of `mask` is present and the caller is one of them.
        if present & mask | warp::lanemask_eq() != mask {
            report_missing_lanes(collective, mask, present, Location::caller());
        }
    }
    if G::CHECKED {
        arch::checked_site(collective, Location::caller())
    } else {
        arch::site(collective, Location::caller())
    }
}

/// The arguments of the misuse message, laid out as CUDA's `vprintf` reads them.
#[repr(C)]
struct MisuseArgs {
    collective: *const u8,
    file: *const u8,
    line: u32,
    block: [u32; 3],
    warp: u32,
    lane: u32,
    mask: u32,
    present: u32,
}

#[cold]
#[inline(never)]
fn report_missing_lanes(collective: &CStr, mask: u32, present: u32, at: &Location<'_>) -> ! {
    let mut file = [0u8; 160];
    arch::c_file_name(at, &mut file);
    let block = thread::block_idx();
    let args = MisuseArgs {
        collective: collective.as_ptr().cast(),
        file: file.as_ptr(),
        line: at.line(),
        block: [block.x, block.y, block.z],
        warp: thread::warp_idx(),
        lane: arch::lane_id(),
        mask,
        present,
    };
    // SAFETY: the format's conversions match MisuseArgs field by field: two strings
    // (NUL-terminated pointers), then eight u32s; repr(C) aligns each to its size.
    unsafe {
        arch::vprintf(
            c"warpsafe: %s on a group whose lanes are not all present, at %s:%u: block (%u, %u, %u), warp %u, lane %u: group mask 0x%08x, lanes present 0x%08x\n",
            (&args as *const MisuseArgs).cast(),
        );
    }
    arch::trap()
}

/// The lane holding rank `rank` of `mask`, a mask of a group `G` (the caller's own lane
/// when `rank` is out of range, so that a shuffle from it returns the caller's value). For
/// a group whose mask is one run of lanes an add, which the compiler can move out of a
/// loop, else `fns`. (In the fixed form's warp rows a branch and an `fns` came before
/// every tile shuffle; without them, and with each vector folded from its first element,
/// the rows ran 3-6 % faster on an H200, 2026-11-28: `f32` of length 32 at 2^24 20.1
/// against 21.3 us, `bench/results/2026-11-28-h200/segmented-rows-butterfly.txt`.)
#[inline(always)]
fn lane_of_rank<G: sealed::Sealed>(mask: u32, rank: u32) -> u32 {
    if rank >= mask.count_ones() {
        arch::lane_id()
    } else if G::ONE_RUN {
        mask.trailing_zeros() + rank
    } else if mask == FULL_MASK {
        rank
    } else {
        arch::nth_set_lane(mask, rank)
    }
}

/// The bits of `lanes` (bit `i` = lane `i`) that are lanes of `mask`, renumbered by rank
/// in `mask`: bit `r` of the result is the bit of the lane of rank `r`. A shift when
/// `mask` is one run of lanes (a warp, a tile), else [`compress`].
#[inline(always)]
fn ranks_of(lanes: u32, mask: u32) -> u32 {
    let base = mask.trailing_zeros();
    let run = mask.wrapping_shr(base);
    if run & run.wrapping_add(1) == 0 {
        (lanes & mask).wrapping_shr(base)
    } else {
        compress(lanes, mask)
    }
}

/// Gathers the bits of `x` at the set bits of `m` into the low bits, in order (a parallel
/// bit extract, x86's `pext`, which PTX lacks): Hacker's Delight's `compress`, five steps
/// of shifts and masks, without branches. Step `i` moves each bit of `m` right by `2^i`
/// when bit `i` of the count of clear bits of `m` below it is set.
#[inline(always)]
fn compress(x: u32, m: u32) -> u32 {
    let mut x = x & m;
    let mut m = m;
    // Bit j of `mk`: the bit below j is clear in `m`.
    let mut mk = !m << 1;
    for i in 0..5 {
        // Parallel suffix (prefix XOR from below): bit j is the parity of the clear bits
        // of `m` below j that are still to move.
        let mut mp = mk ^ (mk << 1);
        mp ^= mp << 2;
        mp ^= mp << 4;
        mp ^= mp << 8;
        mp ^= mp << 16;
        let moving = mp & m;
        m = (m ^ moving) | (moving >> (1 << i));
        let t = x & moving;
        x = (x ^ t) | (t >> (1 << i));
        mk &= !mp;
    }
    x
}

/// `vote.ballot` over `group`, lane-based (bit `i` = lane `i`), checked.
#[inline(always)]
#[track_caller]
fn ballot_lanes<G: Group>(group: &G, predicate: bool) -> u32 {
    let _site = check_present::<G>(group.mask(), c"ballot");
    // SAFETY: the caller is in the mask (every group's mask holds its caller) and every
    // lane of it is present (checked, or promised through `assume_present`).
    unsafe { warp::ballot_sync(group.mask(), predicate) }
}

/// `match.any` over `group`, lane-based (bit `i` = lane `i`), checked.
#[inline(always)]
#[track_caller]
fn match_any_lanes<G: Group, T: MatchValue>(group: &G, value: T) -> u32 {
    let _site = check_present::<G>(group.mask(), c"match_any");
    // SAFETY: as in `ballot_lanes`.
    unsafe { warp::match_any_sync(group.mask(), value) }
}

/// The collectives every group offers. All lanes of the group must call each collective
/// together; the group checks this (see the module docs).
///
/// Sealed: the groups are [`Warp`], [`Tile`], [`Coalesced`], [`Partition`] and
/// [`Unchecked`]. Each collective hands [`Group::mask`] to a `.sync` instruction, and
/// PTX makes it undefined behaviour when the executing lane is not in that mask; these
/// types make their masks from the caller's own lane, a type made elsewhere could not be
/// trusted to.
pub trait Group: Copy + sealed::Sealed {
    /// The lanes of the warp in this group (bit `i` is lane `i`); contains the caller.
    /// The only lane-based mask of a group: [`Group::ballot`] and the matches count
    /// ranks.
    fn mask(&self) -> u32;

    /// Number of lanes in the group.
    #[inline(always)]
    fn size(&self) -> u32 {
        self.mask().count_ones()
    }

    /// The caller's rank: how many group lanes are below it (`0..size()`).
    #[inline(always)]
    fn thread_rank(&self) -> u32 {
        (self.mask() & warp::lanemask_lt()).count_ones()
    }

    /// `bar.warp.sync` over the group: the group's lanes wait for each other, and their
    /// shared- and global-memory writes before it are visible to each other after it.
    /// Needed between the steps of an exchange through shared memory.
    #[inline(always)]
    #[track_caller]
    fn sync(&self) {
        let _site = check_present::<Self>(self.mask(), c"sync");
        // SAFETY: the caller is in the mask (every group's mask holds its caller) and every
        // lane of it is present (checked, or promised through `assume_present`).
        unsafe { warp::sync_warp(self.mask()) }
    }

    /// `vote.ballot`: bit `r` is set when the lane of rank `r` passed `true` (bits from
    /// `size()` up are clear). Rank-based, so `ballot(p).trailing_zeros()` is the lowest
    /// rank where `p` holds, ready for [`Group::shfl`], and `count_ones()` of the bits
    /// below the caller's rank is its rank among the lanes that passed `true`.
    #[inline(always)]
    #[track_caller]
    fn ballot(&self, predicate: bool) -> u32 {
        ranks_of(ballot_lanes(self, predicate), self.mask())
    }

    /// `vote.any`: whether any lane of the group passed `true`.
    #[inline(always)]
    #[track_caller]
    fn any(&self, predicate: bool) -> bool {
        let _site = check_present::<Self>(self.mask(), c"any");
        // SAFETY: as for `sync`.
        unsafe { warp::any_sync(self.mask(), predicate) }
    }

    /// `vote.all`: whether every lane of the group passed `true`.
    #[inline(always)]
    #[track_caller]
    fn all(&self, predicate: bool) -> bool {
        let _site = check_present::<Self>(self.mask(), c"all");
        // SAFETY: as for `sync`.
        unsafe { warp::all_sync(self.mask(), predicate) }
    }

    /// `match.any`: the ranks of the group whose `value` equals the caller's, bit for bit
    /// (bit `r` for rank `r`, as in [`Group::ballot`]; the caller's own rank is set).
    #[inline(always)]
    #[track_caller]
    fn match_any<T: MatchValue>(&self, value: T) -> u32 {
        ranks_of(match_any_lanes(self, value), self.mask())
    }

    /// `match.all`: `Some(ranks)` when every lane of the group passed the same `value`,
    /// with bits `0..size()` set (rank-based, as in [`Group::ballot`]).
    #[inline(always)]
    #[track_caller]
    fn match_all<T: MatchValue>(&self, value: T) -> Option<u32> {
        let _site = check_present::<Self>(self.mask(), c"match_all");
        // SAFETY: as for `sync`.
        let lanes = unsafe { warp::match_all_sync(self.mask(), value) };
        lanes.map(|lanes| ranks_of(lanes, self.mask()))
    }

    /// The `value` of the lane of rank `src_rank` (the caller's own value when `src_rank`
    /// is not a rank of the group).
    #[inline(always)]
    #[track_caller]
    fn shfl<T: Pod>(&self, value: T, src_rank: u32) -> T {
        let _site = check_present::<Self>(self.mask(), c"shfl");
        let src = lane_of_rank::<Self>(self.mask(), src_rank);
        // SAFETY: as for `sync`; `src` is a lane of the mask or the caller itself.
        unsafe { warp::shfl_idx_sync(self.mask(), value, src, WARP_SIZE) }
    }

    /// The `value` of the lane `delta` ranks below (the caller's own for ranks below
    /// `delta`).
    #[inline(always)]
    #[track_caller]
    fn shfl_up<T: Pod>(&self, value: T, delta: u32) -> T {
        let _site = check_present::<Self>(self.mask(), c"shfl_up");
        let rank = self.thread_rank();
        let src =
            if rank >= delta { lane_of_rank::<Self>(self.mask(), rank - delta) } else { arch::lane_id() };
        // SAFETY: as for `shfl`.
        unsafe { warp::shfl_idx_sync(self.mask(), value, src, WARP_SIZE) }
    }

    /// The `value` of the lane `delta` ranks above (the caller's own past the last rank).
    #[inline(always)]
    #[track_caller]
    fn shfl_down<T: Pod>(&self, value: T, delta: u32) -> T {
        let _site = check_present::<Self>(self.mask(), c"shfl_down");
        let src = lane_of_rank::<Self>(self.mask(), self.thread_rank().saturating_add(delta));
        // SAFETY: as for `shfl`.
        unsafe { warp::shfl_idx_sync(self.mask(), value, src, WARP_SIZE) }
    }

    /// The `value` of the lane of rank `thread_rank() ^ lane_mask` (the caller's own when
    /// that is not a rank of the group).
    #[inline(always)]
    #[track_caller]
    fn shfl_xor<T: Pod>(&self, value: T, lane_mask: u32) -> T {
        let _site = check_present::<Self>(self.mask(), c"shfl_xor");
        let src = lane_of_rank::<Self>(self.mask(), self.thread_rank() ^ lane_mask);
        // SAFETY: as for `shfl`.
        unsafe { warp::shfl_idx_sync(self.mask(), value, src, WARP_SIZE) }
    }

    /// Combines the values of all lanes with `op` in rank order and returns the result to
    /// every lane. For a given group shape the order of the combinations is fixed, so
    /// float results are reproducible (and equal in every lane).
    #[inline(always)]
    #[track_caller]
    fn reduce<T: Pod, Op: Operator<T>>(&self, value: T, op: Op) -> T {
        let _site = check_present::<Self>(self.mask(), c"reduce");
        // SAFETY: as for `sync`.
        unsafe { warp::reduce_sync(self.mask(), value, op) }
    }

    /// Inclusive scan in rank order: rank `r` gets `combine` of ranks `0..=r`.
    #[inline(always)]
    #[track_caller]
    fn inclusive_scan<T: Pod, Op: Operator<T>>(&self, value: T, op: Op) -> T {
        let _site = check_present::<Self>(self.mask(), c"inclusive_scan");
        // SAFETY: as for `sync`.
        unsafe { inclusive_scan_present::<Self, T, Op>(self.mask(), value, op) }
    }

    /// Exclusive scan in rank order: rank `r` gets `combine` of ranks `0..r`, rank 0 the
    /// identity.
    #[inline(always)]
    #[track_caller]
    fn exclusive_scan<T: Pod, Op: Operator<T>>(&self, value: T, op: Op) -> T {
        let _site = check_present::<Self>(self.mask(), c"exclusive_scan");
        let mask = self.mask();
        // SAFETY: as for `sync`.
        let inclusive = unsafe { inclusive_scan_present::<Self, T, Op>(mask, value, op) };
        let rank = self.thread_rank();
        let src = if rank > 0 { lane_of_rank::<Self>(mask, rank - 1) } else { arch::lane_id() };
        // SAFETY: as above; `src` is in the mask.
        let below = unsafe { warp::shfl_idx_sync(mask, inclusive, src, WARP_SIZE) };
        if rank == 0 {
            op.identity()
        } else {
            below
        }
    }

    /// Splits the group by `label` (`match.any`): the lanes with the caller's label, bit for
    /// bit, form the caller's [`Partition`] (CUDA's `labeled_partition`).
    #[inline(always)]
    #[track_caller]
    fn labeled_partition<T: MatchValue>(&self, label: T) -> Partition {
        Partition { mask: match_any_lanes(self, label) }
    }

    /// Splits the group in two by `predicate` (`vote.ballot`): the caller's [`Partition`]
    /// holds the lanes that passed the same predicate (CUDA's `binary_partition`).
    #[inline(always)]
    #[track_caller]
    fn binary_partition(&self, predicate: bool) -> Partition {
        let yes = ballot_lanes(self, predicate);
        Partition { mask: if predicate { yes } else { self.mask() & !yes } }
    }

    /// This group without the run-time presence check: the returned [`Unchecked`] group
    /// has the same lanes and collectives, none of which compares the mask with
    /// `activemask` (nor traps). For code whose lanes are converged by construction, where
    /// the check's `activemask`, compare and branch per collective matter (see the
    /// module docs and `warpsafe-bench`'s `group-checks`). Partitions made from it are
    /// checked again.
    ///
    /// # Safety
    /// Every lane of the group reaches each collective called through the returned group
    /// together with the caller: none has exited, and none is on another path or at
    /// another collective. This is the rule of PTX's `.sync` collectives (`shfl.sync`,
    /// `vote.sync`, `match.sync`, `bar.warp.sync`, `redux.sync`) that the check enforces:
    /// each waits for every non-exited lane of its member mask to execute the same
    /// instruction with the same mask, a shuffle from a lane that is not there returns an
    /// undefined value, and lanes of one mask at different collectives are undefined
    /// behaviour (a hang or garbage). The emulator still reports a broken rule as an
    /// error; the GPU does not.
    #[inline(always)]
    unsafe fn assume_present(self) -> Unchecked<Self> {
        Unchecked { group: self }
    }
}

/// Hillis-Steele inclusive scan over `mask`, the mask of a group `G`, in rank order.
///
/// # Safety
/// The caller is in `mask` and every lane of `mask` calls this together.
#[inline(always)]
unsafe fn inclusive_scan_present<G: sealed::Sealed, T: Pod, Op: Operator<T>>(
    mask: u32,
    value: T,
    op: Op,
) -> T {
    let size = mask.count_ones();
    let rank = (mask & warp::lanemask_lt()).count_ones();
    let mut acc = value;
    let mut d = 1;
    while d < size {
        let src = if rank >= d { lane_of_rank::<G>(mask, rank - d) } else { arch::lane_id() };
        // SAFETY: caller's contract; `src` is a lane of the mask or the caller.
        let other = unsafe { warp::shfl_idx_sync(mask, acc, src, WARP_SIZE) };
        if rank >= d {
            acc = op.combine(other, acc);
        }
        d *= 2;
    }
    acc
}

/// The caller's warp: every lane of it that exists in the block.
#[derive(Clone, Copy, Debug)]
pub struct Warp {
    mask: u32,
}

impl Warp {
    /// The caller's warp. Its mask comes from the block's shape: all 32 lanes, except in
    /// the last warp of a block whose thread count is not a multiple of 32, which has only
    /// the lanes that exist. Every lane of the warp must still reach each collective: do
    /// not return early from some lanes before using it.
    #[inline(always)]
    pub fn this() -> Warp {
        let first = thread::warp_idx() * WARP_SIZE;
        let lanes = (thread::block_threads() - first).min(WARP_SIZE);
        Warp { mask: if lanes == WARP_SIZE { FULL_MASK } else { (1u32 << lanes) - 1 } }
    }

    /// The caller's aligned tile of `N` lanes (`N` a power of two up to 32, checked at
    /// compile time): lanes `N * k .. N * (k + 1)` of the warp that exist.
    #[inline(always)]
    pub fn tiles<const N: u32>(self) -> Tile<N> {
        const { assert!(N.is_power_of_two() && N <= WARP_SIZE, "a tile has 1, 2, 4, 8, 16 or 32 lanes") };
        let segment =
            if N == WARP_SIZE { FULL_MASK } else { ((1u32 << N) - 1) << (arch::lane_id() & !(N - 1)) };
        Tile { mask: segment & self.mask }
    }

    /// The Volta partial-mask reduction as one call: every lane of the warp calls it
    /// (staying converged), and lanes with `active == false` contribute the operator's
    /// identity. Returns the reduction over the active lanes to every lane.
    #[inline(always)]
    #[track_caller]
    pub fn reduce_where<T: Pod, Op: Operator<T>>(self, active: bool, value: T, op: Op) -> T {
        self.reduce(if active { value } else { op.identity() }, op)
    }
}

impl sealed::Sealed for Warp {
    const ONE_RUN: bool = true;
}

impl Group for Warp {
    #[inline(always)]
    fn mask(&self) -> u32 {
        self.mask
    }
}

/// An aligned tile of `N` lanes of a warp (CUDA's `thread_block_tile<N>`).
#[derive(Clone, Copy, Debug)]
pub struct Tile<const N: u32> {
    mask: u32,
}

impl<const N: u32> sealed::Sealed for Tile<N> {
    const ONE_RUN: bool = true;
}

impl<const N: u32> Group for Tile<N> {
    #[inline(always)]
    fn mask(&self) -> u32 {
        self.mask
    }
}

/// The lanes converged with the caller when it was made (CUDA's `coalesced_threads()`):
/// the group to use inside a divergent branch, e.g. to aggregate atomics per warp.
#[derive(Clone, Copy, Debug)]
pub struct Coalesced {
    mask: u32,
}

impl Coalesced {
    /// The lanes executing this call together with the caller (`activemask`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn active() -> Coalesced {
        Coalesced { mask: warp::active_mask() }
    }
}

impl sealed::Sealed for Coalesced {}

impl Group for Coalesced {
    #[inline(always)]
    fn mask(&self) -> u32 {
        self.mask
    }
}

/// A subset of a group's lanes sharing a label or predicate.
#[derive(Clone, Copy, Debug)]
pub struct Partition {
    mask: u32,
}

impl sealed::Sealed for Partition {}

impl Group for Partition {
    #[inline(always)]
    fn mask(&self) -> u32 {
        self.mask
    }
}

/// A group whose collectives skip the run-time presence check, made by the `unsafe`
/// [`Group::assume_present`], whose `# Safety` section states the rule its caller keeps
/// instead: every lane of the group reaches each collective with the caller. Its lanes,
/// ranks and results are those of the group it was made from.
#[derive(Clone, Copy, Debug)]
pub struct Unchecked<G> {
    group: G,
}

impl<G: Group> sealed::Sealed for Unchecked<G> {
    const CHECKED: bool = false;
    const ONE_RUN: bool = G::ONE_RUN;
}

impl<G: Group> Group for Unchecked<G> {
    #[inline(always)]
    fn mask(&self) -> u32 {
        self.group.mask()
    }
}

#[cfg(test)]
mod tests {
    use super::{compress, ranks_of};

    /// `compress` one bit at a time.
    fn compress_model(x: u32, m: u32) -> u32 {
        (0..32).filter(|&i| m >> i & 1 == 1).enumerate().fold(0, |out, (r, i)| out | (x >> i & 1) << r)
    }

    #[test]
    fn compress_and_ranks_of_gather_bits_in_rank_order() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u32
        };
        let special = [0, 1, u32::MAX, 0x8000_0000, 0x0000_ff00, 0xf0f0_f0f0, 0x5555_5555, 0x8000_0001];
        let mut masks = special.to_vec();
        for _ in 0..20_000 {
            masks.push(next() & next());
        }
        for m in masks {
            for x in [0, u32::MAX, next(), next()] {
                assert_eq!(compress(x, m), compress_model(x, m), "compress({x:#x}, {m:#x})");
                assert_eq!(ranks_of(x, m), compress_model(x, m), "ranks_of({x:#x}, {m:#x})");
            }
        }
    }
}
