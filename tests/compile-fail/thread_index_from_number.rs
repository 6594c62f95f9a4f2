// `thread::Index` has no public constructor: a thread cannot claim another's element.
fn main() {
    let _stolen = warpsafe::thread::Index { value: 5 };
}
