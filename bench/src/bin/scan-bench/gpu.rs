//! The device side of scan-bench: warpsafe's `Scanner` (inclusive and exclusive sum) and
//! `Selector` (select-if with `LessThan(midpoint)`, select-flagged), each call one
//! `scan_on` / `select_on` on one `warpsafe_host::Stream`, timed by
//! `warpsafe_bench::timing` with events on that stream; every output (the first call's,
//! over a poisoned buffer, and the last timed call's) checked against the host reference
//! of `warpsafe_bench::scan::data`. The device is the GPU, or with `--emulator` the CPU
//! emulator (a functional dry run: the same calls and checks, wall-clock times).

use anyhow::Context as _;
use warpsafe::op::Sum;
use warpsafe::scan::select::LessThan;
use warpsafe_bench::for_each_type;
use warpsafe_bench::harness::Session;
use warpsafe_bench::report::{size_label, Check, Results};
use warpsafe_bench::scan::cli::{Args, HUGE};
use warpsafe_bench::scan::data::{self, ScanElement};
use warpsafe_bench::scan::report::{Algorithm, Row, WARPSAFE};
use warpsafe_bench::timing::{self, StreamClock};
use warpsafe_host::scan::{Scan, ScanKind, ScanOptions, Scanner, SelectForm, Selection, Selector};
use warpsafe_host::{Device, DeviceBuffer, Error, Stream};

const TOOL: &str = "scan-bench";

/// Measures warpsafe for every type, size and algorithm of `args`. An algorithm that
/// fails (a launch error) is reported in the returned list and the run goes on; only
/// failures that leave nothing to measure (no GPU, no kernels, no memory for the buffers)
/// end it, except that the `--huge` size is skipped when its buffers do not fit.
pub fn measure(args: &Args, results: &mut Results<Row>, log: &mut String) -> anyhow::Result<Vec<String>> {
    let measurements = args.types.iter().map(|&ty| args.counts_for(ty).len() * args.algorithms.len()).sum();
    let mut ctx = Ctx { s: Session::open(TOOL, args.common.emulator, measurements, results, log)?, args };
    for_each_type!(&args.types, bench_type(&mut ctx));
    Ok(ctx.s.finish())
}

struct Ctx<'a> {
    s: Session<'a, Row>,
    args: &'a Args,
}

/// The device buffers of one size, and the host data they were made from.
struct Buffers<T: ScanElement> {
    host: Vec<T>,
    host_flags: Vec<u8>,
    input: DeviceBuffer<T>,
    flags: DeviceBuffer<u8>,
    output: DeviceBuffer<T>,
    count: DeviceBuffer<u64>,
    /// What the output is overwritten with before an algorithm's first call.
    poison: Vec<T>,
}

impl<T: ScanElement> Buffers<T> {
    fn new(device: &Device, n: usize) -> Result<Buffers<T>, Error> {
        let host = data::input::<T>(n);
        let host_flags = data::flags(n);
        let mut poison = T::zeroed();
        bytemuck::bytes_of_mut(&mut poison).fill(0x5A);
        Ok(Buffers {
            input: device.upload(&host)?,
            flags: device.upload(&host_flags)?,
            output: device.alloc_zeroed(n)?,
            count: device.alloc_zeroed(1)?,
            poison: vec![poison; n],
            host,
            host_flags,
        })
    }
}

/// The scanner and selector of one type, built once and reused for every size.
struct Calls<T: ScanElement>
where
    Sum: Scan<T>,
    LessThan<T>: Selection<T>,
{
    scanner: Scanner<T, Sum>,
    selector: Selector<T, LessThan<T>>,
}

impl<T: ScanElement> Calls<T>
where
    Sum: Scan<T>,
    LessThan<T>: Selection<T>,
{
    /// Enqueues one call of `algorithm` over `b` on `stream`.
    ///
    /// # Safety
    /// `b`'s buffers stay alive and untouched until `stream` has run the call, and no
    /// other launch of this scanner or selector runs meanwhile.
    unsafe fn enqueue(
        &mut self,
        stream: &Stream,
        algorithm: Algorithm,
        b: &Buffers<T>,
    ) -> anyhow::Result<()> {
        let (input, output, count) = (&b.input, &b.output, &b.count);
        // SAFETY: forwarded from the caller; the output and count are buffers of their
        // own, not the input or the flags.
        unsafe {
            match algorithm {
                Algorithm::InclusiveSum => {
                    self.scanner.scan_on(stream, ScanKind::Inclusive, input, output)?
                }
                Algorithm::ExclusiveSum => {
                    self.scanner.scan_on(stream, ScanKind::Exclusive, input, output)?
                }
                Algorithm::SelectIf => {
                    self.selector.select_on(stream, SelectForm::Select, input, None, output, count)?
                }
                Algorithm::SelectFlagged => self.selector.select_on(
                    stream,
                    SelectForm::Select,
                    input,
                    Some(&b.flags),
                    output,
                    count,
                )?,
                Algorithm::Copy => anyhow::bail!("the copy is measured by CUB's program"),
            }
        }
        Ok(())
    }

    /// How a call runs: one launch of one block per tile.
    fn describe(&self, algorithm: Algorithm, n: u64) -> String {
        let len = usize::try_from(n).unwrap_or(usize::MAX);
        let tile = if algorithm.selects() { self.selector.tile_len(len) } else { self.scanner.tile_len(len) };
        if n == 0 && !algorithm.selects() {
            return "no launch (empty input)".into();
        }
        format!("1 launch; {} tiles of {tile} elements", n.div_ceil(tile as u64).max(1))
    }
}

