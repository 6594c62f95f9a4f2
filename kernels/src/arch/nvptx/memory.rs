//! Fences, scoped atomics, ordered and volatile loads and stores, and block barriers.
//!
//! Fences, atomics and ordered accesses are emitted with `asm!`: they are not warp
//! collectives (each thread executes them on its own), so `asm!` not being `convergent`
//! does no harm, and PTX has no NVVM intrinsic for most of them (LLVM reaches scoped
//! orderings only through `syncscope`, which Rust cannot express, and
//! `core::sync::atomic` drops the ordering on this target, rust-lang/rust#136480). Every
//! `asm!` here omits `nomem`/`readonly`, so the compiler treats it as reading and writing
//! any memory and moves no access across it.
//!
//! All accesses use generic addressing (no `.global`/`.shared` qualifier), so every
//! function works on global and on shared memory alike; the hardware resolves the window.
//!
//! Block barriers go through LLVM's NVVM intrinsics, which LLVM declares `convergent`,
//! and always in their non-`.aligned` form (see [`barrier_sync`]).
//!
//! All of this needs sm_70 or newer (PTX ISA 6.0): `.sem` and `.scope` qualifiers on
//! `atom`, `red`, `ld` and `st`, `fence`, and `barrier` all start there.

use core::arch::asm;

use crate::arch::{L2Prefetch, LoadSem, RmwSem, Scope, StoreSem};

/// Expands to a `match` on `(scope, sem)` whose arms invoke `$emit!` with the PTX
/// qualifier string (`".acquire.gpu"`, ...) followed by `$rest`.
macro_rules! by_rmw {
    ($scope:expr, $sem:expr, $emit:ident!($($rest:tt)*)) => {
        match ($scope, $sem) {
            (Scope::Cta, RmwSem::Relaxed) => $emit!(".relaxed.cta", $($rest)*),
            (Scope::Cta, RmwSem::Acquire) => $emit!(".acquire.cta", $($rest)*),
            (Scope::Cta, RmwSem::Release) => $emit!(".release.cta", $($rest)*),
            (Scope::Cta, RmwSem::AcqRel) => $emit!(".acq_rel.cta", $($rest)*),
            (Scope::Gpu, RmwSem::Relaxed) => $emit!(".relaxed.gpu", $($rest)*),
            (Scope::Gpu, RmwSem::Acquire) => $emit!(".acquire.gpu", $($rest)*),
            (Scope::Gpu, RmwSem::Release) => $emit!(".release.gpu", $($rest)*),
            (Scope::Gpu, RmwSem::AcqRel) => $emit!(".acq_rel.gpu", $($rest)*),
            (Scope::Sys, RmwSem::Relaxed) => $emit!(".relaxed.sys", $($rest)*),
            (Scope::Sys, RmwSem::Acquire) => $emit!(".acquire.sys", $($rest)*),
            (Scope::Sys, RmwSem::Release) => $emit!(".release.sys", $($rest)*),
            (Scope::Sys, RmwSem::AcqRel) => $emit!(".acq_rel.sys", $($rest)*),
        }
    };
}

/// As [`by_rmw`] for a two-valued semantics enum `$sem_ty` (`LoadSem` or `StoreSem`)
/// whose non-relaxed variant is `$strong` with PTX spelling `$strong_ptx`.
macro_rules! by_two {
    ($scope:expr, $sem:expr, $sem_ty:ident::$strong:ident = $s:literal, $emit:ident!($($rest:tt)*)) => {
        match ($scope, $sem) {
            (Scope::Cta, $sem_ty::Relaxed) => $emit!(".relaxed.cta", $($rest)*),
            (Scope::Cta, $sem_ty::$strong) => $emit!(concat!($s, ".cta"), $($rest)*),
            (Scope::Gpu, $sem_ty::Relaxed) => $emit!(".relaxed.gpu", $($rest)*),
            (Scope::Gpu, $sem_ty::$strong) => $emit!(concat!($s, ".gpu"), $($rest)*),
            (Scope::Sys, $sem_ty::Relaxed) => $emit!(".relaxed.sys", $($rest)*),
            (Scope::Sys, $sem_ty::$strong) => $emit!(concat!($s, ".sys"), $($rest)*),
        }
    };
}

