//! `warpsafe_host::collective`: the element-wise `AllReducer` (NCCL's own operators and
//! the all-gather-and-fold path with the `fold_copies` kernels, a non-commutative user
//! operator among them) and the `ShardedReducer` against CPU references, on emulated
//! cliques of 1 to 4 devices (each its own seed) and on every GPU present; ranks that
//! join by unique id (threads on the emulator, processes on GPUs); timeouts for ranks
//! that never come; every bad input a typed error; NCCL missing at run time.

use std::time::{Duration, Instant};

use approx::abs_diff_eq;
use bytemuck::Pod;
use reduce_test_kernels::{mat_of, Mat2, MatMul};
use warpsafe::emu;
use warpsafe::op::{BitOr, BitXor, Max, Min, Operator, Sum};
use warpsafe_host::collective::{
    nccl_version, AllReducer, Communicator, CommunicatorOptions, ShardedReducer, UniqueId,
    NCCL_LIBRARY_VARIABLE,
};
use warpsafe_host::reduce::{Reducer, Reduction};
use warpsafe_host::{Backend, Device, DeviceBuffer, Error, Gpu};
use warpsafe_tests::{child_test_command, gpus_or_skip, note, on_gpu};

warpsafe_tests::user_reduction!(MatReduction: Mat2, MatMul, reduce_mat_two_pass, reduce_mat_last_block, reduce_mat_cooperative, reduce_mat_fold_copies);

/// `ranks` emulated devices, each with its own seed.
fn emulated(ranks: usize) -> Vec<Device> {
    (0..ranks)
        .map(|r| Device::emulator_with(emu::Options { seed: 11 + r as u64, ..emu::Options::default() }))
        .collect()
}

/// A deterministic value for rank `rank`, element `i`.
fn word(rank: usize, i: usize) -> u32 {
    let x = (rank as u32).wrapping_mul(0x9e37_79b9) ^ (i as u32).wrapping_mul(0x85eb_ca6b);
    x ^ (x >> 15) ^ (x << 7)
}

fn float(rank: usize, i: usize) -> f32 {
    (word(rank, i) % 2001) as f32 / 1000.0 - 1.0
}

/// How two results are compared: exactly, or floats within a tolerance (NCCL's sum
/// order differs from the reference's rank order).
trait Close: Copy + std::fmt::Debug {
    fn close(self, other: Self) -> bool;
}
impl Close for f32 {
    fn close(self, other: f32) -> bool {
        abs_diff_eq!(self, other, epsilon = 1e-4)
    }
}
macro_rules! exact {
    ($($t:ty),*) => {$(
        impl Close for $t {
            fn close(self, other: $t) -> bool {
                self == other
            }
        }
    )*};
}
exact!(u32, i64, u64, Mat2);

