//! What the declaration macros ([`crate::kernel!`], [`crate::shared!`]) expand to on the
//! GPU, and the accessors of the dynamic shared-memory window.
//!
//! Rust has no address spaces, so a `static` cannot live in PTX's `.shared` state space
//! (`#[link_section]` still yields `.global`). The builder (`warpsafe-build`) therefore
//! links in an IR module of its own that declares the block's shared memory as
//! `addrspace(3)` globals and defines the two functions below, which give their generic
//! addresses as `addrspacecast`s LLVM can see through: accesses derived from them become
//! `ld.shared`/`st.shared`. A [`crate::shared!`] array announces itself to the builder with
//! a module-level PTX comment (`// warpsafe-shared-array ID BYTES ALIGN`); the builder
//! makes it the `.shared` array `warpsafe_shared_ID`, ID being a hash of the declaration's
//! module path, source position and type, so two declarations never collide when the
//! builder links several crates into one module. Like CUDA's `static __shared__`, every
//! block gets its own copy, shared by all calls in the block.

// SAFETY: warpsafe-build links an IR module that defines these functions with exactly
// these signatures; they read and write no memory (the second traps on an id that no
// `shared!` declaration announced, which `SharedStorage::base` never passes).
unsafe extern "C" {
    /// The generic address of the block's dynamic shared-memory window (PTX
    /// `.extern .shared .align 16 .b8 warpsafe_dynamic_shared[]`).
    safe fn warpsafe_dynamic_shared_window() -> *mut u8;
    /// The generic address of the static shared array `warpsafe_shared_<id>`, which a
    /// [`crate::shared!`] declaration announced with its `// warpsafe-shared-array`
    /// comment.
    #[doc(hidden)]
    pub safe fn warpsafe_static_shared(id: u64) -> *mut u8;
}