/// One `atom{qual}.{op}.{ty} old, [ptr], value;`.
macro_rules! atom_asm {
    ($qual:expr, $op:literal, $ty:literal, $t:ty, $reg:ident, $ptr:expr, $value:expr) => {{
        let old: $t;
        asm!(
            concat!("atom", $qual, ".", $op, ".", $ty, " {old}, [{ptr}], {value};"),
            old = out($reg) old,
            ptr = in(reg64) $ptr,
            value = in($reg) $value,
            options(nostack),
        );
        old
    }};
}

/// One `atom{qual}.cas.{ty} old, [ptr], expected, new;`.
macro_rules! cas_asm {
    ($qual:expr, $ty:literal, $t:ty, $reg:ident, $ptr:expr, $expected:expr, $new:expr) => {{
        let old: $t;
        asm!(
            concat!("atom", $qual, ".cas.", $ty, " {old}, [{ptr}], {expected}, {new};"),
            old = out($reg) old,
            ptr = in(reg64) $ptr,
            expected = in($reg) $expected,
            new = in($reg) $new,
            options(nostack),
        );
        old
    }};
}

/// One `red{qual}.{op}.{ty} [ptr], value;`.
macro_rules! red_asm {
    ($qual:expr, $op:literal, $ty:literal, $reg:ident, $ptr:expr, $value:expr) => {
        asm!(
            concat!("red", $qual, ".", $op, ".", $ty, " [{ptr}], {value};"),
            ptr = in(reg64) $ptr,
            value = in($reg) $value,
            options(nostack),
        )
    };
}

/// One `ld{qual}.{ty} value, [ptr];`.
macro_rules! ld_asm {
    ($qual:expr, $ty:literal, $t:ty, $reg:ident, $ptr:expr) => {{
        let value: $t;
        asm!(
            concat!("ld", $qual, ".", $ty, " {value}, [{ptr}];"),
            value = out($reg) value,
            ptr = in(reg64) $ptr,
            options(nostack),
        );
        value
    }};
}

/// One `st{qual}.{ty} [ptr], value;`.
macro_rules! st_asm {
    ($qual:expr, $ty:literal, $reg:ident, $ptr:expr, $value:expr) => {
        asm!(
            concat!("st", $qual, ".", $ty, " [{ptr}], {value};"),
            ptr = in(reg64) $ptr,
            value = in($reg) $value,
            options(nostack),
        )
    };
}

/// The `# Safety` contract shared by every atomic and ordered access below.
macro_rules! access_safety_doc {
    () => {
        "# Safety\n\
         - `ptr` is a generic address of global or shared memory (not local, constant or \
         parameter space), aligned to the operand's size, valid for reads and writes for \
         the whole access.\n\
         - Every access to the location that may run concurrently with this one is itself \
         atomic (an `atom`, `red`, `ld`/`st` `.relaxed`/`.acquire`/`.release`, or \
         volatile access) of the same size, and `scope` includes every thread making one; \
         otherwise the accesses race and the values read are undefined.\n\
         - Shared memory is only visible to its own block: with a shared address, only \
         threads of the executing block may access the location."
    };
}

macro_rules! atom_fns {
    ($($name:ident: $op:literal $ty:literal, $t:ty, $reg:ident, $what:literal;)*) => {$(
        #[doc = concat!("`atom{.sem}{.scope}.", $op, ".", $ty, "`: atomically replaces `*ptr` \
            with ", $what, " and returns the value it replaced.\n\n", access_safety_doc!())]
        #[inline(always)]
        pub unsafe fn $name(scope: Scope, sem: RmwSem, ptr: *mut $t, value: $t) -> $t {
            // SAFETY: the caller upholds the access contract above; the instruction reads
            // and writes only `*ptr`.
            unsafe { by_rmw!(scope, sem, atom_asm!($op, $ty, $t, $reg, ptr, value)) }
        }
    )*};
}

