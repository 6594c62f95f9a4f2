// A `thread::Index` cannot travel to another thread through a static.
use std::sync::Mutex;

static STASH: Mutex<Option<warpsafe::thread::Index>> = Mutex::new(None);

fn main() {
    let _ = &STASH;
}
