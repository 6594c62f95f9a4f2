//! Work over large host buffers (inputs of up to 2^31 elements, their checks) split over
//! all cores: one consecutive chunk per worker, each on its own scoped thread.

use std::ops::Range;

/// How many workers split a buffer.
fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 64)
}

/// The chunk length that splits `len` items among the workers (at least 1).
fn chunk_len(len: usize) -> usize {
    len.div_ceil(workers()).max(1)
}

/// Runs `f` on consecutive chunks of `out` (with the index of each chunk's first item),
/// one thread each, and returns their results in order.
pub fn chunks_mut<T: Send, R: Send>(out: &mut [T], f: impl Fn(usize, &mut [T]) -> R + Sync) -> Vec<R> {
    let chunk = chunk_len(out.len());
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = out
            .chunks_mut(chunk)
            .enumerate()
            .map(|(w, part)| scope.spawn(move || f(w * chunk, part)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

/// Consecutive ranges that cover `0..len`, one per worker (none for `len == 0`).
pub fn split(len: usize) -> Vec<Range<usize>> {
    let chunk = chunk_len(len);
    (0..len).step_by(chunk).map(|start| start..(start + chunk).min(len)).collect()
}

/// Runs `f` on each of `parts` (with its index), one thread each, and returns their
/// results in order.
pub fn each<R: Send>(parts: &[Range<usize>], f: impl Fn(usize, Range<usize>) -> R + Sync) -> Vec<R> {
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            parts.iter().enumerate().map(|(w, r)| scope.spawn(move || f(w, r.clone()))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

/// `out[i] = f(i)` for every `i`, on all cores.
pub fn fill<T: Send>(out: &mut [T], f: impl Fn(usize) -> T + Sync) {
    chunks_mut(out, |start, part| {
        for (offset, slot) in part.iter_mut().enumerate() {
            *slot = f(start + offset);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_everything_once_in_order() {
        for len in [0usize, 1, 7, 1000, 4097] {
            let mut v = vec![0u64; len];
            fill(&mut v, |i| i as u64 * 3);
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3), "len {len}");
            let parts = each(&split(len), |w, r| (w, r));
            assert!(parts.iter().enumerate().all(|(k, (w, _))| k == *w));
            let joined: Vec<usize> = parts.into_iter().flat_map(|(_, r)| r).collect();
            assert_eq!(joined, (0..len).collect::<Vec<_>>(), "len {len}");
            let sums = chunks_mut(&mut v, |start, part| (start, part.len()));
            assert_eq!(sums.iter().map(|s| s.1).sum::<usize>(), len);
            assert!(sums.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
        }
    }
}