atom_fns! {
    atom_add_u32: "add" "u32", u32, reg32, "`*ptr + value` (wrapping)";
    atom_add_s32: "add" "s32", i32, reg32, "`*ptr + value` (wrapping)";
    atom_add_u64: "add" "u64", u64, reg64, "`*ptr + value` (wrapping; PTX has no `.s64` add: \
        two's-complement addition is the same bits, so `i64` uses this one)";
    atom_add_f32: "add" "f32", f32, reg32, "`*ptr + value` (round to nearest even; \
        subnormal inputs and results are flushed to zero)";
    atom_add_f64: "add" "f64", f64, reg64, "`*ptr + value` (round to nearest even; sm_60+)";
    atom_min_u32: "min" "u32", u32, reg32, "the unsigned minimum of `*ptr` and `value`";
    atom_min_s32: "min" "s32", i32, reg32, "the signed minimum of `*ptr` and `value`";
    atom_min_u64: "min" "u64", u64, reg64, "the unsigned minimum of `*ptr` and `value`";
    atom_min_s64: "min" "s64", i64, reg64, "the signed minimum of `*ptr` and `value`";
    atom_max_u32: "max" "u32", u32, reg32, "the unsigned maximum of `*ptr` and `value`";
    atom_max_s32: "max" "s32", i32, reg32, "the signed maximum of `*ptr` and `value`";
    atom_max_u64: "max" "u64", u64, reg64, "the unsigned maximum of `*ptr` and `value`";
    atom_max_s64: "max" "s64", i64, reg64, "the signed maximum of `*ptr` and `value`";
    atom_and_b32: "and" "b32", u32, reg32, "`*ptr & value`";
    atom_and_b64: "and" "b64", u64, reg64, "`*ptr & value`";
    atom_or_b32: "or" "b32", u32, reg32, "`*ptr | value`";
    atom_or_b64: "or" "b64", u64, reg64, "`*ptr | value`";
    atom_xor_b32: "xor" "b32", u32, reg32, "`*ptr ^ value`";
    atom_xor_b64: "xor" "b64", u64, reg64, "`*ptr ^ value`";
    atom_exch_b32: "exch" "b32", u32, reg32, "`value`";
    atom_exch_b64: "exch" "b64", u64, reg64, "`value`";
    atom_inc_u32: "inc" "u32", u32, reg32, "`if *ptr >= value { 0 } else { *ptr + 1 }` \
        (`value` is the wrap limit)";
    atom_dec_u32: "dec" "u32", u32, reg32, "`if *ptr == 0 || *ptr > value { value } else \
        { *ptr - 1 }` (`value` is the wrap limit)";
}

macro_rules! cas_fns {
    ($($name:ident: $ty:literal, $t:ty, $reg:ident;)*) => {$(
        #[doc = concat!("`atom{.sem}{.scope}.cas.", $ty, "`: atomically, if `*ptr == expected` \
            stores `new`; returns the value `*ptr` held before (equal to `expected` exactly \
            when the store happened).\n\n", access_safety_doc!())]
        #[inline(always)]
        pub unsafe fn $name(scope: Scope, sem: RmwSem, ptr: *mut $t, expected: $t, new: $t) -> $t {
            // SAFETY: the caller upholds the access contract above; the instruction reads
            // and writes only `*ptr`.
            unsafe { by_rmw!(scope, sem, cas_asm!($ty, $t, $reg, ptr, expected, new)) }
        }
    )*};
}

cas_fns! {
    atom_cas_b32: "b32", u32, reg32;
    atom_cas_b64: "b64", u64, reg64;
}

macro_rules! red_fns {
    ($($name:ident: $op:literal $ty:literal, $t:ty, $reg:ident;)*) => {$(
        #[doc = concat!("`red{.sem}{.scope}.", $op, ".", $ty, "`: the reduction form of [`atom_",
            $op, "_", $ty, "`], which returns nothing (so the thread need not wait for the \
            old value). PTX allows only `.relaxed` and `.release` on `red`, hence \
            [`StoreSem`].\n\n", access_safety_doc!())]
        #[inline(always)]
        pub unsafe fn $name(scope: Scope, sem: StoreSem, ptr: *mut $t, value: $t) {
            // SAFETY: the caller upholds the access contract above; the instruction reads
            // and writes only `*ptr`.
            unsafe { by_two!(scope, sem, StoreSem::Release = ".release", red_asm!($op, $ty, $reg, ptr, value)) }
        }
    )*};
}

