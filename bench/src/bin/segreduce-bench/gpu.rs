//! The device side of segreduce-bench: warpsafe's `SegmentedReducer<f32, Sum>` (each
//! strategy of `--strategy`), each call one `reduce_fixed_on` or `reduce_offsets_on` on one
//! `warpsafe_host::Stream`, timed by `warpsafe_bench::timing` with events on that stream
//! (a point whose first call takes 2 ms or more by the reduced plan of
//! `Plan::for_call_of`); every output (the first call's, over a poisoned buffer, and the
//! last timed call's) checked against the host reference of
//! `warpsafe_bench::segmented::data`; and the read ceiling (`warpsafe_bench::roofline`)
//! over the bytes each point moves. The device is the GPU, or with `--emulator` the CPU
//! emulator (a functional dry run: the same calls and checks, wall-clock times).

use anyhow::Context as _;
use warpsafe::op::Sum;
use warpsafe_bench::harness::Session;
use warpsafe_bench::report::{size_label, Check, Results};
use warpsafe_bench::roofline::{Roofline, BENCH};
use warpsafe_bench::segmented::cli::{strategy_name, Args};
use warpsafe_bench::segmented::data::{self, Pattern};
use warpsafe_bench::segmented::report::{self, Row, CEILING};
use warpsafe_bench::timing::{self, StreamClock};
use warpsafe_host::segmented::{SegmentStrategy, SegmentedOptions, SegmentedReducer};
use warpsafe_host::{DeviceBuffer, Module, Stream};

const TOOL: &str = "segreduce-bench";

/// What the output is overwritten with before a strategy's first call (no sum of the
/// inputs is negative).
const POISON: f32 = -1.0;

/// Measures the ceiling and warpsafe at every point of `args`. A strategy that fails (a
/// launch error) is reported in the returned list and the run goes on; only failures
/// that leave nothing to measure (no GPU, no kernels, no memory for the buffers) end it.
pub fn measure(args: &Args, results: &mut Results<Row>, log: &mut String) -> anyhow::Result<Vec<String>> {
    let method = results.meta("method").unwrap_or_default().to_string();
    results.set_meta(
        "method",
        format!(
            "{method}; a point whose first call takes {} ms or more (either side): 1 warm-up call, \
batches of at least 1 call, at most 3 batches",
            timing::SLOW_CALL_SECONDS * 1e3
        ),
    );
    let points = args.points();
    let measurements = points.len() * (args.strategies.len() + usize::from(args.ceiling));
    let s = Session::open(TOOL, args.common.emulator, measurements, results, log)?;
    let module = if args.ceiling {
        Some(s.device.load(&BENCH).context("loading the roofline kernels (sm_90 PTX)")?)
    } else {
        None
    };
    let roofline = module.as_ref().map(|m| Roofline::new(&s.device, m)).transpose()?;
    let options = SegmentedOptions {
        long_elements: args.long_bytes.map(|b| b / 4),
        chunk_elements: args.chunk_bytes.map(|b| b / 4),
        ..SegmentedOptions::default()
    };
    let reducer = SegmentedReducer::<f32, Sum>::with_options(&s.device, options)
        .context("SegmentedReducer<f32, Sum>")?;
    let mut ctx = Ctx { s, args, roofline, reducer, _module: module };
    for &n in &args.counts {
        let patterns: Vec<Pattern> = args.patterns.iter().copied().filter(|p| p.fits(n)).collect();
        if !patterns.is_empty() {
            bench_size(&mut ctx, n, &patterns)?;
        }
    }
    Ok(ctx.s.finish())
}

struct Ctx<'a> {
    s: Session<'a, Row>,
    args: &'a Args,
    roofline: Option<Roofline>,
    reducer: SegmentedReducer<f32, Sum>,
    /// The roofline kernels' module, kept loaded while they are used.
    _module: Option<Module>,
}

/// One pattern's segments at one size: the offsets (for warpsafe's offsets form), the
/// output, and the reference sums.
struct Point {
    pattern: Pattern,
    n: u64,
    segments: u64,
    offsets: Option<DeviceBuffer<u64>>,
    output: DeviceBuffer<f32>,
    reference: Vec<f64>,
}

impl Point {
    /// Enqueues one call of `reducer` over `input` on `stream`.
    ///
    /// # Safety
    /// `input` and the point's buffers stay alive and untouched until `stream` has run the
    /// call, and no other launch of `reducer` runs meanwhile.
    unsafe fn enqueue(
        &self,
        reducer: &mut SegmentedReducer<f32, Sum>,
        stream: &Stream,
        input: &DeviceBuffer<f32>,
    ) -> anyhow::Result<()> {
        // SAFETY: forwarded from the caller; the output is a buffer of its own.
        unsafe {
            match (self.pattern, &self.offsets) {
                (Pattern::Fixed(len), _) => reducer.reduce_fixed_on(stream, input, len, &self.output)?,
                (Pattern::PowerLaw, Some(offsets)) => {
                    reducer.reduce_offsets_on(stream, input, offsets, &self.output)?
                }
                (Pattern::PowerLaw, None) => anyhow::bail!("the power-law pattern without offsets"),
            }
        }
        Ok(())
    }

