//! The device side of reduce-bench: warpsafe's `Reducer` (each strategy and the automatic
//! choice) and the read-roofline kernels (`warpsafe_bench::roofline`), timed by
//! `warpsafe_bench::timing` with events on one `warpsafe_host::Stream`. The device is the
//! GPU, or with `--emulator` the CPU emulator (a functional dry run: the same launches and
//! checks, wall-clock times).

use std::fmt::Write as _;

use anyhow::Context as _;
use bytemuck::Pod;
use warpsafe::op::{Max, Sum};
use warpsafe_bench::cli::Args;
use warpsafe_bench::data::{generate, Element, Op, Reference, Shape};
use warpsafe_bench::for_each_type;
use warpsafe_bench::harness::Session;
use warpsafe_bench::report::{Check, Results, Row, ROOFLINE};
use warpsafe_bench::roofline::{Roofline, BENCH};
use warpsafe_bench::timing::{self, StreamClock};
use warpsafe_host::reduce::{Reducer, Reduction, Strategy};
use warpsafe_host::{DeviceBuffer, Stream};

/// The warpsafe implementation named `name` in the report.
fn strategy(name: &str) -> Option<Strategy> {
    match name {
        "two-pass" => Some(Strategy::TwoPass),
        "last-block" => Some(Strategy::LastBlock),
        "cooperative" => Some(Strategy::Cooperative),
        "auto" => Some(Strategy::Auto),
        _ => None,
    }
}

fn strategy_name(s: Strategy) -> &'static str {
    match s {
        Strategy::Auto => "auto",
        Strategy::TwoPass => "two-pass",
        Strategy::LastBlock => "last-block",
        Strategy::Cooperative => "cooperative",
    }
}

/// One `Reducer<T, O>` behind an object, so that sum and max share one loop.
trait BenchReducer<T: Pod> {
    fn set_strategy(&mut self, strategy: Strategy);
    /// The launch a call makes for `len` elements, e.g. `last-block 528x256` or
    /// `two-pass 528x256 (2 launches)`.
    fn describe(&self, len: usize) -> String;
    /// Enqueues one reduction of `input` into `out[0]` on `stream`.
    ///
    /// # Safety
    /// `input` and `out` stay alive until `stream` has finished.
    unsafe fn enqueue(
        &mut self,
        stream: &Stream,
        input: &DeviceBuffer<T>,
        out: &DeviceBuffer<T>,
    ) -> anyhow::Result<()>;
}

impl<T: Pod, O: Reduction<T>> BenchReducer<T> for Reducer<T, O> {
    fn set_strategy(&mut self, strategy: Strategy) {
        Reducer::set_strategy(self, strategy);
    }
    fn describe(&self, len: usize) -> String {
        match self.plan(len) {
            Ok(p) => format!(
                "{} {}x{}{}",
                strategy_name(p.strategy),
                p.blocks,
                p.block_threads,
                if p.launches == 1 { String::new() } else { format!(" ({} launches)", p.launches) }
            ),
            Err(e) => format!("plan failed: {e}").replace(',', ";"),
        }
    }
    unsafe fn enqueue(
        &mut self,
        stream: &Stream,
        input: &DeviceBuffer<T>,
        out: &DeviceBuffer<T>,
    ) -> anyhow::Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { self.reduce_on(stream, input, out)? };
        Ok(())
    }
}

/// Measures warpsafe and the roofline for every type, size and operation of `args`.
/// An implementation that fails (a launch error, a wrong plan) is reported in the
/// returned list and the run goes on; only failures that leave nothing to measure (no
/// GPU, no kernels, no memory for the input) end it.
pub fn measure(args: &Args, results: &mut Results, log: &mut String) -> anyhow::Result<Vec<String>> {
    let measurements = args.types.len()
        * args.sizes.len()
        * (args.ops.len() * args.impls.len() + usize::from(args.roofline));
    let s = Session::open("reduce-bench", args.common.emulator, measurements, results, log)?;
    let module = s.device.load(&BENCH).context("loading the roofline kernels (sm_90 PTX)")?;
    let roofline = if args.roofline { Some(Roofline::new(&s.device, &module)?) } else { None };
    let mut ctx = Ctx { s, args, roofline };
    for_each_type!(&args.types, bench_type(&mut ctx));
    Ok(ctx.s.finish())
}

struct Ctx<'a> {
    s: Session<'a, Row>,
    args: &'a Args,
    roofline: Option<Roofline>,
}

