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
// batch. The temporary storage is sized for the largest request and allocated once.
//
// Output, one record per line, comma separated (reduce-bench parses it):
//   meta,<key>,<value>
//   cub,<op>,<type>,<n>,<median s/call>,<result>,<calls per batch>,<reps>,<min s/call>,<max s/call>,<check>
//   error,<message>                 (then a non-zero exit status)
// <check> is "ok", or "bad:<expected>" when the result differs from the host reference.

#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

[[noreturn]] void fail(const char* what, cudaError_t err, int line) {
    std::printf("error,%s failed at reduce_cub.cu:%d: %s (%s)\n", what, line, cudaGetErrorName(err),
                cudaGetErrorString(err));
    std::fflush(stdout);
    std::exit(2);
}

#define CHECK(call)                                 \
    do {                                            \
        cudaError_t check_err_ = (call);            \
        if (check_err_ != cudaSuccess) {            \
            fail(#call, check_err_, __LINE__);      \
        }                                           \
    } while (0)

[[noreturn]] void usage(const std::string& message) {
    std::printf("error,%s\n", message.c_str());
    std::fflush(stdout);
    std::exit(2);
}

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

enum class Type { F32, F64, I32 };
enum class Op { Sum, Max };

const char* type_name(Type t) {
    switch (t) {
        case Type::F32: return "f32";
        case Type::F64: return "f64";
        default: return "i32";
    }
}

const char* op_name(Op op) { return op == Op::Sum ? "sum" : "max"; }

uint64_t mix(uint64_t z) {
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z;
}

uint64_t hash(uint64_t salt, uint64_t i) { return mix(i + (salt + 1) * 0x9E3779B97F4A7C15ull); }

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
    unsigned workers = std::max(1u, std::min(64u, std::thread::hardware_concurrency()));
    std::vector<Reference> parts(workers);
    std::vector<std::thread> threads;
    const uint64_t chunk = (s.n + workers - 1) / workers;
    for (unsigned w = 0; w < workers; ++w) {
        threads.emplace_back([&, w] {
            Reference r;
            const uint64_t begin = std::min(s.n, w * chunk), end = std::min(s.n, begin + chunk);
            for (uint64_t i = begin; i < end; ++i) {
                const int64_t v = raw_value(s, i);
                out[i] = T(v);
                r.sum += v;
                r.max = std::max(r.max, v);
            }
            parts[w] = r;
        });
    }
    for (auto& t : threads) t.join();
    Reference total;
    for (const auto& r : parts) {
        total.sum += r.sum;
        total.max = std::max(total.max, r.max);
    }
    return total;
}

// ---- Results ---------------------------------------------------------------------------

std::string format_value(float v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return buf;
}
std::string format_value(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}
std::string format_value(int32_t v) { return std::to_string(v); }

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
    int reps = 7;
    double min_batch_s = 0.010;
    int min_calls = 20;
    int warmup_calls = 3;
    long max_calls = 200000;
    bool reference_only = false;
};

struct Timing {
    double median = 0, min = 0, max = 0;
    long calls = 0;
};

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t k = v.size() / 2;
    return v.size() % 2 ? v[k] : 0.5 * (v[k - 1] + v[k]);
}

