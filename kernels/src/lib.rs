//! # warpsafe (device side)
//!
//! The library that GPU kernels written in Rust depend on (`#![no_std]` on the GPU). It
//! compiles for rustc's `nvptx64-nvidia-cuda` target (through `warpsafe-build`) and for
//! the host, where it runs kernels on a CPU emulator.
//!
//! ## The safety model
//!
//! Since Volta (sm_70) the lanes of a warp are scheduled independently. Every warp
//! collective therefore names its participants in a 32-bit mask, and it is undefined
//! behaviour (a hang or garbage) when the caller is not in the mask, when a lane of the
//! mask does not reach the same collective (it exited, or is on another path), or when
//! lanes of one mask meet at different collectives. warpsafe offers two layers:
//!
//! 1. **Raw** ([`warp`], [`barrier`], the pointer-taking parts of [`atomic`]): `unsafe fn`s
//!    with explicit masks. Each `# Safety` section states the hardware rule the caller
//!    must keep. They are thin and `#[inline(always)]`, for code that proves its masks by
//!    other means.
//! 2. **Safe** ([`group`]): groups in the spirit of CUDA's cooperative groups. A group is
//!    made from the block's geometry ([`group::Warp`], [`group::Tile`], whose size is
//!    checked at compile time), from the active mask ([`group::Coalesced`]) or from a vote
//!    ([`group::Group::labeled_partition`], [`group::Group::binary_partition`]); its
//!    collectives are methods that always use the mask it was made from, so a caller cannot
//!    pass a wrong one, and that mask always contains the caller. What the compiler cannot
//!    prove, that every lane of the group is present at the collective, is checked at run
//!    time like a bounds check: before each collective the group compares its mask with
//!    `activemask`, and a missing lane makes the kernel print the collective, source
//!    location, block, warp, lane and both masks, then `trap` (the host gets
//!    `Error::KernelFailed` naming the kernel). The check costs one `activemask`, a compare
//!    and a branch per collective (measured by `warpsafe-bench`'s `group-checks`: see the
//!    README); only the `unsafe` [`group::Group::assume_present`] removes it, for the group
//!    it returns ([`group::Unchecked`]); no build flag does. [`group::Group`] is sealed, and
//!    the check also traps when the caller is not in the mask. Group ballots and matches
//!    return rank bits (bit r = rank r).
//!
//! ## Safe kernels
//!
//! A kernel declared with [`kernel!`] as a plain `fn` is a *safe kernel*: its body is
//! checked as safe code, and the host launches it with a safe call whose arguments are
//! checked against the kernel's parameter types at compile time
//! (`device.launch(&vecadd, config, (&a, &b, &mut c))` in `warpsafe-host`). Memory comes in
//! as typed views ([`global`]) and block-shared arrays ([`shared!`]):
//!
//! ```
//! use warpsafe::global::{DisjointSlice, Slice};
//!
//! warpsafe::kernel! {
//!     /// `c[i] = a[i] + b[i]`.
//!     pub fn vecadd(a: Slice<f32>, b: Slice<f32>, c: DisjointSlice<f32>) {
//!         for i in warpsafe::thread::grid_stride(c.len()) {
//!             c.write(i, a[i] + b[i]); // each index checked against its view's length
//!         }
//!     }
//! }
//! # fn main() -> Result<(), warpsafe_host::Error> {
//! # assert_eq!(vecadd.params()[2].ty, "DisjointSlice<f32>");
//! // Host side (warpsafe-host), here on the CPU emulator:
//! # static PROGRAM: warpsafe_host::Program =
//! #     warpsafe_host::Program::new("doc", &[]).with_kernels(&[vecadd.untyped()]);
//! let device = warpsafe_host::Device::emulator();
//! let f = device.load(&PROGRAM)?.kernel(&vecadd)?;
//! let (a, b) = (device.upload(&[1.0f32, 2.0, 3.0])?, device.upload(&[10.0f32; 3])?);
//! let mut c = device.alloc_zeroed::<f32>(3)?;
//! device.launch(&f, warpsafe_host::LaunchConfig::linear(1, 32), (&a, &b, &mut c))?;
//! assert_eq!(c.download()?, vec![11.0, 12.0, 13.0]);
//! # Ok(())
//! # }
//! ```
//!
//! Three tiers, each explicit in the source:
//!
//! | tier | what you write | what is checked, and where | what it costs |
//! | --- | --- | --- | --- |
//! | safe | `fn` kernels; [`global::Slice`], [`global::DisjointSlice`], [`global::AtomicSlice`], [`shared::SharedArray::write_own`], [`shared::SharedArray::atomic`], [`group`] collectives, `Pod` scalars | launch arity and types at compile time; buffers of the launching device, shapes, cooperative grids on the host before the launch; every index at run time (a trap with kernel, block, thread, index, length and file:line on the GPU, `ErrorKind::GlobalOutOfBounds`/`SharedOutOfBounds` on the emulator); group presence at run time; one writer per `DisjointSlice` element by construction ([`thread::Index`]) | a compare and a not-taken branch per access, most of them removed by LLVM in loops bounded by the view's length; one `activemask` per group collective |
//! | `unsafe` with a stated contract | `unsafe { .. }` in a safe kernel with a `// SAFETY:` line: reads of shared memory other threads wrote ([`shared::SharedArray::read`]), block barriers ([`barrier`]), [`global::Slice::get_unchecked`], [`shared::SharedSlice::read_unchecked`], the raw [`warp`] collectives | what the contract says is the caller's to prove; the CPU emulator checks races, barriers and masks when the kernel runs | nothing beyond the instruction |
//! | raw | `unsafe fn` kernels over raw pointers, launched with `unsafe` calls (`Device::launch_unsafe` with typed arguments, `Device::launch_raw` with a `*mut c_void` array) | the argument count, and on the emulator the warp rules | nothing |
//!
//! What still needs `unsafe`, and why: a shared-memory read of another thread's write
//! needs a barrier between the two, which depends on every thread's path through the
//! kernel, not on a type; a block barrier deadlocks the block unless every live thread
//! reaches it; the raw collectives trust their masks. Each is checked by the emulator.
//!
//! Ordering between threads goes through [`fence`] (scoped `fence.sc`/`fence.acq_rel`)
//! and [`atomic`] (scoped atomics whose ordering is a type parameter, so an ordering PTX
//! lacks does not compile). `core::sync::atomic` must not be used in kernels: on nvptx64
//! it drops memory orderings (rust-lang/rust#136480).
//!
//! Codegen: [`arch`] is the only module that knows what it runs on. Collectives lower to
//! LLVM NVVM intrinsics, which LLVM marks `convergent`, so no optimisation moves them
//! across a branch (the tests check this in the IR). `asm!` is not convergent on this
//! toolchain and is used only for instructions that are not collectives (fences, scoped
//! atomics, ordered loads and stores, `fns`).
//!
//! ## From CUDA C++
//!
//! | CUDA C++ | warpsafe (safe) | warpsafe (raw) | PTX |
//! | --- | --- | --- | --- |
//! | `threadIdx`, `blockDim`, `blockIdx`, `gridDim` | [`thread::thread_idx`], [`thread::block_dim`], [`thread::block_idx`], [`thread::grid_dim`] | | `%tid`, `%ntid`, `%ctaid`, `%nctaid` |
//! | lane id, `%lanemask_lt` ... | [`thread::lane_id`] | [`warp::lanemask_lt`] (eq, le, gt, ge) | `%laneid`, `%lanemask_*` |
//! | `__shfl_sync`, `_up`, `_down`, `_xor` | [`group::Group::shfl`], `shfl_up`, `shfl_down`, `shfl_xor` | [`warp::shfl_idx_sync`], [`warp::shfl_up_sync`], [`warp::shfl_down_sync`], [`warp::shfl_xor_sync`] (any `Pod` type, width, `_p` with validity) | `shfl.sync.{idx,up,down,bfly}.b32` |
//! | `__ballot_sync`, `__any_sync`, `__all_sync`, `__uni_sync` | [`group::Group::ballot`], `any`, `all` | [`warp::ballot_sync`], [`warp::any_sync`], [`warp::all_sync`], [`warp::uni_sync`] | `vote.sync.*` |
//! | `__activemask` | [`group::Coalesced::active`] | [`warp::active_mask`] | `activemask.b32` |
//! | `__match_any_sync`, `__match_all_sync` | [`group::Group::match_any`], `match_all` | [`warp::match_any_sync`], [`warp::match_all_sync`] | `match.{any,all}.sync.b32/.b64` |
//! | `__reduce_add_sync` ... (sm_80), `cg::reduce` | [`group::Group::reduce`] with [`op::Sum`] ... (any operator; `redux.sync` chosen at compile time for 32-bit integer ones on sm_80+) | [`warp::reduce_sync`], [`warp::reduce_add_sync`] ... (shuffle fallback on sm_70) | `redux.sync.*` or `shfl.sync.bfly`/`.idx` |
//! | `__syncwarp` | [`group::Group::sync`] | [`warp::sync_warp`] | `bar.warp.sync` |
//! | `cg::invoke_one` / `elect.sync` | | [`warp::elect_sync`] (lowest-lane fallback before sm_90) | `elect.sync` |
//! | `cg::tiled_partition<N>`, `coalesced_threads`, `labeled_partition`, `binary_partition` | [`group::Warp::tiles`], [`group::Coalesced::active`], [`group::Group::labeled_partition`], [`group::Group::binary_partition`] | | |
//! | `cg::reduce`, `cg::inclusive_scan`, `cg::exclusive_scan` | [`group::Group::reduce`], [`group::Group::inclusive_scan`], [`group::Group::exclusive_scan`] | | shuffles |
//! | `cub::DeviceScan::InclusiveSum`, `cub::DeviceSelect::If`, `cub::DevicePartition::If` | `warpsafe_host::scan::Scanner`, `Selector` (kernels: [`scan`], [`scan_kernels!`], [`select_kernels!`]) | [`scan::lookback`] (the look-back protocol) | one launch, decoupled look-back |
//! | `cub::DeviceHistogram::HistogramEven`, `HistogramRange`, `MultiHistogramEven` | `warpsafe_host::histogram::Histogram` (kernels: [`histogram`], [`histogram_kernels!`]) | | one launch, private bins per lane in shared memory |
//! | `__global__ void f(const float* a, float* c, int n)` | [`kernel!`] `fn f(a: global::Slice<f32>, c: global::DisjointSlice<f32>)` | `unsafe fn f(a: *const f32, c: *mut f32, n: u64)` | `.entry` |
//! | `f<<<grid, block, shmem>>>(args)` | `device.launch(&f, LaunchConfig { grid, block, shared_mem_bytes }, (&a, &mut c))` (`warpsafe-host`) | `device.launch_raw(&f, config, &kernel_args![..])` | `cuLaunchKernel` |
//! | `cudaMalloc` + `cudaMemcpy`, `cudaMemset(p, 0, n)` | `device.upload(&host)`, `buffer.download()`, `device.alloc_zeroed(n)` (`warpsafe-host`) | `DeviceBuffer::device_address` | `cuMemAlloc`, `cuMemcpy*`, `cuMemsetD8` |
//! | `const T* __restrict__` + length; `T*` where thread `i` writes `out[i]` | [`global::Slice`]; [`global::DisjointSlice`] with [`thread::index`], [`thread::grid_stride`] | `Slice::get_unchecked`, `DisjointSlice::write_unchecked` | `ld`/`st` (the slice's vector loads: `ld.global.nc`) |
//! | `atomicAdd(&out[i], v)` on global memory | [`global::AtomicSlice::at`]`(i).fetch_add(v, Relaxed)` | [`atomic::Atomic::from_ptr`] | `atom.relaxed.gpu.add` |
//! | `__shared__ T a[N]` | [`shared!`] `static A: [T; N];`, [`shared::SharedArray::write_own`] / `read_own` | [`shared::SharedArray::read`] / `write` | `.shared` |
//! | `extern __shared__ T a[]` | | [`shared::dynamic`] | `.extern .shared` |
//! | `atomicAdd(&a[i], v)` on shared memory, `atomicAdd_block` | [`shared::SharedArray::atomic`]`(i).fetch_add(v, Relaxed)` | `BlockAtomicU32::from_ptr` | `atom.relaxed.cta.add` |
//! | `__syncthreads`, `__syncthreads_count/and/or` | | [`barrier::sync`], [`barrier::sync_count`], [`barrier::sync_and`], [`barrier::sync_or`] | `barrier.sync 0`, `barrier.red.*` |
//! | named barrier `bar.sync id, n` | | [`barrier::sync_named`] | `barrier.sync id, count` |
//! | `__threadfence_block`, `__threadfence`, `__threadfence_system` | [`fence::block_sc`], [`fence::device_sc`], [`fence::system_sc`] (`acq_rel`: [`fence::block`], [`fence::device`], [`fence::system`]) | | `fence.sc.{cta,gpu,sys}` |
//! | `atomicAdd`, `atomicCAS`, ... with `cuda::atomic_ref<T, scope>` | [`atomic::Atomic`] (`BlockAtomicU32`, `DeviceAtomicU64`, ...: `fetch_add`, `add`, `compare_exchange`, ...) | `Atomic::from_ptr` | `atom`/`red.{sem}.{scope}` |
//! | `cuda::atomic_ref::load(memory_order_acquire)` | [`atomic::Atomic::load`] with [`atomic::Acquire`] | | `ld.acquire.{scope}` |
//! | `volatile` loads and stores | | [`atomic::load_volatile`], [`atomic::store_volatile`] | `ld.volatile`, `st.volatile` |
//! | `__popc(x)`, `__popcll(x)` | `x.count_ones()` (Rust's own) | | `popc.b32`, `popc.b64` |
//! | `__clz(x)`, `__ffs(x)` (1-based lowest set bit, 0 for 0) | `x.leading_zeros()`, `if x == 0 { 0 } else { x.trailing_zeros() + 1 }` | | `clz.b32`; `brev.b32` + `clz.b32` |
//!
//! Kernel entry points are not part of this crate: a crate that defines kernels depends on
//! `warpsafe` and declares its own with [`kernel!`] (`extern "ptx-kernel"` functions on the
//! GPU, emulator kernels on the host), so its PTX holds its kernels and nothing of
//! warpsafe's own (those live in `warpsafe-entry`).
//!
//! ## On the host: the CPU emulator
//!
//! Compiled for the host, every module builds too: [`arch`] then drives the CPU emulator
//! in `emu` (host only), which runs kernels declared with [`kernel!`] without a GPU,
//! under independent thread scheduling with a seeded scheduler, and reports every broken
//! warp rule (a mask without its caller, mismatched or never-completing collectives,
//! barriers not reached, shared-memory out-of-bounds accesses and data races) as an error
//! naming the kernel, the threads, the masks and the source locations.
#![cfg_attr(target_arch = "nvptx64", no_std)]
// NVVM intrinsics are the only way to reach the convergent warp collectives from Rust on
// this target (see `arch`); the feature is internal to rustc, hence the allow. `asm!` on
// nvptx64 is still experimental; it is used only for non-collective instructions.
#![cfg_attr(
    target_arch = "nvptx64",
    feature(link_llvm_intrinsics, asm_experimental_arch, allow_internal_unstable),
    allow(internal_features)
)]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

pub mod arch;
pub mod atomic;
pub mod barrier;
/// The CPU emulator (host only): the `warpsafe-emu` crate, which [`arch`] drives on the
/// host.
#[cfg(not(target_arch = "nvptx64"))]
pub use warpsafe_emu as emu;

/// `bytemuck`, for kernel crates' own element types: `#[derive(Clone, Copy,
/// warpsafe::bytemuck::Pod, warpsafe::bytemuck::Zeroable)]` with
/// `#[bytemuck(crate = "warpsafe::bytemuck")]` and `#[repr(C)]`, without a direct dependency.
pub use bytemuck;
pub mod fence;
pub mod global;
pub mod group;
pub mod histogram;
pub mod kernel;
pub mod op;
pub mod reduce;
pub mod scan;
pub mod shared;
pub mod thread;
pub mod warp;

/// A panic in a kernel cannot unwind: it executes `trap`, which aborts the whole launch,
/// and the host sees `CUDA_ERROR_LAUNCH_FAILED` (or an illegal-instruction error) from the
/// next synchronising call.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    arch::trap()
}
