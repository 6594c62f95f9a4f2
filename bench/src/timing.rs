//! The one timing method of the benchmark, for every implementation: warm-up calls, one
//! calibration batch that picks `K` (the calls per batch: at least `min_calls`, and enough
//! to last `min_batch_seconds`), then `reps` batches of `K` back-to-back calls with a
//! device event recorded before and after each batch on the stream the calls go to. The
//! result is the median over the batches of (batch time / K). `cub/reduce_cub.cu` does the
//! same on CUB's side.

use warpsafe_host::{Event, Stream};

use crate::stats;

/// How many calls to make and how long to make each batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// Calls before anything is timed (module load, first-touch, clocks ramping).
    pub warmup_calls: u32,
    /// The fewest calls in one timed batch (and the size of the calibration batch).
    pub min_calls: u32,
    /// The shortest a timed batch should last, in seconds.
    pub min_batch_seconds: f64,
    /// The most calls in one batch (bounds the run when a call is unexpectedly fast).
    pub max_calls: u32,
    /// Timed batches; the reported time is their median.
    pub reps: u32,
}

impl Plan {
    /// The full run: 7 batches of at least 20 calls and 10 ms each.
    pub const FULL: Plan =
        Plan { warmup_calls: 3, min_calls: 20, min_batch_seconds: 0.010, max_calls: 200_000, reps: 7 };
    /// `--quick`: 5 batches of at least 20 calls and 5 ms each.
    pub const QUICK: Plan =
        Plan { warmup_calls: 3, min_calls: 20, min_batch_seconds: 0.005, max_calls: 200_000, reps: 5 };

    /// The plan for a point whose first call took `seconds`: this one, or for a call of
    /// at least [`SLOW_CALL_SECONDS`] one warm-up call, a calibration batch of one call and
    /// at most 3 timed batches (each still at least `min_batch_seconds`), so that very slow
    /// points (CUB's segmented reduce at segment length 1 and 2^28 elements) take about a
    /// second, not a minute. `cub/bench_common.cuh`'s `plan_for_call` is the same rule.
    pub fn for_call_of(&self, seconds: f64) -> Plan {
        if seconds < SLOW_CALL_SECONDS {
            return *self;
        }
        Plan { warmup_calls: self.warmup_calls.min(1), min_calls: 1, reps: self.reps.min(3), ..*self }
    }

    /// The calls per batch for a call that takes about `seconds_per_call`.
    pub fn calls_per_batch(&self, seconds_per_call: f64) -> u32 {
        let min = self.min_calls.max(1);
        if seconds_per_call.is_nan() || seconds_per_call <= 0.0 || seconds_per_call.is_infinite() {
            return min;
        }
        let wanted = (self.min_batch_seconds / seconds_per_call).ceil();
        if wanted >= self.max_calls as f64 {
            self.max_calls.max(min)
        } else {
            (wanted as u32).clamp(min, self.max_calls.max(min))
        }
    }
}

/// A call at least this long (seconds) is timed by [`Plan::for_call_of`]'s reduced plan.
pub const SLOW_CALL_SECONDS: f64 = 0.002;

/// What one measurement found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// Median over the batches of seconds per call.
    pub seconds: f64,
    /// Fastest batch, seconds per call.
    pub min_seconds: f64,
    /// Slowest batch, seconds per call.
    pub max_seconds: f64,
    /// Calls per batch.
    pub calls: u32,
    /// Batches.
    pub reps: u32,
}

/// Device-side time stamps on one stream.
pub trait Clock {
    /// A recorded time stamp.
    type Mark;
    /// Records a time stamp after everything enqueued so far.
    fn mark(&mut self) -> anyhow::Result<Self::Mark>;
    /// Waits for `end`, then returns the seconds between `start` and `end`.
    fn seconds_between(&mut self, start: &Self::Mark, end: &Self::Mark) -> anyhow::Result<f64>;
    /// Waits until everything enqueued so far has finished.
    fn synchronize(&mut self) -> anyhow::Result<()>;
}

/// Time stamps on a warpsafe stream: device events recorded on it (wall-clock on the
/// emulator).
pub struct StreamClock<'a>(pub &'a Stream);

impl Clock for StreamClock<'_> {
    type Mark = Event;
    fn mark(&mut self) -> anyhow::Result<Event> {
        Ok(self.0.record()?)
    }
    fn seconds_between(&mut self, start: &Event, end: &Event) -> anyhow::Result<f64> {
        Ok(end.elapsed_since(start)?.as_secs_f64())
    }
    fn synchronize(&mut self) -> anyhow::Result<()> {
        Ok(self.0.synchronize()?)
    }
}

/// Host wall-clock time stamps, each taken after `wait` has waited for the device work
/// enqueued so far: for calls spread over several streams or GPUs, which device events
/// (one stream's clock) cannot time.
pub struct WallClock<F>(pub F);