red_fns! {
    red_add_u32: "add" "u32", u32, reg32;
    red_add_s32: "add" "s32", i32, reg32;
    red_add_u64: "add" "u64", u64, reg64;
    red_add_f32: "add" "f32", f32, reg32;
    red_add_f64: "add" "f64", f64, reg64;
    red_min_u32: "min" "u32", u32, reg32;
    red_min_s32: "min" "s32", i32, reg32;
    red_min_u64: "min" "u64", u64, reg64;
    red_min_s64: "min" "s64", i64, reg64;
    red_max_u32: "max" "u32", u32, reg32;
    red_max_s32: "max" "s32", i32, reg32;
    red_max_u64: "max" "u64", u64, reg64;
    red_max_s64: "max" "s64", i64, reg64;
    red_and_b32: "and" "b32", u32, reg32;
    red_and_b64: "and" "b64", u64, reg64;
    red_or_b32: "or" "b32", u32, reg32;
    red_or_b64: "or" "b64", u64, reg64;
    red_xor_b32: "xor" "b32", u32, reg32;
    red_xor_b64: "xor" "b64", u64, reg64;
    red_inc_u32: "inc" "u32", u32, reg32;
    red_dec_u32: "dec" "u32", u32, reg32;
}

macro_rules! ld_st_fns {
    ($($ld:ident, $st:ident: $ty:literal, $t:ty, $reg:ident;)*) => {$(
        #[doc = concat!("`ld.relaxed{.scope}.", $ty, "` or `ld.acquire{.scope}.", $ty, "`: a \
            strong (atomic) load; with [`LoadSem::Acquire`] no later memory access of this \
            thread is performed before it.\n\n", access_safety_doc!())]
        #[inline(always)]
        pub unsafe fn $ld(scope: Scope, sem: LoadSem, ptr: *const $t) -> $t {
            // SAFETY: the caller upholds the access contract above; the instruction only
            // reads `*ptr`.
            unsafe { by_two!(scope, sem, LoadSem::Acquire = ".acquire", ld_asm!($ty, $t, $reg, ptr)) }
        }

        #[doc = concat!("`st.relaxed{.scope}.", $ty, "` or `st.release{.scope}.", $ty, "`: a \
            strong (atomic) store; with [`StoreSem::Release`] no earlier memory access of \
            this thread is performed after it.\n\n", access_safety_doc!())]
        #[inline(always)]
        pub unsafe fn $st(scope: Scope, sem: StoreSem, ptr: *mut $t, value: $t) {
            // SAFETY: the caller upholds the access contract above; the instruction only
            // writes `*ptr`.
            unsafe { by_two!(scope, sem, StoreSem::Release = ".release", st_asm!($ty, $reg, ptr, value)) }
        }
    )*};
}

ld_st_fns! {
    ld_b32, st_b32: "b32", u32, reg32;
    ld_b64, st_b64: "b64", u64, reg64;
}

macro_rules! volatile_fns {
    ($($ld:ident, $st:ident: $t:ty, $ty:literal;)*) => {$(
        #[doc = concat!("`ld.volatile.", $ty, "` (`ld.volatile.global.", $ty, "` where LLVM \
            proves the address global): a load that is always performed, in program order \
            with the thread's other volatile accesses. PTX gives `ld.volatile` the memory \
            semantics of `ld.relaxed.sys`. Lowered from `core::ptr::read_volatile`, whose \
            PTX is checked by the tests.\n\n", access_safety_doc!())]
        #[inline(always)]
        pub unsafe fn $ld(ptr: *const $t) -> $t {
            // SAFETY: forwarded from the caller.
            unsafe { core::ptr::read_volatile(ptr) }
        }

        #[doc = concat!("`st.volatile.", $ty, "`: a store that is always performed, in program \
            order with the thread's other volatile accesses; the memory semantics of \
            `st.relaxed.sys`. Lowered from `core::ptr::write_volatile`.\n\n",
            access_safety_doc!())]
        #[inline(always)]
        pub unsafe fn $st(ptr: *mut $t, value: $t) {
            // SAFETY: forwarded from the caller.
            unsafe { core::ptr::write_volatile(ptr, value) }
        }
    )*};
}

volatile_fns! {
    ld_volatile_b32, st_volatile_b32: u32, "b32";
    ld_volatile_b64, st_volatile_b64: u64, "b64";
}

/// `fence.sc.{cta,gpu,sys}` (what `membar.{cta,gl,sys}` means since sm_70): an
/// [`fence_acq_rel`] that is in addition sequentially consistent: all `fence.sc` of a
/// scope that each other's scopes include are ordered in one total order that every
/// thread agrees on. Slower than `fence.acq_rel`.
#[inline(always)]
pub fn fence_sc(scope: Scope) {
    // SAFETY: a fence has no operands and no precondition; it only orders this thread's
    // memory accesses. It is not `nomem`, so the compiler orders accesses around it too.
    unsafe {
        match scope {
            Scope::Cta => asm!("fence.sc.cta;", options(nostack)),
            Scope::Gpu => asm!("fence.sc.gpu;", options(nostack)),
            Scope::Sys => asm!("fence.sc.sys;", options(nostack)),
        }
    }
}

