//! The benchmark's element types, operations and input data.
//!
//! Every input element is an integer, so every result is exact whatever order a
//! reduction adds in, and any two correct implementations agree bit for bit:
//! - `f32`: the elements are 0 except every `stride`-th one, which is uniform in `[-m, m]`,
//!   and one peak element `m + 1`. `stride` and `m` depend on `n` so that the sum of
//!   absolute values stays below 2^24: every partial sum, in any order, is then an integer
//!   that `f32` holds exactly.
//! - `f64`: uniform in `[-2^20, 2^20)`, peak `2^20`: absolute sums stay below 2^53.
//! - `i32`: uniform in `[-2^30, 2^30)`, peak `2^30`; sums wrap modulo 2^32.
//!
//! The peak is the unique maximum, at a position that depends on `n`. CUB's side
//! (`cub/reduce_cub.cu`) implements the same function; its `--reference-only` output and
//! this module's tests hold the same numbers.

use std::fmt;

/// An element type of the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElemType {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `i32`.
    I32,
}

impl ElemType {
    /// Every type, in the order the benchmark runs them.
    pub const ALL: [ElemType; 3] = [ElemType::F32, ElemType::F64, ElemType::I32];

    /// The name used on the command line, in the CSV and in CUB's output.
    pub fn name(self) -> &'static str {
        match self {
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
            ElemType::I32 => "i32",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            ElemType::F32 | ElemType::I32 => 4,
            ElemType::F64 => 8,
        }
    }

    /// The type named `name` (`f32`, `f64`, `i32`).
    pub fn parse(name: &str) -> Option<ElemType> {
        ElemType::ALL.into_iter().find(|t| t.name() == name)
    }

    fn salt(self) -> u64 {
        match self {
            ElemType::F32 => 1,
            ElemType::F64 => 2,
            ElemType::I32 => 3,
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A reduction of the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// The sum (wrapping for `i32`).
    Sum,
    /// The maximum.
    Max,
}

impl Op {
    /// Every operation, in the order the benchmark runs them.
    pub const ALL: [Op; 2] = [Op::Sum, Op::Max];

    /// The name used on the command line, in the CSV and in CUB's output.
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Max => "max",
        }
    }

    /// The operation named `name` (`sum`, `max`).
    pub fn parse(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.name() == name)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// SplitMix64's output function: a bijection of `u64` with good avalanche.
fn mix(mut z: u64) -> u64 {
    z ^= z >> 30;
    z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^= z >> 27;
    z = z.wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The input hash: SplitMix64's output function of index `i` offset by a multiple of `salt` (the same
/// function as `hash` in `cub/bench_common.cuh`).
pub fn hash(salt: u64, i: u64) -> u64 {
    mix(i.wrapping_add((salt + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)))
}

/// The parameters of one input: its type, length, and (for `f32`) stride and range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    ty: ElemType,
    n: u64,
    stride: u64,
    m: u64,
    peak: u64,
}

impl Shape {
    /// The input of `n` elements of type `ty`; `None` for `n == 0`.
    pub fn new(ty: ElemType, n: u64) -> Option<Shape> {
        if n == 0 {
            return None;
        }
        let peak = hash(ty.salt() + 16, n) % n;
        let (stride, m) = match ty {
            ElemType::F32 => {
                let stride = (n >> 23).max(1);
                let count = n.div_ceil(stride);
                (stride, ((1u64 << 23) / count).clamp(1, 255))
            }
            ElemType::F64 | ElemType::I32 => (1, 0),
        };
        Some(Shape { ty, n, stride, m, peak })
    }

    /// The number of elements.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Always false: a shape has at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Element `i` (`i < n`) as an exact integer, before conversion to the element type.
    pub fn raw(&self, i: u64) -> i64 {
        let h = hash(self.ty.salt(), i);
        match self.ty {
            ElemType::F32 => {
                let m = self.m as i64;
                if i == self.peak {
                    m + 1
                } else if !i.is_multiple_of(self.stride) {
                    0
                } else {
                    (h % (2 * self.m + 1)) as i64 - m
                }
            }
            ElemType::F64 => {
                if i == self.peak {
                    1 << 20
                } else {
                    (h % (1 << 21)) as i64 - (1 << 20)
                }
            }
            ElemType::I32 => {
                if i == self.peak {
                    1 << 30
                } else {
                    (h >> 33) as i64 - (1 << 30)
                }
            }
        }
    }
}

