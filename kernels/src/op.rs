//! Reduction and scan operators: an associative combine with its identity.
//!
//! Every reduction and scan in warpsafe takes an [`Operator`]. Built in: [`Sum`] (wrapping
//! for integers), [`Min`], [`Max`] for `i32`, `u32`, `i64`, `u64`, `f32`, `f64`, and
//! [`BitAnd`], [`BitOr`], [`BitXor`] for the integers. Your own operator over any
//! `bytemuck::Pod` type is a unit struct implementing [`Operator`].
//!
//! Reductions apply `combine` in a fixed order for a given group shape, so a float result
//! is the same from run to run; they never reorder operands (`combine(a, b)` always has
//! the lower-ranked lanes' values in `a`), so operators need to be associative but not
//! commutative. An operator that is also commutative says so with
//! [`Operator::COMMUTATIVE`]; the grid reductions of [`crate::reduce`] then read their
//! input in the order that is fastest for the memory system (each thread folds an
//! interleaved stride of 16-byte vectors) instead of in index order. Every built-in
//! operator is commutative.

/// An associative binary operator with an identity element.
///
/// Laws the implementation must keep (reductions are wrong otherwise):
/// `combine(combine(a, b), c) == combine(a, combine(b, c))` and
/// `combine(identity(), a) == a == combine(a, identity())`.
/// Floating-point addition is associative only up to rounding; warpsafe documents which
/// order it uses so that results are reproducible.
pub trait Operator<T>: Copy {
    /// `true` when `combine(a, b) == combine(b, a)` for all `a`, `b`, which lets a grid
    /// reduction combine elements in an interleaved order (see [`crate::reduce`]); the
    /// order is still fixed for a given input size and launch shape, so results stay
    /// reproducible. Leave it `false` (the default) unless the law holds: a reduction over
    /// a non-commutative operator that claims it gives wrong results. Float `+`, `min`
    /// and `max` count as commutative: `a + b` and `b + a` round identically; `min` and
    /// `max` may only differ in the sign of a zero result or a NaN payload.
    const COMMUTATIVE: bool = false;
    /// The element that leaves every value unchanged.
    fn identity(self) -> T;
    /// Combines two values; `a` comes from lower ranks than `b`.
    fn combine(self, a: T, b: T) -> T;
}

/// Addition (wrapping for integers).
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum;
/// Minimum (for floats, `f32::min`: a NaN operand is ignored).
#[derive(Clone, Copy, Debug, Default)]
pub struct Min;
/// Maximum (for floats, `f32::max`: a NaN operand is ignored).
#[derive(Clone, Copy, Debug, Default)]
pub struct Max;
/// Bitwise and.
#[derive(Clone, Copy, Debug, Default)]
pub struct BitAnd;
/// Bitwise or.
#[derive(Clone, Copy, Debug, Default)]
pub struct BitOr;
/// Bitwise exclusive or.
#[derive(Clone, Copy, Debug, Default)]
pub struct BitXor;

macro_rules! integer_operators {
    ($($t:ty),*) => {$(
        impl Operator<$t> for Sum {
            const COMMUTATIVE: bool = true;
            #[inline(always)]
            fn identity(self) -> $t { 0 }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { a.wrapping_add(b) }
        }
        impl Operator<$t> for Min {
            const COMMUTATIVE: bool = true;
            #[inline(always)]
            fn identity(self) -> $t { <$t>::MAX }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { if b < a { b } else { a } }
        }
        impl Operator<$t> for Max {
            const COMMUTATIVE: bool = true;
            #[inline(always)]
            fn identity(self) -> $t { <$t>::MIN }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { if b > a { b } else { a } }
        }
        impl Operator<$t> for BitAnd {
            const COMMUTATIVE: bool = true;
            #[inline(always)]
            fn identity(self) -> $t { !0 }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { a & b }
        }
        impl Operator<$t> for BitOr {
            const COMMUTATIVE: bool = true;
            #[inline(always)]
            fn identity(self) -> $t { 0 }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { a | b }
        }
        impl Operator<$t> for BitXor {
            const COMMUTATIVE: bool = true;
            #[inline(always)]
            fn identity(self) -> $t { 0 }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { a ^ b }
        }
    )*};
}
integer_operators!(i32, u32, i64, u64);

macro_rules! float_operators {
    ($($t:ty),*) => {$(
        impl Operator<$t> for Sum {
            const COMMUTATIVE: bool = true;
            #[inline(always)]
            fn identity(self) -> $t { 0.0 }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { a + b }
        }
        impl Operator<$t> for Min {
            const COMMUTATIVE: bool = true;
            #[inline(always)]
            fn identity(self) -> $t { <$t>::INFINITY }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { a.min(b) }
        }
        impl Operator<$t> for Max {
            const COMMUTATIVE: bool = true;
            #[inline(always)]
            fn identity(self) -> $t { <$t>::NEG_INFINITY }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { a.max(b) }
        }
    )*};
}
float_operators!(f32, f64);