fn bench_type<T: ScanElement>(ctx: &mut Ctx<'_>) -> anyhow::Result<()>
where
    Sum: Scan<T>,
    LessThan<T>: Selection<T>,
{
    let ty = T::TYPE;
    // The library's defaults (options picked per call by length), or the given block size.
    let (scanner, selector) = match ctx.args.block_threads {
        None => (Scanner::<T, Sum>::new(&ctx.s.device), Selector::new(&ctx.s.device, LessThan(T::MIDPOINT))),
        Some(block_threads) => {
            let options = ScanOptions { block_threads };
            (
                Scanner::<T, Sum>::with_options(&ctx.s.device, options),
                Selector::with_options(&ctx.s.device, LessThan(T::MIDPOINT), options),
            )
        }
    };
    let mut calls = Calls {
        scanner: scanner.with_context(|| format!("Scanner<{ty}, Sum>"))?,
        selector: selector.with_context(|| format!("Selector<{ty}, LessThan>"))?,
    };
    for n in ctx.args.counts_for(ty) {
        let started = std::time::Instant::now();
        let size = size_label(n);
        ctx.s.progress.bar.set_message(format!("{ty} {size}"));
        let len = usize::try_from(n).context("more elements than this machine addresses")?;
        let mut b = match Buffers::<T>::new(&ctx.s.device, len) {
            Ok(b) => b,
            Err(Error::Alloc { bytes, .. }) if ctx.args.huge && n == HUGE => {
                ctx.s.note(&format!("{ty} {size} skipped: no device memory for {bytes} more bytes"));
                ctx.s.progress.bar.inc(ctx.args.algorithms.len() as u64);
                continue;
            }
            Err(err) => return Err(err).with_context(|| format!("the buffers of {ty} {size}")),
        };
        for &algorithm in &ctx.args.algorithms {
            let measured = bench_one(ctx, &mut calls, algorithm, &mut b);
            ctx.s.keep(measured, || format!("warpsafe {algorithm} {ty} {size}"));
        }
        let seconds = started.elapsed().as_secs_f64();
        ctx.s.progress.note(&format!("{ty} {size} measured in {seconds:.1} s"));
    }
    Ok(())
}

/// Checks the output of the call(s) enqueued so far against the reference; for a
/// selection also returns the count.
fn check<T: ScanElement>(
    stream: &Stream,
    algorithm: Algorithm,
    b: &Buffers<T>,
) -> anyhow::Result<(Option<u64>, Result<(), String>)> {
    stream.synchronize()?;
    let out = b.output.download()?;
    Ok(match algorithm {
        Algorithm::InclusiveSum => (None, data::check_scan(&b.host, &out, false)),
        Algorithm::ExclusiveSum => (None, data::check_scan(&b.host, &out, true)),
        Algorithm::SelectIf | Algorithm::SelectFlagged => {
            let count = b.count.download()?.first().copied().context("empty count buffer")?;
            let checked = if algorithm == Algorithm::SelectIf {
                data::check_select(&b.host, |i| b.host[i] < T::MIDPOINT, &out, count)
            } else {
                data::check_select(&b.host, |i| b.host_flags[i] != 0, &out, count)
            };
            (Some(count), checked)
        }
        Algorithm::Copy => anyhow::bail!("the copy is measured by CUB's program"),
    })
}

/// Checks one algorithm's first call, times it, and checks the last timed call.
fn bench_one<T: ScanElement>(
    ctx: &mut Ctx<'_>,
    calls: &mut Calls<T>,
    algorithm: Algorithm,
    b: &mut Buffers<T>,
) -> anyhow::Result<Row>
where
    Sum: Scan<T>,
    LessThan<T>: Selection<T>,
{
    // Poison the output and the count, so that a call that writes nothing cannot pass.
    b.output.copy_from_host(&b.poison)?;
    b.count.copy_from_host(&[u64::MAX])?;
    let b = &*b;
    let stream = &ctx.s.stream;
    // SAFETY: `b` outlives the synchronisation in `check`, and the calls of `calls` go to
    // this one stream.
    unsafe { calls.enqueue(stream, algorithm, b)? };
    let (_, first) = check(stream, algorithm, b)?;
    let mut clock = StreamClock(stream);
    let timing = timing::measure(&mut clock, &ctx.args.common.plan, || {
        // SAFETY: as above; `measure` ends with a wait for its last event.
        unsafe { calls.enqueue(stream, algorithm, b) }
    })?;
    let (selected, last) = check(stream, algorithm, b)?;
    let check = match (first, last) {
        (Err(e), _) => Check::Bad { expected: format!("first call: {e}") },
        (Ok(()), Err(e)) => Check::Bad { expected: format!("after timing: {e}") },
        (Ok(()), Ok(())) => Check::Ok,
    };
    if check != Check::Ok {
        ctx.s.log.push_str(&format!("{WARPSAFE} {algorithm} {} {}: {check:?}\n", T::TYPE, b.host.len()));
    }
    Ok(Row {
        implementation: WARPSAFE.to_string(),
        algorithm,
        ty: T::TYPE,
        n: b.host.len() as u64,
        timing,
        selected,
        check,
        detail: calls.describe(algorithm, b.host.len() as u64),
    })
}