/// The exact sum and maximum of an input, as integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The exact sum (no wrap: below 2^63 in magnitude for every supported size).
    pub sum: i64,
    /// The maximum.
    pub max: i64,
}

impl Reference {
    /// The expected result of `op` in `ty`: exact for the floats (integers below 2^24 and
    /// 2^53), the two's-complement wrap of the exact sum for `i32`.
    pub fn expected(&self, ty: ElemType, op: Op) -> Value {
        let v = match op {
            Op::Sum => self.sum,
            Op::Max => self.max,
        };
        match ty {
            ElemType::F32 => Value::F32(v as f32),
            ElemType::F64 => Value::F64(v as f64),
            ElemType::I32 => Value::I32(v as i32),
        }
    }
}

/// An element type the benchmark fills buffers with.
pub trait Element: Copy + Default + Send + Sync + 'static {
    /// The type's tag.
    const TYPE: ElemType;
    /// Converts an exact integer from [`Shape::raw`] (in range for this type).
    fn from_raw(v: i64) -> Self;
    /// Wraps a value of this type for printing and comparison.
    fn value(self) -> Value;
}

impl Element for f32 {
    const TYPE: ElemType = ElemType::F32;
    fn from_raw(v: i64) -> f32 {
        v as f32
    }
    fn value(self) -> Value {
        Value::F32(self)
    }
}

impl Element for f64 {
    const TYPE: ElemType = ElemType::F64;
    fn from_raw(v: i64) -> f64 {
        v as f64
    }
    fn value(self) -> Value {
        Value::F64(self)
    }
}

impl Element for i32 {
    const TYPE: ElemType = ElemType::I32;
    fn from_raw(v: i64) -> i32 {
        v as i32
    }
    fn value(self) -> Value {
        Value::I32(self)
    }
}

/// Fills `out` with the input of shape `shape` (`out.len()` must equal `shape.len()`)
/// on all cores and returns its exact reference.
pub fn generate<T: Element>(shape: &Shape, out: &mut [T]) -> Reference {
    debug_assert_eq!(out.len() as u64, shape.n);
    let parts = crate::par::chunks_mut(out, |start, part| {
        let mut r = Reference { sum: 0, max: i64::MIN };
        for (offset, slot) in part.iter_mut().enumerate() {
            let v = shape.raw((start + offset) as u64);
            *slot = T::from_raw(v);
            r.sum += v;
            r.max = r.max.max(v);
        }
        r
    });
    parts.into_iter().fold(Reference { sum: 0, max: i64::MIN }, |a, b| Reference {
        sum: a.sum + b.sum,
        max: a.max.max(b.max),
    })
}

/// A reduction result of one of the benchmark's types.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An `f32` result.
    F32(f32),
    /// An `f64` result.
    F64(f64),
    /// An `i32` result.
    I32(i32),
}

impl Value {
    /// Parses `text` as a value of type `ty` (the CSV's and CUB's printed form).
    pub fn parse(ty: ElemType, text: &str) -> Option<Value> {
        match ty {
            ElemType::F32 => text.parse().ok().map(Value::F32),
            ElemType::F64 => text.parse().ok().map(Value::F64),
            ElemType::I32 => text.parse().ok().map(Value::I32),
        }
    }