// Seconds per call of `call` (which enqueues one reduction on `stream`), by the method in
// the header comment.
template <class F>
Timing measure(F&& call, cudaStream_t stream, const Plan& plan) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    auto batch = [&](long k) {
        CHECK(cudaEventRecord(start, stream));
        for (long c = 0; c < k; ++c) call();
        CHECK(cudaEventRecord(stop, stream));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        return double(ms) * 1e-3 / double(k);
    };
    for (int c = 0; c < plan.warmup_calls; ++c) call();
    CHECK(cudaStreamSynchronize(stream));
    const double estimate = batch(plan.min_calls);
    long k = plan.min_calls;
    if (estimate > 0) k = std::max<long>(k, long(std::ceil(plan.min_batch_s / estimate)));
    k = std::min(k, plan.max_calls);
    std::vector<double> per_call;
    for (int r = 0; r < plan.reps; ++r) per_call.push_back(batch(k));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    Timing t;
    t.median = median_of(per_call);
    t.min = *std::min_element(per_call.begin(), per_call.end());
    t.max = *std::max_element(per_call.begin(), per_call.end());
    t.calls = k;
    return t;
}

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
            const Timing t = measure(call, ctx.stream, ctx.plan);
            T got;
            CHECK(cudaMemcpyAsync(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost, ctx.stream));
            CHECK(cudaStreamSynchronize(ctx.stream));
            const bool ok = std::memcmp(&first, &want, sizeof(T)) == 0 && std::memcmp(&got, &want, sizeof(T)) == 0;
            ctx.all_ok = ctx.all_ok && ok;
            std::printf("cub,%s,%s,%" PRIu64 ",%.6e,%s,%ld,%d,%.6e,%.6e,%s%s\n", op_name(op), type_name(type), n,
                        t.median, format_value(got).c_str(), t.calls, ctx.plan.reps, t.min, t.max, ok ? "ok" : "bad:",
                        ok ? "" : format_value(want).c_str());
            std::fflush(stdout);
        }
    }
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= s.size()) {
        const size_t comma = s.find(',', start);
        const size_t end = comma == std::string::npos ? s.size() : comma;
        if (end > start) parts.push_back(s.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

long parse_number(const std::string& flag, const std::string& text, long lo, long hi) {
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v < lo || v > hi) {
        usage(flag + " expects a whole number in " + std::to_string(lo) + ".." + std::to_string(hi) + ", not '" +
              text + "'");
    }
    return v;
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
            plan.types.clear();
            for (const auto& p : split(value)) {
                if (p == "f32") plan.types.push_back(Type::F32);
                else if (p == "f64") plan.types.push_back(Type::F64);
                else if (p == "i32") plan.types.push_back(Type::I32);
                else usage("unknown type '" + p + "' (f32, f64, i32)");
            }
        } else if (flag == "--ops") {
            plan.ops.clear();
            for (const auto& p : split(value)) {
                if (p == "sum") plan.ops.push_back(Op::Sum);
                else if (p == "max") plan.ops.push_back(Op::Max);
                else usage("unknown op '" + p + "' (sum, max)");
            }
        } else if (flag == "--reps") {
            plan.reps = int(parse_number(flag, value, 1, 1000));
        } else if (flag == "--min-batch-ms") {
            plan.min_batch_s = double(parse_number(flag, value, 0, 10000)) * 1e-3;
        } else if (flag == "--min-calls") {
            plan.min_calls = int(parse_number(flag, value, 1, 1000000));
        } else {
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

    int device = 0;
    CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, device));
    int driver = 0, runtime = 0;
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cudaRuntimeGetVersion(&runtime));
    std::printf("meta,device,%s\n", prop.name);
    std::printf("meta,compute_capability,%d.%d\n", prop.major, prop.minor);
    std::printf("meta,multiprocessors,%d\n", prop.multiProcessorCount);
    std::printf("meta,l2_bytes,%d\n", prop.l2CacheSize);
    std::printf("meta,cuda_driver_api,%d.%d\n", driver / 1000, (driver % 1000) / 10);
    std::printf("meta,cuda_runtime,%d.%d\n", runtime / 1000, (runtime % 1000) / 10);
    std::printf("meta,nvcc,%d.%d\n", __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__);
    std::printf("meta,cub,%d.%d.%d\n", CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100);
    std::fflush(stdout);

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

    for (Type type : plan.types) {
        switch (type) {
            case Type::F32: run_type<float>(ctx, type); break;
            case Type::F64: run_type<double>(ctx, type); break;
            case Type::I32: run_type<int32_t>(ctx, type); break;
        }
    }
    CHECK(cudaFree(ctx.temp));
    CHECK(cudaStreamDestroy(ctx.stream));
    if (!ctx.all_ok) {
        std::printf("error,at least one CUB result differs from the host reference (see the bad: records)\n");
        return 1;
    }
    return 0;
}
