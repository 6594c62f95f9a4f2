// A `Slice` is read-only: writing through it does not compile.
use warpsafe::global::Slice;

warpsafe::kernel! {
    pub fn write_input(input: Slice<u32>) {
        let i = warpsafe::thread::index();
        input[i] = 1;
    }
}

fn main() {}