/// All-reduces every rank's `gen(rank, i)` over `devices`, in place, out of place and
/// enqueued on the caller's streams, and checks every rank against the rank-order fold of the inputs; on the emulator the
/// results must be exactly that fold, and on every backend the same bits on every rank.
fn check_all_reduce<T: Pod + Close, O: Reduction<T> + 'static>(
    devices: &[Device],
    n: usize,
    gen: impl Fn(usize, usize) -> T,
    what: &str,
) {
    let comm = Communicator::new(devices).unwrap();
    let inputs: Vec<Vec<T>> = (0..devices.len()).map(|r| (0..n).map(|i| gen(r, i)).collect()).collect();
    let op = O::default();
    let expected: Vec<T> =
        (0..n).map(|i| inputs.iter().fold(op.identity(), |acc, input| op.combine(acc, input[i]))).collect();
    let mut reducer = AllReducer::<T, O>::new(&comm).unwrap();
    let check = |results: Vec<Vec<T>>, form: &str| {
        for (rank, got) in results.iter().enumerate() {
            assert_eq!(
                bytemuck::cast_slice::<T, u8>(got),
                bytemuck::cast_slice::<T, u8>(&results[0]),
                "{what} {form}: rank {rank} differs from rank 0"
            );
            for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                let ok = if on_gpu(&devices[0]) {
                    g.close(*e)
                } else {
                    bytemuck::bytes_of(g) == bytemuck::bytes_of(e)
                };
                assert!(
                    ok,
                    "{what} {form}, {} ranks, n={n}: element {i} is {g:?}, expected {e:?}",
                    devices.len()
                );
            }
        }
    };
    let mut buffers: Vec<DeviceBuffer<T>> =
        devices.iter().zip(&inputs).map(|(d, x)| d.upload(x).unwrap()).collect();
    reducer.all_reduce(&mut buffers).unwrap_or_else(|e| panic!("{what} in place, n={n}: {e}"));
    check(buffers.iter().map(|b| b.download().unwrap()).collect(), "in place");

    let sends: Vec<DeviceBuffer<T>> =
        devices.iter().zip(&inputs).map(|(d, x)| d.upload(x).unwrap()).collect();
    let mut recvs: Vec<DeviceBuffer<T>> = devices.iter().map(|d| d.alloc_zeroed(n).unwrap()).collect();
    reducer.all_reduce_into(&sends, &mut recvs).unwrap_or_else(|e| panic!("{what} out of place, n={n}: {e}"));
    check(recvs.iter().map(|b| b.download().unwrap()).collect(), "out of place");
    // Enqueued on the caller's streams, in place.
    let streams: Vec<warpsafe_host::Stream> = devices.iter().map(|d| d.stream().unwrap()).collect();
    let buffers: Vec<DeviceBuffer<T>> =
        devices.iter().zip(&inputs).map(|(d, x)| d.upload(x).unwrap()).collect();
    let refs: Vec<&DeviceBuffer<T>> = buffers.iter().collect();
    // SAFETY: the buffers live and are not touched until the streams are synchronised.
    unsafe { reducer.all_reduce_on(&streams.iter().collect::<Vec<_>>(), &refs, &refs) }
        .unwrap_or_else(|e| panic!("{what} on streams, n={n}: {e}"));
    streams.iter().for_each(|s| s.synchronize().unwrap());
    check(buffers.iter().map(|b| b.download().unwrap()).collect(), "on the caller's streams");
    for (send, input) in sends.iter().zip(&inputs) {
        assert_eq!(
            bytemuck::cast_slice::<T, u8>(&send.download().unwrap()),
            bytemuck::cast_slice::<T, u8>(input),
            "{what}: a send buffer changed"
        );
    }
}

/// The operators and types every clique is checked with: NCCL's own (f32 sum, i64 max)
/// and the gathered path (u32 xor, the non-commutative matrix product).
fn check_every_path(devices: &[Device], n: usize) {
    check_all_reduce::<f32, Sum>(devices, n, float, "f32 sum");
    check_all_reduce::<i64, Max>(devices, n, |r, i| word(r, i) as i64 - (1 << 31), "i64 max");
    check_all_reduce::<u32, BitXor>(devices, n, word, "u32 xor");
    check_all_reduce::<Mat2, MatReduction>(devices, n, |r, i| mat_of(word(r, i)), "matrix product");
}

#[test]
fn all_reduce_on_emulated_cliques_matches_the_rank_order_fold() {
    for ranks in 1..=4 {
        let devices = emulated(ranks);
        for n in [0, 1, 31, 33, 1023, 1025, 4097] {
            check_every_path(&devices, n);
        }
    }
}

#[test]
fn all_reduce_on_every_gpu() {
    let gpus = gpus_or_skip("all_reduce_on_every_gpu");
    if gpus.is_empty() {
        return;
    }
    note(&format!("all-reduce over {} GPUs, NCCL {:?}", gpus.len(), nccl_version().unwrap()));
    for n in [0, 1, 31, 33, 1025, (1 << 20) + 7] {
        check_every_path(&gpus, n);
    }
}

