// A thread writes a `DisjointSlice` only at an index it owns: a plain number does not
// compile, and an owned index cannot be made from one.
use warpsafe::global::DisjointSlice;

warpsafe::kernel! {
    pub fn write_neighbour(out: DisjointSlice<u32>) {
        let i = warpsafe::thread::index();
        out.write(i.get() + 1, 1);
    }
}

fn main() {}