impl<F: FnMut() -> anyhow::Result<()>> Clock for WallClock<F> {
    type Mark = std::time::Instant;
    fn mark(&mut self) -> anyhow::Result<std::time::Instant> {
        (self.0)()?;
        Ok(std::time::Instant::now())
    }
    fn seconds_between(
        &mut self,
        start: &std::time::Instant,
        end: &std::time::Instant,
    ) -> anyhow::Result<f64> {
        Ok(end.saturating_duration_since(*start).as_secs_f64())
    }
    fn synchronize(&mut self) -> anyhow::Result<()> {
        (self.0)()
    }
}

/// Times `call` (which enqueues one call on the clock's stream) by the method above.
pub fn measure<C: Clock>(
    clock: &mut C,
    plan: &Plan,
    mut call: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<Timing> {
    let mut batch = |clock: &mut C, k: u32| -> anyhow::Result<f64> {
        let start = clock.mark()?;
        for _ in 0..k {
            call()?;
        }
        let end = clock.mark()?;
        Ok(clock.seconds_between(&start, &end)? / f64::from(k))
    };
    if plan.warmup_calls > 0 {
        batch(clock, plan.warmup_calls)?;
    }
    clock.synchronize()?;
    let estimate = batch(clock, plan.min_calls.max(1))?;
    let calls = plan.calls_per_batch(estimate);
    let reps = plan.reps.max(1);
    let mut per_call = Vec::with_capacity(reps as usize);
    for _ in 0..reps {
        per_call.push(batch(clock, calls)?);
    }
    let seconds = stats::median(&per_call).ok_or_else(|| anyhow::anyhow!("the event timer returned NaN"))?;
    let (min_seconds, max_seconds) = stats::min_max(&per_call).unwrap_or((seconds, seconds));
    Ok(Timing { seconds, min_seconds, max_seconds, calls, reps })
}

/// A timing of `seconds` per call for tests: 20 calls, 7 batches, min and max 1% and 2%
/// off.
#[cfg(test)]
pub(crate) fn sample(seconds: f64) -> Timing {
    Timing { seconds, min_seconds: seconds * 0.99, max_seconds: seconds * 1.02, calls: 20, reps: 7 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A simulated stream: each call advances `now`, marks read it.
    struct FakeClock<'a> {
        now: &'a Cell<f64>,
        marks: u32,
        syncs: u32,
    }

    impl Clock for FakeClock<'_> {
        type Mark = f64;
        fn mark(&mut self) -> anyhow::Result<f64> {
            self.marks += 1;
            Ok(self.now.get())
        }
        fn seconds_between(&mut self, start: &f64, end: &f64) -> anyhow::Result<f64> {
            Ok(end - start)
        }
        fn synchronize(&mut self) -> anyhow::Result<()> {
            self.syncs += 1;
            Ok(())
        }
    }

    #[test]
    fn calls_per_batch_meets_both_minimums() {
        let plan = Plan::FULL;
        assert_eq!(plan.calls_per_batch(1e-3), 20, "20 calls of 1 ms already last 20 ms");
        assert_eq!(plan.calls_per_batch(1e-5), 1000, "10 ms of 10 us calls");
        assert_eq!(plan.calls_per_batch(1e-9), 200_000, "capped");
        assert_eq!(plan.calls_per_batch(0.0), 20);
        assert_eq!(plan.calls_per_batch(f64::NAN), 20);
    }

    #[test]
    fn slow_calls_get_a_reduced_plan() {
        assert_eq!(Plan::FULL.for_call_of(1e-3), Plan::FULL);
        let slow = Plan::FULL.for_call_of(0.1);
        assert_eq!((slow.warmup_calls, slow.min_calls, slow.reps), (1, 1, 3));
        assert_eq!(slow.calls_per_batch(0.1), 1);
        assert_eq!(Plan { reps: 1, ..Plan::QUICK }.for_call_of(0.1).reps, 1);
    }

    #[test]
    fn measure_reports_seconds_per_call_from_batches() {
        let now = Cell::new(0.0);
        let mut clock = FakeClock { now: &now, marks: 0, syncs: 0 };
        let mut calls = 0u64;
        let timing = measure(&mut clock, &Plan::FULL, || {
            calls += 1;
            now.set(now.get() + 4e-6);
            Ok(())
        })
        .unwrap();
        assert!((timing.seconds - 4e-6).abs() < 1e-12, "{timing:?}");
        assert_eq!(timing.calls, 2500, "10 ms / 4 us");
        assert_eq!(timing.reps, 7);
        // Warm-up 3, calibration 20, then 7 batches of 2500; two marks per batch.
        assert_eq!(calls, 3 + 20 + 7 * 2500);
        assert_eq!(clock.marks, 2 * (1 + 1 + 7));
        assert_eq!(clock.syncs, 1);
    }

    #[test]
    fn measure_propagates_call_errors() {
        let now = Cell::new(0.0);
        let mut clock = FakeClock { now: &now, marks: 0, syncs: 0 };
        let err = measure(&mut clock, &Plan::QUICK, || anyhow::bail!("launch refused")).unwrap_err();
        assert_eq!(err.to_string(), "launch refused");
    }
}
