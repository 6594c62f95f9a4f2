// Naming kernels for a `Reducer` (or a `Scanner`, `Selector`, `SegmentedReducer`) is a
// promise the host launches on: the kernels are the ones the declaring macro made for
// this element type, each in its place. The traits are `unsafe`, so an implementation
// without `unsafe` does not compile.
use warpsafe::op::Operator;
use warpsafe_host::reduce::{ReduceKernels, Reduction};

/// An operator over `f32`.
#[derive(Clone, Copy, Default)]
struct Halve;
impl Operator<f32> for Halve {
    fn identity(self) -> f32 {
        0.0
    }
    fn combine(self, a: f32, b: f32) -> f32 {
        (a + b) / 2.0
    }
}
impl Reduction<f32> for Halve {
    type Output = f32;
    fn output(value: f32, _len: usize) -> f32 {
        value
    }
    fn kernels() -> ReduceKernels {
        unimplemented!()
    }
}

fn main() {}