    /// Checks the output of the calls enqueued so far against the reference.
    fn check(&self, stream: &Stream) -> anyhow::Result<Result<(), String>> {
        stream.synchronize()?;
        Ok(data::check_sums(&self.output.download()?, &self.reference))
    }

    /// A row of this point.
    fn row(&self, implementation: &str, timing: timing::Timing, check: Check, detail: String) -> Row {
        let (pattern, n, segments) = (self.pattern, self.n, self.segments);
        Row { implementation: implementation.to_string(), pattern, n, segments, timing, check, detail }
    }
}

/// Measures every pattern of `patterns` at `n` elements.
fn bench_size(ctx: &mut Ctx<'_>, n: u64, patterns: &[Pattern]) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let size = size_label(n);
    ctx.s.progress.bar.set_message(format!("f32 {size}"));
    let len = usize::try_from(n).context("more elements than this machine addresses")?;
    let host = data::input(len);
    let input = ctx.s.device.upload(&host).with_context(|| format!("the input of {size}"))?;
    for &pattern in patterns {
        let (segments, offsets, reference) = match pattern {
            Pattern::Fixed(l) => {
                let l = usize::try_from(l).context("segment length")?;
                (data::fixed_segments(n, l as u64), None, data::fixed_reference(&host, l))
            }
            Pattern::PowerLaw => {
                let offsets = data::power_law_offsets(n);
                let reference = data::offsets_reference(&host, &offsets);
                (offsets.len() as u64 - 1, Some(ctx.s.device.upload(&offsets)?), reference)
            }
        };
        let output = ctx.s.device.alloc_zeroed::<f32>(segments.max(1) as usize)?;
        let mut point = Point { pattern, n, segments, offsets, output, reference };
        if ctx.args.ceiling {
            let measured = bench_ceiling(ctx, &point);
            ctx.s.keep(measured, || format!("the read ceiling of {pattern} {size}"));
        }
        for &strategy in &ctx.args.strategies {
            let measured = bench_one(ctx, strategy, &mut point, &input);
            ctx.s.keep(measured, || format!("warpsafe {} {pattern} {size}", strategy_name(strategy)));
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    ctx.s.progress.note(&format!("f32 {size} measured in {seconds:.1} s"));
    Ok(())
}

/// The read ceiling of a point: the roofline kernels over a scratch buffer of the point's
/// bytes (rounded up to 16).
fn bench_ceiling(ctx: &mut Ctx<'_>, point: &Point) -> anyhow::Result<Row> {
    let roofline = ctx.roofline.as_mut().context("no roofline kernels")?;
    let bytes = report::bytes(point.pattern, point.n, point.segments).div_ceil(16) * 16;
    let scratch = ctx.s.device.alloc_zeroed::<u32>((bytes / 4) as usize)?;
    let plan = &ctx.args.common.plan;
    let (timing, detail) =
        roofline.measure(&ctx.s.device, &ctx.s.stream, plan, scratch.device_address(), bytes)?;
    Ok(point.row(CEILING, timing, Check::NotChecked, detail))
}

/// Checks one strategy's first call, times it, and checks the last timed call.
fn bench_one(
    ctx: &mut Ctx<'_>,
    strategy: SegmentStrategy,
    point: &mut Point,
    input: &DeviceBuffer<f32>,
) -> anyhow::Result<Row> {
    ctx.reducer.set_strategy(strategy);
    // Poison the output, so that a call that writes nothing cannot pass.
    point.output.copy_from_host(&vec![POISON; point.output.len()])?;
    let point = &*point;
    let stream = &ctx.s.stream;
    stream.synchronize()?;
    let first_started = std::time::Instant::now();
    // SAFETY: `point` and `input` outlive the synchronisation below and in `check`, and the
    // calls of the reducer go to this one stream.
    unsafe { point.enqueue(&mut ctx.reducer, stream, input)? };
    stream.synchronize()?;
    // The first call's time (wall clock, with the launch) picks the plan.
    let plan = ctx.args.common.plan.for_call_of(first_started.elapsed().as_secs_f64());
    let first = point.check(stream)?;
    let mut clock = StreamClock(stream);
    let reducer = &mut ctx.reducer;
    let timing = timing::measure(&mut clock, &plan, || {
        // SAFETY: as above; `measure` ends with a wait for its last event.
        unsafe { point.enqueue(reducer, stream, input) }
    })?;
    let last = point.check(stream)?;
    let check = match (first, last) {
        (Err(e), _) => Check::Bad { expected: format!("first call: {e}") },
        (Ok(()), Err(e)) => Check::Bad { expected: format!("after timing: {e}") },
        (Ok(()), Ok(())) => Check::Ok,
    };
    let name = strategy_name(strategy);
    if check != Check::Ok {
        ctx.s.log.push_str(&format!("{name} {} {}: {check:?}\n", point.pattern, point.n));
    }
    let chosen = match point.pattern {
        Pattern::Fixed(len) => ctx.reducer.strategy_for_fixed(point.n, len),
        Pattern::PowerLaw => ctx.reducer.strategy_for_offsets(point.n),
    };
    let detail = format!("strategy {}", strategy_name(chosen));
    Ok(point.row(name, timing, check, detail))
}