/// `fence.acq_rel.{cta,gpu,sys}`: a lightweight fence. Together with a strong write after
/// it (relaxed or volatile) it releases every access before it; together with a strong
/// read before it, it acquires, ordering every access after it.
#[inline(always)]
pub fn fence_acq_rel(scope: Scope) {
    // SAFETY: as for `fence_sc`.
    unsafe {
        match scope {
            Scope::Cta => asm!("fence.acq_rel.cta;", options(nostack)),
            Scope::Gpu => asm!("fence.acq_rel.gpu;", options(nostack)),
            Scope::Sys => asm!("fence.acq_rel.sys;", options(nostack)),
        }
    }
}

/// Declarations of the barrier intrinsics: LLVM 22's non-`.aligned` forms, `convergent`
/// and not `memory(none)`, each lowering to the instruction beside it.
mod llvm {
    extern "C" {
        // barrier.sync id;
        #[link_name = "llvm.nvvm.barrier.cta.sync.all"]
        pub fn barrier_cta_sync_all(id: u32);
        // barrier.sync id, count;
        #[link_name = "llvm.nvvm.barrier.cta.sync.count"]
        pub fn barrier_cta_sync_count(id: u32, count: u32);
        // barrier.red.popc.u32 d, id, p;
        #[link_name = "llvm.nvvm.barrier.cta.red.popc.all"]
        pub fn barrier_cta_red_popc_all(id: u32, predicate: bool) -> u32;
        // barrier.red.and.pred d, id, p;
        #[link_name = "llvm.nvvm.barrier.cta.red.and.all"]
        pub fn barrier_cta_red_and_all(id: u32, predicate: bool) -> bool;
        // barrier.red.or.pred d, id, p;
        #[link_name = "llvm.nvvm.barrier.cta.red.or.all"]
        pub fn barrier_cta_red_or_all(id: u32, predicate: bool) -> bool;
    }
}

/// `barrier.sync id` (sm_70+; barrier 0 is CUDA's `__syncthreads()`): waits until every
/// thread of the block has arrived at barrier `id`. Memory accesses that the arriving
/// threads made before it are performed, relative to all of them, before any continues.
///
/// The non-`.aligned` form: since Volta each thread arrives on its own, so the threads of
/// a warp may reach the barrier through different instructions (different call sites or
/// copies of one). `bar.sync`/`barrier.sync.aligned` promise that all threads of a warp
/// execute the *same* instruction; rustc's MIR passes know nothing of `convergent` and
/// may duplicate a call into both arms of a branch, which would silently break that
/// promise, so the aligned forms are never used.
///
/// # Safety
/// - `id < 16`.
/// - Every thread of the block that has not exited reaches barrier `id`, the same number
///   of times; no thread of the block uses barrier `id` with a thread count at the same
///   time. A thread that never arrives deadlocks the block.
#[inline(always)]
pub unsafe fn barrier_sync(id: u32) {
    // SAFETY: forwarded from the caller.
    unsafe { llvm::barrier_cta_sync_all(id) }
}

/// `barrier.sync id, count` (sm_70+): a named barrier for a subset of the block; it
/// completes once `count` threads have arrived at barrier `id`.
///
/// # Safety
/// - `id < 16`; `count` is a non-zero multiple of 32 (the warp size), at most the
///   block's size rounded up to a multiple of 32.
/// - Exactly `count` threads arrive at barrier `id` (the same `count` for all) each time
///   it is used, all of them before any reuses it; all threads of a warp that arrive
///   belong to the same `count` group. Too few threads deadlock them.
#[inline(always)]
pub unsafe fn barrier_sync_count(id: u32, count: u32) {
    // SAFETY: forwarded from the caller.
    unsafe { llvm::barrier_cta_sync_count(id, count) }
}

