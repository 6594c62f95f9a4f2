// reduce_cub: CUB's cub::DeviceReduce timed the way warpsafe's reduce-bench times warpsafe,
// so that the two can be compared line by line. reduce-bench compiles and runs this file
// itself (nvcc -O3 -std=c++17 -arch=native); it can also be run by hand:
//
//   nvcc -O3 -std=c++17 -arch=native -o reduce_cub reduce_cub.cu
//   ./reduce_cub [--sizes 10,16,20,24,26,28] [--types f32,f64,i32] [--ops sum,max]
//                [--reps 7] [--min-batch-ms 10] [--min-calls 20] [--reference-only]
//
// Sizes are log2 of the element count. For every (type, op, size) it fills an input with
// the deterministic data that bench/src/data.rs documents (the two implementations must
// agree bit for bit: the results are exact, so reduce-bench compares CUB's result with its
// own reference), calls cub::DeviceReduce::Sum or ::Max once and checks the result against
// a host reference, then times it: warm-up calls, one calibration batch that picks K (the
// calls per batch: at least --min-calls, and enough for --min-batch-ms), then --reps
// batches of K back-to-back calls on one stream with a CUDA event before and after each
// batch. The temporary storage is sized for the largest request and allocated once. The
// helpers it shares with scan_cub.cu (error checks, the hash, the timing method) are in
// bench_common.cuh.
//
// Output, one record per line, comma separated (reduce-bench parses it):
//   meta,<key>,<value>
//   cub,<op>,<type>,<n>,<median s/call>,<result>,<calls per batch>,<reps>,<min s/call>,<max s/call>,<check>
//   error,<message>                 (then a non-zero exit status)
// <check> is "ok", or "bad:<expected>" when the result differs from the host reference.

#include <cub/device/device_reduce.cuh>

#include "bench_common.cuh"

