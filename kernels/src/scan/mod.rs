//! Device-wide scans, selection and partition, each in one launch.
//!
//! | module | what |
//! | --- | --- |
//! | [`lookback`] | the inter-block protocol: tile tickets, epoch-tagged status words, the decoupled look-back in a canonical order (the `unsafe` core, with its memory-ordering argument) |
//! | [`tile`] | how a thread reads and writes its run of a tile (16-byte vectors) |
//! | [`device`] | inclusive and exclusive scan over any [`Operator`] (it need not commute), in place or not |
//! | [`select`] | selection and partition by a [`select::Predicate`] or a flags buffer, with a `u64` count |
//! | [`segmented`] | segmented reduce over CSR offsets as a scan of the input in windows, the look-back carrying the partials of segments that cross tiles |
//!
//! The host's `warpsafe_host::scan::{Scanner, Selector}` launch these; kernels for your
//! own element types, operators and predicates: [`crate::scan_kernels!`],
//! [`crate::select_kernels!`].
//!
//! Determinism: the tile length is a function of the element type only and every prefix
//! is combined in one canonical order ([`lookback`]), so a float scan gives the same bits
//! on every run, GPU and emulator alike.
//!
//! [`Operator`]: crate::op::Operator

pub mod device;
pub mod lookback;
pub mod segmented;
pub mod select;
pub mod tile;

/// Declares a device-wide scan kernel for one element type and operator, launched by the
/// host's `Scanner`, with this parameter list:
///
/// `(input: *const T, output: *mut T, len: u64, status: *mut u64, counter: *mut u32,
/// epoch: u32, exclusive: u32)`: [`device::scan`] over [`lookback::TaggedStatus`] slots
/// with `epoch`, exclusive when `exclusive != 0`, with
/// [`device::shared_bytes`]`::<T>(threads)` bytes of dynamic shared memory.
///
/// ```
/// /// String-like concatenation of digits: `a ⊕ b = a * 10 + b`, which does not commute.
/// #[derive(Clone, Copy, Default)]
/// pub struct Digits;
/// impl warpsafe::op::Operator<u64> for Digits {
///     fn identity(self) -> u64 {
///         0
///     }
///     fn combine(self, a: u64, b: u64) -> u64 {
///         a.wrapping_mul(10).wrapping_add(b)
///     }
/// }
/// warpsafe::scan_kernels! {
///     u64, Digits => digits_scan;
/// }
/// assert_eq!(digits_scan.param_count(), 7);
/// ```
#[macro_export]
macro_rules! scan_kernels {
    ($($t:ty, $op:expr => $name:ident;)*) => {$(
        $crate::kernel! {
            #[doc = concat!("Device-wide scan of `", stringify!($t), "` with `", stringify!($op), "`: ")]
            #[doc = "`warpsafe::scan::device::scan` (parameters: `warpsafe::scan_kernels!`)."]
            ///
            /// # Safety
            /// The contract of `warpsafe::scan::device::scan`, with `status` and `epoch` as
            /// `warpsafe::scan::lookback::TaggedStatus::new` requires.
            pub unsafe fn $name(
                input: *const $t,
                output: *mut $t,
                len: u64,
                status: *mut u64,
                counter: *mut u32,
                epoch: u32,
                exclusive: u32,
            ) {
                // SAFETY: forwarded from the launch contract.
                unsafe {
                    $crate::scan::device::scan::<$t, _, _, { $crate::scan::device::items_per_thread::<$t>() }>(
                        input,
                        output,
                        len,
                        $crate::scan::lookback::TaggedStatus::new(status, epoch),
                        counter,
                        exclusive != 0,
                        $op,
                    )
                }
            }
        }
    )*};
}

/// Declares a selection kernel for one element type and predicate type, launched by the
/// host's `Selector`, with this parameter list:
///
/// `(input: *const T, flags: *const u8, len: u64, output: *mut T, output_len: u64,
/// selected: *mut u64, status: *mut u64, counter: *mut u32, epoch: u32, form: u32,
/// predicate: P)`: [`select::select`] over [`lookback::TaggedStatus`] slots of `u64`
/// with `epoch`, with [`select::shared_bytes`]`::<T>(threads)` bytes of dynamic shared
/// memory. The predicate type must be `bytemuck::Pod` (it is a kernel parameter).
///
/// ```
/// use warpsafe::scan::select::Predicate;
/// /// Keeps the multiples of `self.0`.
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(transparent)]
/// pub struct MultipleOf(pub u32);
/// impl Predicate<u32> for MultipleOf {
///     fn keep(self, value: u32) -> bool {
///         self.0 != 0 && value % self.0 == 0
///     }
/// }
/// warpsafe::select_kernels! {
///     u32, MultipleOf => select_multiples;
/// }
/// assert_eq!(select_multiples.param_count(), 11);
/// ```
#[macro_export]
macro_rules! select_kernels {
    ($($t:ty, $predicate:ty => $name:ident;)*) => {$(
        $crate::kernel! {
            #[doc = concat!("Selection or partition of `", stringify!($t), "` by `", stringify!($predicate), "`: ")]
            #[doc = "`warpsafe::scan::select::select` (parameters: `warpsafe::select_kernels!`)."]
            ///
            /// # Safety
            /// The contract of `warpsafe::scan::select::select`, with `status` and `epoch`
            /// as `warpsafe::scan::lookback::TaggedStatus::new` requires.
            pub unsafe fn $name(
                input: *const $t,
                flags: *const u8,
                len: u64,
                output: *mut $t,
                output_len: u64,
                selected: *mut u64,
                status: *mut u64,
                counter: *mut u32,
                epoch: u32,
                form: u32,
                predicate: $predicate,
            ) {
                // SAFETY: forwarded from the launch contract.
                unsafe {
                    $crate::scan::select::select::<$t, $predicate, _, { $crate::scan::select::items_per_thread::<$t>() }>(
                        input,
                        flags,
                        len,
                        output,
                        output_len,
                        selected,
                        $crate::scan::lookback::TaggedStatus::new(status, epoch),
                        counter,
                        form,
                        predicate,
                    )
                }
            }
        }
    )*};
}