/// `barrier.red.popc.u32 d, id, p` (sm_70+; CUDA's `__syncthreads_count`): as
/// [`barrier_sync`], and returns to every thread the number of threads of the block whose
/// `predicate` is true. LLVM 22 has a non-`.aligned` intrinsic for it, so it is used.
///
/// # Safety
/// As for [`barrier_sync`]; every thread reaching barrier `id` uses this same reduction.
#[inline(always)]
pub unsafe fn barrier_red_popc(id: u32, predicate: bool) -> u32 {
    // SAFETY: forwarded from the caller.
    unsafe { llvm::barrier_cta_red_popc_all(id, predicate) }
}

/// `barrier.red.and.pred d, id, p` (sm_70+; CUDA's `__syncthreads_and`): as
/// [`barrier_sync`], and returns whether `predicate` is true in every thread of the block.
///
/// # Safety
/// As for [`barrier_red_popc`].
#[inline(always)]
pub unsafe fn barrier_red_and(id: u32, predicate: bool) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe { llvm::barrier_cta_red_and_all(id, predicate) }
}

/// `barrier.red.or.pred d, id, p` (sm_70+; CUDA's `__syncthreads_or`): as
/// [`barrier_sync`], and returns whether `predicate` is true in any thread of the block.
///
/// # Safety
/// As for [`barrier_red_popc`].
#[inline(always)]
pub unsafe fn barrier_red_or(id: u32, predicate: bool) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe { llvm::barrier_cta_red_or_all(id, predicate) }
}

/// `ld.global.nc` with the `.L2::256B` prefetch-size qualifier in the sm_90 build (it
/// needs PTX ISA 7.4, and LLVM declares 7.0 for sm_70 and sm_80, whose loads go without
/// it), followed by the given vector and operands. A macro, since an `asm!` template must
/// be a literal.
#[cfg(target_feature = "sm_90")]
macro_rules! nc_load_prefetching_256 {
    ($rest:literal) => {
        concat!("ld.global.nc.L2::256B", $rest)
    };
}
#[cfg(not(target_feature = "sm_90"))]
macro_rules! nc_load_prefetching_256 {
    ($rest:literal) => {
        concat!("ld.global.nc", $rest)
    };
}

/// `cvta.to.global` of `$ptr`, then the 16-byte load instruction `$load` (a template with
/// the operands `{global}` and one per word, named by `$word`) into the words, registers
/// of class `$class` holding `$ty` each: four `u32`s or two `u64`s.
macro_rules! load_16_as_words {
    ($ptr:expr, $class:ident $ty:ty: [$($word:ident),+], $($load:tt)+) => {{
        $(let $word: $ty;)+
        asm!(
            "cvta.to.global.u64 {global}, {ptr};",
            $($load)+,
            ptr = in(reg64) $ptr,
            global = out(reg64) _,
            $($word = out($class) $word,)+
            options(pure, readonly, nostack),
        );
        [$($word),+]
    }};
}

/// `ld.global.nc.v2.b64`: 16 bytes as two 64-bit words through the read-only,
/// non-coherent data cache (CUDA C++'s `__ldg`), after `cvta.to.global` of the generic
/// address; the form for 64-bit elements. On sm_90 with the L2 prefetch that `P` asks
/// for, as [`load_global_nc_16`].
///
/// # Safety
/// As for [`load_global_nc_16`].
#[inline(always)]
pub unsafe fn load_global_nc_16_b64<P: L2Prefetch>(ptr: *const [u64; 2]) -> [u64; 2] {
    // SAFETY: the caller's contract; reads 16 bytes, writes nothing (the hint only asks
    // the L2 cache to fetch the surrounding 256 bytes).
    unsafe {
        if P::WHOLE_256_BYTES {
            load_16_as_words!(ptr, reg64 u64: [a, b], nc_load_prefetching_256!(".v2.b64 {{{a}, {b}}}, [{global}];"))
        } else {
            load_16_as_words!(ptr, reg64 u64: [a, b], "ld.global.nc.v2.b64 {{{a}, {b}}}, [{global}];")
        }
    }
}

/// `red.relaxed.cta.shared.add.u32`: [`red_add_u32`] at block scope, relaxed, on a
/// location the caller knows to be shared memory. The generic address is converted with
/// `cvta.to.shared`, so the instruction is a shared-memory atomic (SASS `ATOMS`) whether
/// or not ptxas could prove the address shared; a generic atomic would have to test the
/// window at run time.
///
/// # Safety
/// `ptr` is a generic address of the executing block's shared memory, 4-byte aligned, and
/// every access to the location that may run concurrently is atomic.
#[inline(always)]
pub unsafe fn red_shared_add_u32(ptr: *mut u32, value: u32) {
    // SAFETY: the caller's contract.
    unsafe { red_shared_add_u32_at(ptr, 0, value) }
}