/// Expands a kernel declaration to a PTX entry point: `#[no_mangle]` keeps the Rust
/// name as the PTX name the host looks up, and `extern "ptx-kernel"` makes it a
/// `.entry`. The macro may use the unstable `ptx-kernel` ABI itself
/// (`allow_internal_unstable`), so the crate declaring kernels needs no feature gate. A
/// safe kernel stays a safe function, so its body is checked as safe code.
#[doc(hidden)]
#[macro_export]
#[allow_internal_unstable(abi_ptx)]
macro_rules! __warpsafe_kernel {
    (
        [$($unsafety:tt)?] $safety:ident
        $(#[$attr:meta])* ($($vis:tt)*) $name:ident ($([$($pattr:ident)?] $arg:ident : $ty:ty),*) $body:block
    ) => {
        $(#[$attr])*
        #[no_mangle]
        $($vis)* $($unsafety)? extern "ptx-kernel" fn $name($($arg: $ty),*) $body
    };
}

/// Announces launch bounds of the kernel entry `$name` to the builder with a module-level
/// PTX comment (`// warpsafe-launch-bounds NAME THREADS BLOCKS`); the builder puts
/// `.maxntid THREADS, 1, 1` and `.minnctapersm BLOCKS` on the entry, so that ptxas
/// allocates registers for BLOCKS resident blocks of THREADS threads per SM (CUDA C++'s
/// `__launch_bounds__(THREADS, BLOCKS)`). The GPU then refuses a launch of more than
/// THREADS threads per block.
#[doc(hidden)]
#[macro_export]
#[allow_internal_unstable(asm_experimental_arch)]
macro_rules! __warpsafe_launch_bounds {
    ($name:ident, $threads:expr, $blocks:expr) => {
        ::core::arch::global_asm!(
            ::core::concat!("// warpsafe-launch-bounds ", ::core::stringify!($name), " {threads} {blocks}"),
            threads = const $threads,
            blocks = const $blocks,
        );
    };
}

/// Declares the PTX storage of one [`crate::shared!`] array and implements
/// [`crate::shared::SharedStorage`] for `$storage` over it.
#[doc(hidden)]
#[macro_export]
#[allow_internal_unstable(asm_experimental_arch)]
macro_rules! __warpsafe_shared_storage {
    ($storage:ident, $elem:ty, $len:expr, $name:ident) => {
        const _: () = assert!($len > 0, "a shared array needs at least one element");
        impl $storage {
            /// Distinguishes this array's PTX name from every other declaration: the
            /// module path alone repeats when a macro declares arrays in several
            /// functions of one module. (Inside a macro's expansion the position is the
            /// invocation's, so two arrays of the same name, type and length that one
            /// invocation declares collide: the builder refuses them.)
            const PTX_ID: u64 = $crate::arch::path_hash(::core::concat!(
                ::core::module_path!(),
                ::core::stringify!($name),
                ":",
                ::core::file!(),
                ::core::line!(),
                ":",
                ::core::column!(),
                ::core::stringify!($elem),
                ::core::stringify!($len)
            ));
        }
        ::core::arch::global_asm!(
            "// warpsafe-shared-array {id} {bytes} {align}",
            align = const $crate::arch::shared_alignment(::core::mem::align_of::<$elem>()),
            id = const Storage::PTX_ID,
            bytes = const ::core::mem::size_of::<$elem>() * $len,
        );

        // SAFETY: `base` returns the start of the `.shared` array that the builder makes
        // for the comment above: `LEN` elements of `Elem` at `Elem`'s alignment (or more),
        // for the whole lifetime of each block.
        unsafe impl $crate::shared::SharedStorage for $storage {
            type Elem = $elem;
            const LEN: usize = $len;

            #[inline(always)]
            fn base() -> *mut $elem {
                $crate::arch::warpsafe_static_shared(Storage::PTX_ID).cast()
            }
        }
    };
}

/// The start of this block's dynamic shared memory (16-byte aligned) and its size in
/// bytes (`%dynamic_smem_size`, the launch's `shared_mem_bytes`).
#[inline(always)]
pub fn dynamic_shared() -> (*mut u8, usize) {
    let bytes: u32;
    // SAFETY: reads a special register; reads and writes no memory.
    unsafe {
        core::arch::asm!(
            "mov.u32 {bytes}, %dynamic_smem_size;",
            bytes = out(reg32) bytes,
            options(pure, nomem, nostack),
        );
    }
    (warpsafe_dynamic_shared_window(), bytes as usize)
}

/// Reads element `*ptr` of a shared array: a plain load on the GPU (the emulator tracks
/// it for its race check).
///
/// # Safety
/// `ptr` is valid for reads and the read does not race with a write by another thread.
#[inline(always)]
pub unsafe fn shared_read<T: bytemuck::Pod>(ptr: *const T) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { ptr.read() }
}

/// Writes element `*ptr` of a shared array: a plain store on the GPU.
///
/// # Safety
/// `ptr` is valid for writes and the write does not race with another thread's access.
#[inline(always)]
pub unsafe fn shared_write<T: bytemuck::Pod>(ptr: *mut T, value: T) {
    // SAFETY: forwarded from the caller.
    unsafe { ptr.write(value) }
}

#[repr(C)]
struct OutOfBoundsArgs {
    memory: *const u8,
    file: *const u8,
    line: u32,
    block: [u32; 3],
    thread: [u32; 3],
    index: u64,
    len: u64,
}

/// Reports an index past the end of a checked view of `memory` (a shared array, a global
/// buffer), then traps: the launch fails and the host's error names the kernel.
#[cold]
#[inline(never)]
pub fn index_out_of_bounds(
    memory: crate::arch::Memory,
    index: usize,
    len: usize,
    at: &core::panic::Location<'_>,
) -> ! {
    let mut file = [0u8; 160];
    crate::arch::c_file_name(at, &mut file);
    let (block, thread) = (super::block_idx(), super::thread_idx());
    let memory = match memory {
        crate::arch::Memory::Shared => c"shared-memory",
        crate::arch::Memory::Global => c"global-memory",
    };
    let args = OutOfBoundsArgs {
        memory: memory.as_ptr().cast(),
        file: file.as_ptr(),
        line: at.line(),
        block: [block.x, block.y, block.z],
        thread: [thread.x, thread.y, thread.z],
        index: index as u64,
        len: len as u64,
    };
    // SAFETY: the format's conversions match OutOfBoundsArgs field by field (two string
    // pointers, seven u32s, two u64s); repr(C) aligns each to its size.
    unsafe {
        super::vprintf(
            c"warpsafe: %s index out of bounds at %s:%u: block (%u, %u, %u), thread (%u, %u, %u): index %llu, length %llu\n",
            (&args as *const OutOfBoundsArgs).cast(),
        );
    }
    super::trap()
}

/// The arguments of the shuffle-width message, laid out as CUDA's `vprintf` reads them.
#[repr(C)]
struct ShuffleWidthArgs {
    width: u32,
    file: *const u8,
    line: u32,
    block: [u32; 3],
    thread: [u32; 3],
}

/// Prints `warpsafe: shuffle width W is not a power of two in 1..=32, at FILE:LINE: block
/// (x, y, z), thread (x, y, z)` and executes `trap`: `shfl.sync` with such a width reads
/// an unspecified lane.
#[cold]
#[inline(never)]
pub fn invalid_shuffle_width(width: u32, at: &core::panic::Location<'_>) -> ! {
    let mut file = [0u8; 160];
    crate::arch::c_file_name(at, &mut file);
    let (block, thread) = (super::block_idx(), super::thread_idx());
    let args = ShuffleWidthArgs {
        width,
        file: file.as_ptr(),
        line: at.line(),
        block: [block.x, block.y, block.z],
        thread: [thread.x, thread.y, thread.z],
    };
    // SAFETY: the format's conversions match ShuffleWidthArgs field by field (a u32, a
    // string pointer, seven u32s); repr(C) aligns each to its size.
    unsafe {
        super::vprintf(
            c"warpsafe: shuffle width %u is not a power of two in 1..=32, at %s:%u: block (%u, %u, %u), thread (%u, %u, %u)\n",
            (&args as *const ShuffleWidthArgs).cast(),
        );
    }
    super::trap()
}

/// Nothing on the GPU: no special register tells whether the launch is cooperative (the
/// emulator checks it; see `reduce::grid::GridBarrier::sync`).
#[inline(always)]
pub fn requires_cooperative_launch(_at: &core::panic::Location<'_>) {}

/// Nothing on the GPU: a store to global memory through a typed view (the emulator checks
/// that the value is not an undefined one).
#[inline(always)]
pub fn global_store(_value: &[u8], _at: &core::panic::Location<'_>) {}

/// Nothing on the GPU: an access to element `index` of the global buffer at `base`
/// through `global::UnsafeSlice` (the emulator checks it for races).
#[inline(always)]
pub fn global_access(
    _base: usize,
    _index: usize,
    _bytes: usize,
    _write: bool,
    _at: &core::panic::Location<'_>,
) {
}
