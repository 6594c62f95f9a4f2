// A scanner of `f32` with an operator that only scans `i64`, and a selector of `f32`
// whose predicate tests `i32`: neither compiles, so a kernel never sees elements of the
// wrong size.
use warpsafe::op::Operator;
use warpsafe::scan::select::LessThan;
use warpsafe_host::scan::{Scan, ScanKernel, Scanner, Selector};
use warpsafe_host::Device;

/// An operator over `i64` only.
#[derive(Clone, Copy, Default)]
struct Wide;
impl Operator<i64> for Wide {
    fn identity(self) -> i64 {
        0
    }
    fn combine(self, a: i64, b: i64) -> i64 {
        a + b
    }
}
// SAFETY: never called (this does not compile).
unsafe impl Scan<i64> for Wide {
    fn kernel() -> ScanKernel {
        unimplemented!()
    }
}

fn main() {
    let device = Device::emulator();
    let _scanner = Scanner::<f32, Wide>::new(&device);
    let _selector = Selector::<f32, LessThan<i32>>::new(&device, LessThan(0));
}