    /// Bitwise equality (so that a NaN never equals anything, and -0 differs from +0).
    pub fn same_bits(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::F32(a), Value::F32(b)) => a.to_bits() == b.to_bits(),
            (Value::F64(a), Value::F64(b)) => a.to_bits() == b.to_bits(),
            (Value::I32(a), Value::I32(b)) => a == b,
            _ => false,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::F32(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
            Value::I32(v) => write!(f, "{v}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(ty: ElemType, n: u64) -> Reference {
        let shape = Shape::new(ty, n).unwrap();
        let mut buf = vec![0f64; n as usize];
        generate(&shape, &mut buf)
    }

    /// The numbers `reduce_cub --reference-only --sizes 0,1,5,10,16,20` printed (CUDA 13.0
    /// nvcc, this machine): the C++ and Rust generators agree.
    #[test]
    fn matches_the_cub_program() {
        let expected: &[(ElemType, u64, i64, i64)] = &[
            (ElemType::F32, 1, 256, 256),
            (ElemType::F32, 2, 162, 256),
            (ElemType::F32, 32, 954, 256),
            (ElemType::F32, 1024, -1068, 256),
            (ElemType::F32, 65536, -6869, 129),
            (ElemType::F32, 1048576, -2208, 9),
            (ElemType::F64, 1, 1048576, 1048576),
            (ElemType::F64, 2, 1201502, 1048576),
            (ElemType::F64, 32, 6192860, 1048576),
            (ElemType::F64, 1024, 30174034, 1048576),
            (ElemType::F64, 65536, 48888779, 1048576),
            (ElemType::F64, 1048576, 727516098, 1048576),
            (ElemType::I32, 1, 1073741824, 1073741824),
            (ElemType::I32, 2, 2084953172, 1073741824),
            (ElemType::I32, 32, 1731924971, 1073741824),
            (ElemType::I32, 1024, 29731234465, 1073741824),
            (ElemType::I32, 65536, 345511558939, 1073741824),
            (ElemType::I32, 1048576, 697885890361, 1073741824),
        ];
        for &(ty, n, sum, max) in expected {
            assert_eq!(reference(ty, n), Reference { sum, max }, "{ty} n={n}");
        }
    }

    #[test]
    fn f32_inputs_sum_exactly_in_any_order() {
        for log2 in [0u32, 10, 16, 20, 23, 24, 25] {
            let n = 1u64 << log2;
            let shape = Shape::new(ElemType::F32, n).unwrap();
            let abs: u64 = (0..n).map(|i| shape.raw(i).unsigned_abs()).sum();
            assert!(abs < 1 << 24, "n = 2^{log2}: sum of |x| = {abs}");
            let peaks = (0..n).filter(|&i| shape.raw(i) == shape.m as i64 + 1).count();
            assert_eq!(peaks, 1, "n = 2^{log2}: the maximum is unique");
        }
    }

    #[test]
    fn expected_values_wrap_i32_and_stay_exact_for_floats() {
        let r = Reference { sum: (1 << 32) + 5, max: 7 };
        assert_eq!(r.expected(ElemType::I32, Op::Sum), Value::I32(5));
        assert_eq!(r.expected(ElemType::F64, Op::Sum), Value::F64(4294967301.0));
        assert_eq!(r.expected(ElemType::F32, Op::Max), Value::F32(7.0));
    }

    #[test]
    fn values_print_and_parse_back() {
        for v in [Value::F32(-1068.0), Value::F64(-10886781044.0), Value::I32(i32::MIN)] {
            let ty = match v {
                Value::F32(_) => ElemType::F32,
                Value::F64(_) => ElemType::F64,
                Value::I32(_) => ElemType::I32,
            };
            assert!(Value::parse(ty, &v.to_string()).unwrap().same_bits(&v));
        }
        // CUB prints f32 with %.9g: "8388608" and "-1068" parse to the same bits.
        assert!(Value::parse(ElemType::F32, "-1068").unwrap().same_bits(&Value::F32(-1068.0)));
        assert!(!Value::F32(0.0).same_bits(&Value::F32(-0.0)));
        assert!(!Value::F32(1.0).same_bits(&Value::F64(1.0)));
        assert!(Value::parse(ElemType::I32, "1.5").is_none());
        assert_eq!(ElemType::parse("f64"), Some(ElemType::F64));
        assert_eq!(Op::parse("max"), Some(Op::Max));
        assert_eq!(Op::parse("min"), None);
    }
}
