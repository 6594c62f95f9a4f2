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
    /// The `redux.sync` instruction (sm_80+) that reduces a warp's values of `T` with this
    /// operator in one step, when the hardware has one: the wrapping sum, minimum,
    /// maximum, and, or and xor of 32-bit integers. Every warp reduction of warpsafe
    /// ([`crate::warp::reduce_sync`] and everything built on it) reads this at compile
    /// time and, when it is `Some` and the target is sm_80 or newer, emits that one
    /// instruction instead of shuffles. Only warpsafe's built-in operators over `u32` and
    /// `i32` have one: a [`Redux`] cannot be made outside this crate, so your own operators
    /// keep the default `None` and reduce with shuffles (the PTX checks of `tests/` show
    /// which instruction each type, operator and target gets).
    const REDUX: Option<Redux> = None;
    /// The element that leaves every value unchanged.
    fn identity(self) -> T;
    /// Combines two values; `a` comes from lower ranks than `b`.
    fn combine(self, a: T, b: T) -> T;
}

/// A reduction that one `redux.sync` instruction performs over 32-bit integers (sm_80+):
/// the value of [`Operator::REDUX`] for warpsafe's built-in integer operators. Its values
/// are made only inside warpsafe: an operator of yours could only copy a built-in
/// operator's, and so claim to be that operator (its reductions would then compute the
/// built-in operator; a wrong claim gives wrong values, never undefined behaviour, since
/// `redux.sync` only reads and writes the 32-bit value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Redux(pub(crate) ReduxKind);

/// The `redux.sync` variants: `.add` (the same bits signed or not), `.min`/`.max` signed
/// or unsigned, `.and`/`.or`/`.xor` (`.b32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReduxKind {
    Add,
    MinU32,
    MaxU32,
    MinS32,
    MaxS32,
    And,
    Or,
    Xor,
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
    ($($t:ty: $min:expr, $max:expr, $bits:expr;)*) => {$(
        impl Operator<$t> for Sum {
            const COMMUTATIVE: bool = true;
            const REDUX: Option<Redux> = if $bits { Some(Redux(ReduxKind::Add)) } else { None };
            #[inline(always)]
            fn identity(self) -> $t { 0 }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { a.wrapping_add(b) }
        }
        impl Operator<$t> for Min {
            const COMMUTATIVE: bool = true;
            const REDUX: Option<Redux> = $min;
            #[inline(always)]
            fn identity(self) -> $t { <$t>::MAX }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { if b < a { b } else { a } }
        }
        impl Operator<$t> for Max {
            const COMMUTATIVE: bool = true;
            const REDUX: Option<Redux> = $max;
            #[inline(always)]
            fn identity(self) -> $t { <$t>::MIN }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { if b > a { b } else { a } }
        }
        impl Operator<$t> for BitAnd {
            const COMMUTATIVE: bool = true;
            const REDUX: Option<Redux> = if $bits { Some(Redux(ReduxKind::And)) } else { None };
            #[inline(always)]
            fn identity(self) -> $t { !0 }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { a & b }
        }
        impl Operator<$t> for BitOr {
            const COMMUTATIVE: bool = true;
            const REDUX: Option<Redux> = if $bits { Some(Redux(ReduxKind::Or)) } else { None };
            #[inline(always)]
            fn identity(self) -> $t { 0 }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { a | b }
        }
        impl Operator<$t> for BitXor {
            const COMMUTATIVE: bool = true;
            const REDUX: Option<Redux> = if $bits { Some(Redux(ReduxKind::Xor)) } else { None };
            #[inline(always)]
            fn identity(self) -> $t { 0 }
            #[inline(always)]
            fn combine(self, a: $t, b: $t) -> $t { a ^ b }
        }
    )*};
}
// `redux.sync` reduces 32-bit integers only: `i32` and `u32` name it (min and max signed
// or unsigned), the 64-bit types reduce with shuffles.
integer_operators! {
    i32: Some(Redux(ReduxKind::MinS32)), Some(Redux(ReduxKind::MaxS32)), true;
    u32: Some(Redux(ReduxKind::MinU32)), Some(Redux(ReduxKind::MaxU32)), true;
    i64: None, None, false;
    u64: None, None, false;
}

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