#[test]
fn the_path_is_chosen_by_operator_and_type() {
    let comm = Communicator::new(&emulated(2)).unwrap();
    assert!(AllReducer::<f32, Sum>::new(&comm).unwrap().is_native());
    assert!(AllReducer::<u64, Min>::new(&comm).unwrap().is_native());
    assert!(!AllReducer::<u32, BitXor>::new(&comm).unwrap().is_native());
    assert!(!AllReducer::<Mat2, MatReduction>::new(&comm).unwrap().is_native());
}

/// Reduces shards of lengths `lens` (one per device) and checks the result against the
/// rank-order fold of each shard's single-device reduction (bit for bit) and against the
/// CPU reference (`matches`); three calls give the same bits.
fn check_sharded<T: Pod, O: Reduction<T, Output = R> + 'static, R: PartialEq + std::fmt::Debug>(
    devices: &[Device],
    lens: &[usize],
    gen: impl Fn(usize, usize) -> T,
    matches: impl Fn(&R, &[Vec<T>]) -> bool,
    what: &str,
) {
    let comm = Communicator::new(devices).unwrap();
    let data: Vec<Vec<T>> =
        lens.iter().enumerate().map(|(r, &n)| (0..n).map(|i| gen(r, i)).collect()).collect();
    let shards: Vec<DeviceBuffer<T>> = devices.iter().zip(&data).map(|(d, x)| d.upload(x).unwrap()).collect();
    let op = O::default();
    let folded = devices.iter().zip(&shards).fold(op.identity(), |acc, (device, shard)| {
        let mut out = device.alloc_zeroed::<T>(1).unwrap();
        Reducer::<T, O>::new(device).unwrap().reduce_to_device(shard, &mut out).unwrap();
        op.combine(acc, out.download().unwrap()[0])
    });
    let expected = O::output(folded, lens.iter().sum());
    let mut sharded = ShardedReducer::<T, O>::new(&comm).unwrap();
    for call in 0..3 {
        let got = sharded.reduce(&shards).unwrap_or_else(|e| panic!("{what} {lens:?}: {e}"));
        assert_eq!(
            got, expected,
            "{what} shards {lens:?}, call {call}: not the fold of the shards' reductions"
        );
    }
    assert!(
        matches(&expected, &data),
        "{what} shards {lens:?}: {expected:?} does not match the CPU reference"
    );
}

fn check_sharded_every_operator(devices: &[Device], lens: &[usize]) {
    // The devices sum in another order than the CPU: compared with a tolerance.
    let f32_sum = |got: &f32, d: &[Vec<f32>]| {
        let exact: f64 = d.iter().flatten().map(|&x| x as f64).sum();
        let n = d.iter().map(Vec::len).sum::<usize>() as f64;
        abs_diff_eq!(*got as f64, exact, epsilon = 1e-4 + 1e-6 * n)
    };
    check_sharded::<f32, Sum, f32>(devices, lens, float, f32_sum, "f32 sum");
    check_sharded::<i64, Min, Option<i64>>(
        devices,
        lens,
        |r, i| word(r, i) as i64 - (1 << 31),
        |got, d| *got == d.iter().flatten().copied().min(),
        "i64 min",
    );
    check_sharded::<u64, BitOr, u64>(
        devices,
        lens,
        |r, i| 1 << (word(r, i) % 64),
        |got, d| *got == d.iter().flatten().fold(0, |a, b| a | b),
        "u64 or",
    );
    check_sharded::<Mat2, MatReduction, Mat2>(
        devices,
        lens,
        |r, i| mat_of(word(r, i)),
        |got, d| *got == d.iter().flatten().fold(MatMul.identity(), |a, &b| MatMul.combine(a, b)),
        "matrix product",
    );
}