/// [`red_shared_add_u32`] at `byte_offset` bytes past `base`, the offset added to the
/// 32-bit shared-window address: for a loop of atomics around one loop-invariant base
/// (private histogram copies), each one costs the offset's arithmetic and one `ATOMS`,
/// with no 64-bit pointer arithmetic per atomic (ptxas shares the conversion of `base`).
///
/// # Safety
/// `base + byte_offset` is as [`red_shared_add_u32`] requires of its `ptr`.
#[inline(always)]
pub unsafe fn red_shared_add_u32_at(base: *mut u32, byte_offset: u32, value: u32) {
    // SAFETY: the caller's contract; reads and writes only the u32 at base + byte_offset.
    unsafe {
        asm!(
            "cvta.to.shared.u64 {shared}, {base};",
            "cvt.u32.u64 {address}, {shared};",
            "add.u32 {address}, {address}, {offset};",
            "red.relaxed.cta.shared.add.u32 [{address}], {value};",
            base = in(reg64) base,
            shared = out(reg64) _,
            address = out(reg32) _,
            offset = in(reg32) byte_offset,
            value = in(reg32) value,
            options(nostack),
        );
    }
}

/// `ld.global.nc.v4.b32`: 16 bytes through the read-only, non-coherent data cache (CUDA
/// C++'s `__ldg`), after `cvta.to.global` of the generic address. With
/// [`Prefetch256B`](crate::arch::Prefetch256B) the sm_90 build adds the `.L2::256B`
/// prefetch-size hint (PTX ISA 7.4), which asks the L2 cache to fetch the whole 256-byte
/// block around the access; with [`NoPrefetch`](crate::arch::NoPrefetch) it fetches the
/// sectors the load touches (see those types for where each pays).
///
/// # Safety
/// `ptr` is a generic address of global memory, 16-byte aligned and readable for 16 bytes,
/// and nothing writes those bytes while the kernel runs (the non-coherent cache may
/// return stale data otherwise).
#[inline(always)]
pub unsafe fn load_global_nc_16<P: L2Prefetch>(ptr: *const [u32; 4]) -> [u32; 4] {
    // SAFETY: the caller's contract; reads 16 bytes, writes nothing (the hint only asks
    // the L2 cache to fetch the surrounding 256 bytes).
    unsafe {
        if P::WHOLE_256_BYTES {
            load_16_as_words!(
                ptr,
                reg32 u32: [a, b, c, d],
                nc_load_prefetching_256!(".v4.b32 {{{a}, {b}, {c}, {d}}}, [{global}];")
            )
        } else {
            load_16_as_words!(ptr, reg32 u32: [a, b, c, d], "ld.global.nc.v4.b32 {{{a}, {b}, {c}, {d}}}, [{global}];")
        }
    }
}

/// `ld.global.v4.b32`: 16 bytes through the ordinary, coherent path, after
/// `cvta.to.global` of the generic address (for data the same launch writes later, such
/// as an in-place scan's).
///
/// # Safety
/// `ptr` is a generic address of global memory, 16-byte aligned and readable for 16 bytes,
/// and no other thread writes those bytes during the call.
#[inline(always)]
pub unsafe fn load_global_16(ptr: *const [u32; 4]) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller's contract; reads 16 bytes, writes nothing.
    unsafe {
        asm!(
            "cvta.to.global.u64 {global}, {ptr};",
            "ld.global.v4.b32 {{{a}, {b}, {c}, {d}}}, [{global}];",
            ptr = in(reg64) ptr,
            global = out(reg64) _,
            a = out(reg32) a,
            b = out(reg32) b,
            c = out(reg32) c,
            d = out(reg32) d,
            options(readonly, nostack),
        );
    }
    [a, b, c, d]
}