fn bench_type<T>(ctx: &mut Ctx<'_>) -> anyhow::Result<()>
where
    T: Element + Pod,
    Sum: Reduction<T>,
    Max: Reduction<T>,
{
    let ty = T::TYPE;
    // One Reducer per operation, built once and reused for every size and strategy.
    let mut reducers: Vec<(Op, Box<dyn BenchReducer<T>>)> = Vec::new();
    for &op in &ctx.args.ops {
        let reducer: Box<dyn BenchReducer<T>> = match op {
            Op::Sum => Box::new(
                Reducer::<T, Sum>::new(&ctx.s.device).with_context(|| format!("Reducer<{ty}, Sum>"))?,
            ),
            Op::Max => Box::new(
                Reducer::<T, Max>::new(&ctx.s.device).with_context(|| format!("Reducer<{ty}, Max>"))?,
            ),
        };
        reducers.push((op, reducer));
    }
    let mut out = ctx.s.device.alloc_zeroed::<T>(1)?;
    for &log2n in &ctx.args.sizes {
        let n = 1u64 << log2n;
        let started = std::time::Instant::now();
        ctx.s.progress.bar.set_message(format!("{ty} 2^{log2n}"));
        let shape = Shape::new(ty, n).context("empty input")?;
        let mut host = vec![T::default(); n as usize];
        let reference = generate(&shape, &mut host);
        let input = ctx.s.device.upload(&host).with_context(|| format!("uploading {ty} x 2^{log2n}"))?;
        drop(host);
        if let Some(roofline) = ctx.roofline.as_mut() {
            let bytes = n * ty.size();
            if bytes >= 16 && bytes.is_multiple_of(16) {
                let (timing, detail) = roofline.measure(
                    &ctx.s.device,
                    &ctx.s.stream,
                    &ctx.args.common.plan,
                    input.device_address(),
                    bytes,
                )?;
                ctx.s.results.rows.push(Row {
                    implementation: ROOFLINE.into(),
                    ty,
                    op: None,
                    n,
                    timing,
                    result: String::new(),
                    check: Check::NotChecked,
                    detail,
                });
            }
            ctx.s.progress.bar.inc(1);
        }
        for (op, reducer) in reducers.iter_mut() {
            for &name in &ctx.args.impls {
                let Some(s) = strategy(name) else { continue };
                reducer.set_strategy(s);
                let measured = bench_one(ctx, reducer.as_mut(), &input, &mut out, *op, name, reference);
                ctx.s.keep(measured, || format!("warpsafe {name} {op} {ty} 2^{log2n}"));
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        ctx.s.progress.note(&format!("{ty} 2^{log2n} measured in {seconds:.1} s"));
    }
    Ok(())
}

/// Checks one implementation's result, times it, and checks the last timed call's result.
fn bench_one<T: Element + Pod>(
    ctx: &mut Ctx<'_>,
    reducer: &mut dyn BenchReducer<T>,
    input: &DeviceBuffer<T>,
    out: &mut DeviceBuffer<T>,
    op: Op,
    name: &str,
    reference: Reference,
) -> anyhow::Result<Row> {
    let expected = reference.expected(T::TYPE, op);
    // Poison the output, so that a call that writes nothing cannot pass.
    let mut poison = T::zeroed();
    bytemuck::bytes_of_mut(&mut poison).fill(0x5A);
    out.copy_from_host(&[poison])?;
    let out = &*out;
    let read_back = |ctx: &Ctx<'_>| -> anyhow::Result<T> {
        ctx.s.stream.synchronize()?;
        out.download()?.first().copied().context("empty output buffer")
    };
    // SAFETY: `input` and `out` outlive the synchronisation in `read_back`.
    unsafe { reducer.enqueue(&ctx.s.stream, input, out)? };
    let first = read_back(ctx)?;
    let mut clock = StreamClock(&ctx.s.stream);
    let timing = timing::measure(&mut clock, &ctx.args.common.plan, || {
        // SAFETY: as above; `measure` ends with a wait for its last event.
        unsafe { reducer.enqueue(&ctx.s.stream, input, out) }
    })?;
    let last = read_back(ctx)?;
    let check = if !first.value().same_bits(&expected) {
        Check::Bad { expected: format!("{expected} (first call gave {})", first.value()) }
    } else if !last.value().same_bits(&expected) {
        Check::Bad { expected: format!("{expected} (after timing)") }
    } else {
        Check::Ok
    };
    if check != Check::Ok {
        let _ = writeln!(ctx.s.log, "{name} {op} {} {}: {:?}", T::TYPE, input.len(), check);
    }
    Ok(Row {
        implementation: name.to_string(),
        ty: T::TYPE,
        op: Some(op),
        n: input.len() as u64,
        timing,
        result: last.value().to_string(),
        check,
        detail: reducer.describe(input.len()),
    })
}