namespace {

using namespace bench;

// ---- Input data: the same function as bench/src/data.rs -------------------------------
//
// Every element is an integer, so every result is exact whatever the reduction order:
// - f32: the elements are 0 except every `stride`-th one, which is uniform in [-m, m], and
//   one peak element, m + 1, at `peak`. stride and m are chosen from n so that the sum of
//   absolute values stays below 2^24: every partial sum of any order is then an integer
//   that f32 holds exactly.
// - f64: uniform in [-2^20, 2^20), peak 2^20: absolute sums stay far below 2^53.
// - i32: uniform in [-2^30, 2^30), peak 2^30; the sum wraps modulo 2^32 (two's complement).
// The peak is the unique maximum, at a position that depends on n.

enum class Op { Sum, Max };

const char* op_name(Op op) { return op == Op::Sum ? "sum" : "max"; }

uint64_t salt_of(Type t) {
    switch (t) {
        case Type::F32: return 1;
        case Type::F64: return 2;
        default: return 3;
    }
}

struct Shape {
    Type type;
    uint64_t n;
    uint64_t stride;
    uint64_t m;
    uint64_t peak;
};

Shape shape_of(Type t, uint64_t n) {
    Shape s{t, n, 1, 0, 0};
    s.peak = hash(salt_of(t) + 16, n) % n;
    if (t == Type::F32) {
        s.stride = std::max<uint64_t>(1, n >> 23);
        uint64_t count = (n + s.stride - 1) / s.stride;
        s.m = std::min<uint64_t>(255, std::max<uint64_t>(1, (uint64_t(1) << 23) / count));
    }
    return s;
}

int64_t raw_value(const Shape& s, uint64_t i) {
    const uint64_t h = hash(salt_of(s.type), i);
    switch (s.type) {
        case Type::F32:
            if (i == s.peak) return int64_t(s.m) + 1;
            if (i % s.stride != 0) return 0;
            return int64_t(h % (2 * s.m + 1)) - int64_t(s.m);
        case Type::F64:
            if (i == s.peak) return int64_t(1) << 20;
            return int64_t(h % (uint64_t(1) << 21)) - (int64_t(1) << 20);
        default:
            if (i == s.peak) return int64_t(1) << 30;
            return int64_t(h >> 33) - (int64_t(1) << 30);
    }
}

struct Reference {
    int64_t sum = 0;  // exact (|sum| < 2^63 for every size this program accepts)
    int64_t max = INT64_MIN;
};

// Fills `out` (n elements of T) and returns the exact sum and maximum, on all host cores.
template <class T>
Reference generate(const Shape& s, T* out) {
    const unsigned workers = host_workers();
    std::vector<Reference> parts(workers);
    parallel_chunks(s.n, workers, [&](unsigned w, uint64_t begin, uint64_t end) {
        Reference r;
        for (uint64_t i = begin; i < end; ++i) {
            const int64_t v = raw_value(s, i);
            out[i] = T(v);
            r.sum += v;
            r.max = std::max(r.max, v);
        }
        parts[w] = r;
    });
    Reference total;
    for (const auto& r : parts) {
        total.sum += r.sum;
        total.max = std::max(total.max, r.max);
    }
    return total;
}

// ---- Results ---------------------------------------------------------------------------

// The expected result in T: exact for f32 and f64 (integers below 2^24 and 2^53), the
// two's-complement wrap of the exact sum for i32.
template <class T>
T expected(const Reference& r, Op op) {
    const int64_t v = op == Op::Sum ? r.sum : r.max;
    if constexpr (std::is_same_v<T, int32_t>) {
        return int32_t(uint32_t(uint64_t(v)));
    } else {
        return T(v);
    }
}

// ---- Timing ----------------------------------------------------------------------------

struct Plan {
    std::vector<int> log2_sizes{10, 16, 20, 24, 26, 28};
    std::vector<Type> types{Type::F32, Type::F64, Type::I32};
    std::vector<Op> ops{Op::Sum, Op::Max};
    TimingPlan timing;
    bool reference_only = false;
};

template <class T>
cudaError_t cub_reduce(Op op, void* temp, size_t& temp_bytes, const T* in, T* out, int n, cudaStream_t stream) {
    if (op == Op::Sum) return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream);
    return cub::DeviceReduce::Max(temp, temp_bytes, in, out, n, stream);
}

template <class T>
size_t temp_bytes_for(Op op, int n) {
    size_t bytes = 0;
    CHECK(cub_reduce<T>(op, nullptr, bytes, nullptr, nullptr, n, nullptr));
    return bytes;
}

struct Context {
    const Plan& plan;
    cudaStream_t stream;
    void* temp;
    size_t temp_capacity;
    bool all_ok = true;
};