#[test]
fn sharded_reduce_on_emulated_cliques() {
    let shardings: &[&[usize]] = &[&[0], &[1], &[33], &[0, 0], &[5, 0, 7], &[1025, 31, 0, 4097], &[0, 0, 0]];
    for lens in shardings {
        let devices = emulated(lens.len());
        check_sharded_every_operator(&devices, lens);
    }
}

#[test]
fn sharded_reduce_on_every_gpu() {
    let gpus = gpus_or_skip("sharded_reduce_on_every_gpu");
    if gpus.is_empty() {
        return;
    }
    let n = gpus.len();
    for lens in [
        vec![0; n],
        vec![1; n],
        (0..n).map(|r| (1 << 20) + 7 * r).collect(),
        (0..n).map(|r| if r == 0 { 0 } else { 33 }).collect(),
    ] {
        check_sharded_every_operator(&gpus, &lens);
    }
}

// ---------------------------------------------------------------------------------------
// Ranks that join by unique id

fn options(timeout_ms: u64) -> CommunicatorOptions {
    CommunicatorOptions { timeout: Duration::from_millis(timeout_ms) }
}

/// What one rank of a joined clique computes: its all-reduced buffer and the sharded sum.
fn run_rank(comm: &Communicator, device: &Device, rank: usize, n: usize) -> Result<(Vec<u32>, u64), Error> {
    let mut buffers = vec![device.upload(&(0..n).map(|i| word(rank, i)).collect::<Vec<_>>())?];
    AllReducer::<u32, BitXor>::new(comm)?.all_reduce(&mut buffers)?;
    let shard = device.upload(&(0..n + rank).map(|i| word(rank, i) as u64).collect::<Vec<_>>())?;
    let sum = ShardedReducer::<u64, Sum>::new(comm)?.reduce(&[shard])?;
    Ok((buffers[0].download()?, sum))
}

/// The results every rank of a clique of `ranks` must get from [`run_rank`].
fn expected_ranks(ranks: usize, n: usize) -> (Vec<u32>, u64) {
    let xor = (0..n).map(|i| (0..ranks).fold(0, |a, r| a ^ word(r, i))).collect();
    let sum = (0..ranks).flat_map(|r| (0..n + r).map(move |i| word(r, i) as u64)).sum();
    (xor, sum)
}