/// `st.global.v4.b32`: 16 bytes, after `cvta.to.global` of the generic address.
///
/// # Safety
/// `ptr` is a generic address of global memory, 16-byte aligned and writable for 16
/// bytes, and no other thread accesses those bytes during the call.
#[inline(always)]
pub unsafe fn store_global_16(ptr: *mut [u32; 4], value: [u32; 4]) {
    let [a, b, c, d] = value;
    // SAFETY: the caller's contract; writes those 16 bytes only.
    unsafe {
        asm!(
            "cvta.to.global.u64 {global}, {ptr};",
            "st.global.v4.b32 [{global}], {{{a}, {b}, {c}, {d}}};",
            ptr = in(reg64) ptr,
            global = out(reg64) _,
            a = in(reg32) a,
            b = in(reg32) b,
            c = in(reg32) c,
            d = in(reg32) d,
            options(nostack),
        );
    }
}

/// `cp.async.cg.shared.global [dst], [src], 16` (sm_80+, PTX 7.0): starts an asynchronous
/// copy of 16 bytes from global to shared memory that passes through no register (and
/// caches at L2 only, `.cg`), after `cvta.to.global` of `src` and `cvta.to.shared` of
/// `dst` (a 32-bit shared-window address). The copy is performed at some point before
/// the thread's next [`copy_async_wait_all`] (or the [`copy_async_wait_group`] that leaves
/// its group no longer pending) completes; until then neither address may be
/// accessed by anyone, and other threads see the bytes only after that wait followed by a
/// barrier that orders them (`bar.warp.sync` for the warp, `barrier.sync` for the block).
///
/// # Safety
/// - `dst` is a generic address of the executing block's shared memory and `src` one of
///   global memory, both 16-byte aligned, valid for 16 bytes.
/// - Nothing reads or writes `dst`, and nothing writes `src`, from this call until the
///   thread's next [`copy_async_wait_all`] or covering [`copy_async_wait_group`] has
///   completed (and, for other threads, a barrier after it).
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub unsafe fn copy_async_16(dst: *mut [u32; 4], src: *const [u32; 4]) {
    // SAFETY: the caller's contract; reads 16 bytes of global memory and writes 16 bytes
    // of shared memory, nothing else (not `nomem`: the compiler keeps other accesses in
    // order around it).
    unsafe {
        asm!(
            "cvta.to.shared.u64 {shared}, {dst};",
            "cvt.u32.u64 {address}, {shared};",
            "cvta.to.global.u64 {global}, {src};",
            "cp.async.cg.shared.global [{address}], [{global}], 16;",
            dst = in(reg64) dst,
            shared = out(reg64) _,
            address = out(reg32) _,
            src = in(reg64) src,
            global = out(reg64) _,
            options(nostack),
        );
    }
}

/// `cp.async.commit_group` (sm_80+): closes the group of this thread's
/// [`copy_async_16`] copies started since the last commit, so that
/// [`copy_async_wait_group`] can wait for the older groups only.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub fn copy_async_commit() {
    // SAFETY: no operands and no precondition. Not `nomem`: the compiler keeps the copies
    // before it.
    unsafe { asm!("cp.async.commit_group;", options(nostack)) }
}

/// sm_70 has no `cp.async`: nothing to commit (its copies go through registers).
#[cfg(not(target_feature = "sm_80"))]
#[inline(always)]
pub fn copy_async_commit() {}

/// `cp.async.wait_group N` (sm_80+): waits until at most `N` of this thread's committed
/// groups of copies are still pending (the newest `N`), so every older copy has landed
/// and is visible to this thread; to others only after a barrier that follows this wait.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub fn copy_async_wait_group<const N: u32>() {
    // SAFETY: no precondition: it only waits for this thread's own copies. Not `nomem`,
    // so the compiler moves no access of the copied memory across it.
    unsafe { asm!("cp.async.wait_group {n};", n = const N, options(nostack)) }
}

/// sm_70 has no `cp.async`: nothing to wait for.
#[cfg(not(target_feature = "sm_80"))]
#[inline(always)]
pub fn copy_async_wait_group<const N: u32>() {}

/// `cp.async.wait_all` (sm_80+): waits until every [`copy_async_16`] this thread started
/// has been performed (it commits them as one group and waits for it). The copied bytes
/// are then visible to this thread; to other threads only after a barrier that follows
/// this wait in each writer (`bar.warp.sync`, `barrier.sync`).
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub fn copy_async_wait_all() {
    // SAFETY: no operands and no precondition: it only waits for this thread's own copies.
    // Not `nomem`, so the compiler moves no access of the copied memory across it.
    unsafe { asm!("cp.async.wait_all;", options(nostack)) }
}