template <class T>
void run_type(Context& ctx, Type type) {
    const uint64_t n_max = uint64_t(1) << *std::max_element(ctx.plan.log2_sizes.begin(), ctx.plan.log2_sizes.end());
    std::vector<T> host(n_max);
    T* d_in = nullptr;
    T* d_out = nullptr;
    CHECK(cudaMalloc(&d_in, n_max * sizeof(T)));
    CHECK(cudaMalloc(&d_out, sizeof(T)));
    for (int log2n : ctx.plan.log2_sizes) {
        const uint64_t n = uint64_t(1) << log2n;
        const Shape shape = shape_of(type, n);
        const Reference ref = generate<T>(shape, host.data());
        CHECK(cudaMemcpy(d_in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
        for (Op op : ctx.plan.ops) {
            size_t temp_bytes = ctx.temp_capacity;
            auto call = [&] {
                size_t bytes = temp_bytes;
                CHECK(cub_reduce<T>(op, ctx.temp, bytes, d_in, d_out, int(n), ctx.stream));
            };
            const T want = expected<T>(ref, op);
            // The first call's result (over a poisoned output, so that a call that writes
            // nothing cannot pass) and the last timed call's must both be right.
            CHECK(cudaMemsetAsync(d_out, 0x5A, sizeof(T), ctx.stream));
            call();
            T first;
            CHECK(cudaMemcpyAsync(&first, d_out, sizeof(T), cudaMemcpyDeviceToHost, ctx.stream));
            CHECK(cudaStreamSynchronize(ctx.stream));
            const Timing t = measure(call, ctx.stream, ctx.plan.timing);
            T got;
            CHECK(cudaMemcpyAsync(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost, ctx.stream));
            CHECK(cudaStreamSynchronize(ctx.stream));
            const bool ok = std::memcmp(&first, &want, sizeof(T)) == 0 && std::memcmp(&got, &want, sizeof(T)) == 0;
            ctx.all_ok = ctx.all_ok && ok;
            std::printf("cub,%s,%s,%" PRIu64 ",%.6e,%s,%ld,%d,%.6e,%.6e,%s%s\n", op_name(op), type_name(type), n,
                        t.median, format_value(got).c_str(), t.calls, ctx.plan.timing.reps, t.min, t.max,
                        ok ? "ok" : "bad:",
                        ok ? "" : format_value(want).c_str());
            std::fflush(stdout);
        }
    }
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
}

Plan parse_args(int argc, char** argv) {
    Plan plan;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--reference-only") {
            plan.reference_only = true;
            continue;
        }
        if (i + 1 >= argc) usage(flag + " needs a value");
        const std::string value = argv[++i];
        if (flag == "--sizes") {
            plan.log2_sizes.clear();
            // 2^30 elements of f64 is 8 GiB; int num_items limits CUB's call to 2^31 - 1.
            for (const auto& p : split(value)) plan.log2_sizes.push_back(int(parse_number(flag, p, 0, 30)));
        } else if (flag == "--types") {
            plan.types = parse_types(value);
        } else if (flag == "--ops") {
            plan.ops.clear();
            for (const auto& p : split(value)) {
                if (p == "sum") plan.ops.push_back(Op::Sum);
                else if (p == "max") plan.ops.push_back(Op::Max);
                else usage("unknown op '" + p + "' (sum, max)");
            }
        } else if (!parse_timing_flag(flag, value, plan.timing)) {
            usage("unknown argument '" + flag + "'");
        }
    }
    if (plan.log2_sizes.empty() || plan.types.empty() || plan.ops.empty()) usage("nothing to run");
    return plan;
}

}  // namespace

// --reference-only: prints `ref,<type>,<n>,<sum>,<max>` (exact integers, before any
// conversion to the element type) for every type and size, without touching a GPU: the
// check that this file's data agrees with bench/src/data.rs (whose tests hold the same
// numbers).
void print_references(const Plan& plan) {
    for (Type type : plan.types) {
        for (int log2n : plan.log2_sizes) {
            const uint64_t n = uint64_t(1) << log2n;
            std::vector<double> scratch(n);
            const Reference r = generate<double>(shape_of(type, n), scratch.data());
            std::printf("ref,%s,%" PRIu64 ",%" PRId64 ",%" PRId64 "\n", type_name(type), n, r.sum, r.max);
        }
    }
}

int main(int argc, char** argv) {
    const Plan plan = parse_args(argc, argv);
    if (plan.reference_only) {
        print_references(plan);
        return 0;
    }

    print_meta();

    // One temporary allocation, as large as the largest request of the whole run.
    size_t capacity = 1;
    for (int log2n : plan.log2_sizes) {
        const int n = int(uint64_t(1) << log2n);
        for (Op op : plan.ops) {
            capacity = std::max({capacity, temp_bytes_for<float>(op, n), temp_bytes_for<double>(op, n),
                                 temp_bytes_for<int32_t>(op, n)});
        }
    }
    Context ctx{plan, nullptr, nullptr, capacity};
    CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&ctx.temp, capacity));
    std::printf("meta,temp_storage_bytes,%zu\n", capacity);

    for_each_type(plan.types, [&](auto zero, Type type) { run_type<decltype(zero)>(ctx, type); });
    CHECK(cudaFree(ctx.temp));
    CHECK(cudaStreamDestroy(ctx.stream));
    return exit_status(ctx.all_ok);
}
