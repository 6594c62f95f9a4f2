// The body of a safe kernel is checked as safe code: dereferencing a raw pointer there
// does not compile.
warpsafe::kernel! {
    pub fn fill(out: *mut u32) {
        *out = 1;
    }
}

fn main() {}
