// A view owned by block tiles takes only its own tiling's indices: a grid-stride index,
// or a tile index of another tile size, does not compile (two ownerships on one output
// could give one element to two threads).
use warpsafe::global::DisjointSlice;
use warpsafe::thread::{self, TileIndex};

warpsafe::kernel! {
    pub fn mixed(out: DisjointSlice<u32, TileIndex<256>>) {
        out.write(thread::index(), 1);
        for i in thread::block_tiles::<128>(out.len()) {
            out.write(i, 2);
        }
    }
}

fn main() {}