#[test]
fn emulated_ranks_join_by_unique_id_from_threads() {
    let id = UniqueId::new(Backend::Emulator).unwrap().to_string();
    assert!(id.starts_with("emulator:"), "{id}");
    let (ranks, n) = (3, 1025);
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..ranks)
            .map(|rank| {
                let id = id.clone();
                s.spawn(move || {
                    let id: UniqueId = id.parse().unwrap();
                    let device = emulated(ranks).remove(rank);
                    let comm = Communicator::join(&device, &id, rank, ranks, options(20_000)).unwrap();
                    assert_eq!(comm.ranks(), ranks);
                    run_rank(&comm, &device, rank, n).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (rank, got) in results.iter().enumerate() {
        assert_eq!(*got, expected_ranks(ranks, n), "rank {rank}");
    }
}

#[test]
fn joined_ranks_with_different_lengths_all_get_the_error() {
    let id = UniqueId::new(Backend::Emulator).unwrap();
    let errors: Vec<Error> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|rank| {
                let id = &id;
                s.spawn(move || {
                    let device = Device::emulator();
                    let comm = Communicator::join(&device, id, rank, 2, options(20_000)).unwrap();
                    let mut buffers = vec![device.alloc_zeroed::<f32>(10 + rank).unwrap()];
                    AllReducer::<f32, Sum>::new(&comm).unwrap().all_reduce(&mut buffers).unwrap_err()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for err in errors {
        assert!(matches!(err, Error::RankMismatch { .. }), "{err}");
        assert!(err.to_string().contains("from 10 to 11 elements"), "{err}");
    }
}

#[test]
fn a_rank_that_never_joins_is_a_timeout_not_a_hang() {
    let id = UniqueId::new(Backend::Emulator).unwrap();
    let started = Instant::now();
    let err = Communicator::join(&Device::emulator(), &id, 0, 2, options(300)).unwrap_err();
    let waited = started.elapsed();
    assert!(matches!(err, Error::CollectiveTimeout { .. }), "{err}");
    assert!(err.to_string().contains("ranks [1] of 2 to join"), "{err}");
    assert!(waited >= Duration::from_millis(300) && waited < Duration::from_secs(10), "{waited:?}");
}

#[test]
fn a_rank_that_skips_a_collective_is_a_timeout() {
    let id = UniqueId::new(Backend::Emulator).unwrap();
    let err = std::thread::scope(|s| {
        let absent = s.spawn(|| Communicator::join(&Device::emulator(), &id, 1, 2, options(20_000)).unwrap());
        let device = Device::emulator();
        let comm = Communicator::join(&device, &id, 0, 2, options(300)).unwrap();
        let _quiet = absent.join().unwrap();
        let mut buffers = vec![device.alloc_zeroed::<u32>(4).unwrap()];
        AllReducer::<u32, BitXor>::new(&comm).unwrap().all_reduce(&mut buffers).unwrap_err()
    });
    assert!(matches!(err, Error::CollectiveTimeout { .. }), "{err}");
    assert!(err.to_string().contains("waited for ranks [1] of 2"), "{err}");
}

#[test]
fn a_gpu_rank_that_never_joins_is_a_timeout() {
    let gpus = gpus_or_skip("a_gpu_rank_that_never_joins_is_a_timeout");
    let Some(gpu) = gpus.first() else {
        return;
    };
    let id = UniqueId::new(Backend::Gpu).unwrap();
    let started = Instant::now();
    let err = Communicator::join(gpu, &id, 0, 2, options(3000)).unwrap_err();
    assert!(matches!(err, Error::CollectiveTimeout { .. }), "{err}");
    note(&format!("a GPU rank alone for {:?}: {err}", started.elapsed()));
    // The process goes on: a new communicator works.
    check_all_reduce::<f32, Sum>(&gpus[..1], 33, float, "f32 sum after an aborted join");
}

// ---------------------------------------------------------------------------------------
// Bad input

fn expect(result: Result<impl std::fmt::Debug, Error>, pattern: fn(&Error) -> bool, words: &str) {
    let err = result.expect_err(words);
    assert!(pattern(&err), "{words}: wrong error kind: {err}");
    assert!(err.to_string().contains(words), "{err:?} should say {words:?}");
}

fn rank_mismatch(e: &Error) -> bool {
    matches!(e, Error::RankMismatch { .. })
}

fn not_in_communicator(e: &Error) -> bool {
    matches!(e, Error::NotInCommunicator { .. })
}

#[test]
fn bad_input_is_a_typed_error() {
    let devices = emulated(2);
    let outsider = Device::emulator();
    let comm = Communicator::new(&devices).unwrap();
    let mut all = AllReducer::<f32, Sum>::new(&comm).unwrap();
    let mut folded = AllReducer::<u32, BitXor>::new(&comm).unwrap();
    let mut sharded = ShardedReducer::<f32, Sum>::new(&comm).unwrap();
    let buffer = |d: &Device, n: usize| d.alloc_zeroed::<f32>(n).unwrap();

    expect(
        all.all_reduce(&mut [buffer(&devices[0], 3), buffer(&devices[1], 4)]),
        rank_mismatch,
        "rank 0: 3, rank 1: 4",
    );
    expect(all.all_reduce(&mut [buffer(&devices[0], 3)]), rank_mismatch, "1 buffers for the 2 ranks");
    expect(
        all.all_reduce(&mut [buffer(&devices[1], 3), buffer(&devices[0], 3)]),
        not_in_communicator,
        "rank 0",
    );
    expect(
        all.all_reduce(&mut [buffer(&devices[0], 3), buffer(&outsider, 3)]),
        not_in_communicator,
        "rank 1",
    );
    let mut words = [devices[0].alloc_zeroed::<u32>(2).unwrap(), outsider.alloc_zeroed::<u32>(2).unwrap()];
    expect(folded.all_reduce(&mut words), not_in_communicator, "rank 1");
    let sends = [buffer(&devices[0], 3), buffer(&devices[1], 3)];
    expect(
        all.all_reduce_into(&sends, &mut [buffer(&devices[0], 2), buffer(&devices[1], 2)]),
        rank_mismatch,
        "first list 3",
    );
    let streams = [devices[0].stream().unwrap(), outsider.stream().unwrap()];
    // SAFETY: the call fails its checks before anything is enqueued.
    let on = unsafe {
        all.all_reduce_on(&[&streams[0], &streams[1]], &[&sends[0], &sends[1]], &[&sends[0], &sends[1]])
    };
    assert!(on.is_ok(), "emulator streams are interchangeable: {on:?}");

    expect(sharded.reduce(&[buffer(&devices[0], 3), buffer(&outsider, 3)]), not_in_communicator, "rank 1");
    expect(sharded.reduce(&[buffer(&devices[0], 3)]), rank_mismatch, "1 shards for the 2 ranks");

    expect(Communicator::new(&[]), rank_mismatch, "no devices");
    let id = UniqueId::new(Backend::Emulator).unwrap();
    expect(Communicator::join(&devices[0], &id, 2, 2, options(100)), rank_mismatch, "rank 2 of 2");
    expect("nccl:zz".parse::<UniqueId>(), rank_mismatch, "wrong length");
    expect("mpi:00".parse::<UniqueId>(), rank_mismatch, "unknown prefix");
    let gpu_id: UniqueId = format!("nccl:{}", "00".repeat(128)).parse().unwrap();
    expect(
        Communicator::join(&devices[0], &gpu_id, 0, 1, options(100)),
        rank_mismatch,
        "an id for GPU devices",
    );
    if let Some(gpu) = Device::gpus().ok().and_then(|g| g.into_iter().next()) {
        expect(Communicator::new(&[gpu, devices[0].clone()]), rank_mismatch, "cannot share a communicator");
    }
}

#[test]
fn gpu_buffers_and_streams_of_other_devices_are_refused() {
    let gpus = gpus_or_skip("gpu_buffers_and_streams_of_other_devices_are_refused");
    let Some(gpu) = gpus.first() else {
        return;
    };
    let comm = Communicator::new(&gpus[..1]).unwrap();
    let mut all = AllReducer::<f32, Sum>::new(&comm).unwrap();
    let emulator = Device::emulator();
    expect(all.all_reduce(&mut [emulator.alloc_zeroed::<f32>(3).unwrap()]), not_in_communicator, "rank 0");
    let send = gpu.alloc_zeroed::<f32>(3).unwrap();
    let stream = emulator.stream().unwrap();
    // SAFETY: the call fails its checks before anything is enqueued.
    let on = unsafe { all.all_reduce_on(&[&stream], &[&send], &[&send]) };
    expect(on, not_in_communicator, "the stream for rank 0");
    expect(Communicator::new(&[gpu.clone(), gpu.clone()]), rank_mismatch, "given twice");
}

/// The environment variable that makes [`nccl_missing_child`] run.
const NCCL_CHILD: &str = "WARPSAFE_TEST_NCCL_MISSING_CHILD";

#[test]
fn nccl_missing_at_run_time_is_a_typed_error() {
    let out = child_test_command("nccl_missing_child")
        .env(NCCL_CHILD, "1")
        .env(NCCL_LIBRARY_VARIABLE, "/nonexistent/libnccl.so.2")
        .output()
        .expect("starting the child test process");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("1 passed"), "the child test did not run:\n{stdout}");
}

/// Run by [`nccl_missing_at_run_time_is_a_typed_error`] with NCCL pointed at a missing
/// file: every NCCL entry is a typed error naming the file and the variable; emulated
/// cliques still work.
#[test]
#[ignore = "run as a child process by nccl_missing_at_run_time_is_a_typed_error"]
fn nccl_missing_child() {
    assert_eq!(std::env::var(NCCL_CHILD).as_deref(), Ok("1"), "run by the parent test only");
    let unavailable = |e: &Error| matches!(e, Error::NcclUnavailable { .. });
    expect(nccl_version(), unavailable, "/nonexistent/libnccl.so.2");
    expect(UniqueId::new(Backend::Gpu), unavailable, NCCL_LIBRARY_VARIABLE);
    if Gpu::count() > 0 {
        expect(Communicator::new(&Device::gpus().unwrap()), unavailable, "/nonexistent/libnccl.so.2");
        note("NCCL missing: the GPU communicator is NcclUnavailable");
    }
    check_all_reduce::<f32, Sum>(&emulated(2), 5, float, "emulated, without NCCL");
}

// ---------------------------------------------------------------------------------------
// Ranks in separate processes (GPUs)

/// The variables that make [`gpu_rank_child`] run: the unique id and the rank.
const RANK_CHILD_ID: &str = "WARPSAFE_TEST_CLIQUE_ID";
const RANK_CHILD_RANK: &str = "WARPSAFE_TEST_CLIQUE_RANK";
const RANK_CHILD_RANKS: &str = "WARPSAFE_TEST_CLIQUE_RANKS";

/// Elements per rank in the multi-process test.
const PROCESS_N: usize = (1 << 20) + 3;

#[test]
fn gpu_ranks_in_separate_processes_join_by_unique_id() {
    let gpus = gpus_or_skip("gpu_ranks_in_separate_processes_join_by_unique_id");
    if gpus.len() < 2 {
        if !gpus.is_empty() {
            note(&format!("skipped: gpu_ranks_in_separate_processes_join_by_unique_id needs 2 GPUs, this machine has {}", gpus.len()));
        }
        return;
    }
    let ranks = gpus.len();
    drop(gpus);
    // Rank 0's job, as a launcher would do it: make the id, hand its text to every rank.
    let id = UniqueId::new(Backend::Gpu).unwrap().to_string();
    let children: Vec<_> = (0..ranks)
        .map(|rank| {
            child_test_command("gpu_rank_child")
                .env(RANK_CHILD_ID, &id)
                .env(RANK_CHILD_RANK, rank.to_string())
                .env(RANK_CHILD_RANKS, ranks.to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("starting a rank process")
        })
        .collect();
    for (rank, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "rank {rank} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("1 passed"), "rank {rank}'s test did not run:\n{stdout}");
    }
    note(&format!("{ranks} processes, one GPU each, joined by unique id and agreed"));
}

/// One rank of [`gpu_ranks_in_separate_processes_join_by_unique_id`]: GPU `rank`, the id
/// and rank count from the environment.
#[test]
#[ignore = "run as a child process by gpu_ranks_in_separate_processes_join_by_unique_id"]
fn gpu_rank_child() {
    let var = |name| std::env::var(name).unwrap_or_else(|_| panic!("{name} is set by the parent test"));
    let id: UniqueId = var(RANK_CHILD_ID).parse().unwrap();
    let rank: usize = var(RANK_CHILD_RANK).parse().unwrap();
    let ranks: usize = var(RANK_CHILD_RANKS).parse().unwrap();
    let device = Device::from(Gpu::with_ordinal(rank as u32).unwrap());
    let comm = Communicator::join(&device, &id, rank, ranks, options(60_000)).unwrap();
    let got = run_rank(&comm, &device, rank, PROCESS_N).unwrap();
    assert_eq!(got, expected_ranks(ranks, PROCESS_N), "rank {rank}");
}
