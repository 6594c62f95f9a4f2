//! `Group` is sealed: a type outside warpsafe cannot become a group, because every safe
//! collective hands the group's `mask()` to `vote.sync`, `shfl.sync` and `match.sync`, and
//! a mask that leaves out the calling lane (or names lanes that are not there) is
//! undefined behaviour in PTX.

use warpsafe::group::Group;

/// A "group" of lanes 1 and 2, whatever lane calls it.
#[derive(Clone, Copy)]
struct NotMe;

impl Group for NotMe {
    fn mask(&self) -> u32 {
        0b110
    }
}

fn main() {}
