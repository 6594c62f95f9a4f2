//! The emulator's stand-in for NCCL: the ranks of a clique exchange bytes in process
//! memory, with NCCL's semantics (an all-gather puts rank r's bytes at offset
//! `r * bytes` on every rank; an all-reduce combines the ranks' elements in rank order),
//! so the sharding and combining logic above it runs unchanged without a GPU.
//!
//! A clique is either local (every rank in one [`super::Communicator`], which deposits all
//! of its ranks' parts before collecting) or joined rank by rank through a unique id by
//! several communicators in one process, typically one per thread, as processes join an
//! NCCL clique. Operations are numbered per communicator; operation `k` of every rank
//! meets operation `k` of the others. Waiting has a deadline, like the GPU path: a rank
//! that never arrives is [`Error::CollectiveTimeout`], not a hang.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use crate::Error;

/// The ranks of one clique and the operations in flight between them.
pub(crate) struct Clique {
    ranks: usize,
    state: Mutex<State>,
    changed: Condvar,
}

struct State {
    /// Which ranks have joined.
    joined: Vec<bool>,
    /// Operation number → each rank's part, and how many ranks have collected it.
    rounds: HashMap<u64, Round>,
}

struct Round {
    parts: Vec<Option<Vec<u8>>>,
    collected: usize,
}

/// Emulated cliques by key, while some communicator holds them.
fn registry() -> &'static Mutex<HashMap<[u8; KEY_BYTES], Weak<Clique>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<[u8; KEY_BYTES], Weak<Clique>>>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// Bytes of an emulated clique's key (the random part of its unique id).
pub(crate) const KEY_BYTES: usize = 16;

/// A fresh random key. Randomness from the standard library's hasher keys (seeded from
/// the OS) mixed with the time and a counter: unique within the process, which is all
/// an emulated clique spans.
pub(crate) fn new_key() -> [u8; KEY_BYTES] {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut key = [0; KEY_BYTES];
    for half in key.chunks_mut(8) {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        hasher.write_u128(Instant::now().elapsed().as_nanos());
        half.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    key
}

/// Locks the state; a panic in another rank's thread does not poison the clique for the
/// others (the state is only ever updated whole).
fn lock(clique: &Clique) -> MutexGuard<'_, State> {
    clique.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Clique {
    /// A clique whose `ranks` ranks are all in one communicator.
    pub(crate) fn local(ranks: usize) -> Arc<Clique> {
        Arc::new(Clique {
            ranks,
            state: Mutex::new(State { joined: vec![true; ranks], rounds: HashMap::new() }),
            changed: Condvar::new(),
        })
    }

    /// Joins the clique of `key` as `rank` of `ranks`, and waits (until `deadline`) for
    /// the others to join.
    ///
    /// # Errors
    /// [`Error::RankMismatch`] when the clique was made with another rank count or the
    /// rank has joined already; [`Error::CollectiveTimeout`] naming the missing ranks.
    pub(crate) fn join(
        key: [u8; KEY_BYTES],
        rank: usize,
        ranks: usize,
        deadline: Instant,
        waited: Duration,
    ) -> Result<Arc<Clique>, Error> {
        let clique = {
            let mut registry = registry().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            registry.retain(|_, clique| clique.strong_count() > 0);
            match registry.get(&key).and_then(Weak::upgrade) {
                Some(clique) => clique,
                None => {
                    let clique = Arc::new(Clique {
                        ranks,
                        state: Mutex::new(State { joined: vec![false; ranks], rounds: HashMap::new() }),
                        changed: Condvar::new(),
                    });
                    registry.insert(key, Arc::downgrade(&clique));
                    clique
                }
            }
        };
        if clique.ranks != ranks {
            return Err(Error::RankMismatch {
                operation: "join",
                detail: format!(
                    "rank {rank} joined with {ranks} ranks, but the clique of this id has {}",
                    clique.ranks
                ),
            });
        }
        let mut state = lock(&clique);
        if std::mem::replace(&mut state.joined[rank], true) {
            return Err(Error::RankMismatch {
                operation: "join",
                detail: format!("rank {rank} joined this clique twice"),
            });
        }
        clique.changed.notify_all();
        while state.joined.iter().any(|j| !j) {
            let now = Instant::now();
            if now >= deadline {
                let missing: Vec<usize> = (0..ranks).filter(|&r| !state.joined[r]).collect();
                // Leave the clique, so a later join with the same id does not see this
                // rank as present.
                state.joined[rank] = false;
                return Err(Error::CollectiveTimeout {
                    during: format!("waiting for ranks {missing:?} of {ranks} to join (this is rank {rank})"),
                    waited,
                });
            }
            state = clique.changed.wait_timeout(state, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
        drop(state);
        Ok(clique)
    }

    /// The number of ranks.
    pub(crate) fn ranks(&self) -> usize {
        self.ranks
    }

    /// Deposits `rank`'s part of operation `round`.
    pub(crate) fn deposit(&self, round: u64, rank: usize, part: Vec<u8>) {
        let mut state = lock(self);
        let ranks = self.ranks;
        let entry =
            state.rounds.entry(round).or_insert_with(|| Round { parts: vec![None; ranks], collected: 0 });
        entry.parts[rank] = Some(part);
        self.changed.notify_all();
    }

    /// Every rank's part of operation `round`, in rank order, once all have deposited
    /// (until `deadline`). The round is forgotten when `collectors` ranks have collected
    /// it (every rank of the clique).
    ///
    /// # Errors
    /// [`Error::CollectiveTimeout`] naming the ranks whose part is missing.
    pub(crate) fn collect(
        &self,
        round: u64,
        rank: usize,
        deadline: Instant,
        during: &str,
        waited: Duration,
    ) -> Result<Vec<Vec<u8>>, Error> {
        let mut state = lock(self);
        loop {
            if let Some(entry) = state.rounds.get_mut(&round) {
                if entry.parts.iter().all(Option::is_some) {
                    let parts: Vec<Vec<u8>> = entry.parts.iter().flatten().cloned().collect();
                    entry.collected += 1;
                    if entry.collected == self.ranks {
                        state.rounds.remove(&round);
                    }
                    return Ok(parts);
                }
            }
            let now = Instant::now();
            if now >= deadline {
                let missing: Vec<usize> = match state.rounds.get(&round) {
                    Some(entry) => (0..self.ranks).filter(|&r| entry.parts[r].is_none()).collect(),
                    None => (0..self.ranks).collect(),
                };
                return Err(Error::CollectiveTimeout {
                    during: format!("{during}: rank {rank} waited for ranks {missing:?} of {}", self.ranks),
                    waited,
                });
            }
            state = self.changed.wait_timeout(state, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
    }
}
