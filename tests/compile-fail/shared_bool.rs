// Shared memory starts as garbage: an element type with invalid bit patterns does not
// compile.
warpsafe::shared! {
    static FLAGS: [bool; 32];
}

fn main() {
    let _ = FLAGS.len();
}
