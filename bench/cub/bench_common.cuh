// bench_common.cuh: what the CUB reference programs of warpsafe's benchmarks share
// (reduce_cub.cu, scan_cub.cu, segmented_cub.cu): error checks that print an `error,` line, the element
// types and how their values print, the input hash (the same function as bench/src/data.rs), the host threads that
// fill and check inputs, the timing method of bench/src/timing.rs, the timing flags, and
// the `meta,` lines that describe the GPU and the toolkit. The benchmarks write this file
// beside the program's .cu file before they compile it.

#pragma once

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

namespace bench {

// ---- Errors ----------------------------------------------------------------------------

[[noreturn]] inline void fail(const char* what, cudaError_t err, const char* file, int line) {
    const char* base = std::strrchr(file, '/');
    std::printf("error,%s failed at %s:%d: %s (%s)\n", what, base ? base + 1 : file, line, cudaGetErrorName(err),
                cudaGetErrorString(err));
    std::fflush(stdout);
    std::exit(2);
}

[[noreturn]] inline void usage(const std::string& message) {
    std::printf("error,%s\n", message.c_str());
    std::fflush(stdout);
    std::exit(2);
}

}  // namespace bench

#define CHECK(call)                                                 \
    do {                                                            \
        cudaError_t check_err_ = (call);                            \
        if (check_err_ != cudaSuccess) {                            \
            bench::fail(#call, check_err_, __FILE__, __LINE__);     \
        }                                                           \
    } while (0)

namespace bench {

// ---- Element types ---------------------------------------------------------------------

enum class Type { F32, F64, I32 };

inline const char* type_name(Type t) {
    switch (t) {
        case Type::F32: return "f32";
        case Type::F64: return "f64";
        default: return "i32";
    }
}

// Values as printed: enough digits to read the same value back.
inline std::string format_value(float v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return buf;
}
inline std::string format_value(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}
inline std::string format_value(int32_t v) { return std::to_string(v); }

// Calls f(T{}, type) for each type of `types`, T its C++ type (float, double, int32_t).
template <class F>
void for_each_type(const std::vector<Type>& types, F&& f) {
    for (Type type : types) {
        switch (type) {
            case Type::F32: f(float{}, type); break;
            case Type::F64: f(double{}, type); break;
            case Type::I32: f(int32_t{}, type); break;
        }
    }
}

// The exit status of a run: 0 when every result was right, else 1 after an `error,` line.
inline int exit_status(bool all_ok) {
    if (all_ok) return 0;
    std::printf("error,at least one CUB result differs from the host reference (see the bad: records)\n");
    return 1;
}

// ---- The input hash: SplitMix64's output function over a salted index ------------------

inline uint64_t mix(uint64_t z) {
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z;
}

inline uint64_t hash(uint64_t salt, uint64_t i) { return mix(i + (salt + 1) * 0x9E3779B97F4A7C15ull); }

// ---- Host threads ----------------------------------------------------------------------

// The number of host threads that fill and check buffers.
inline unsigned host_workers() { return std::max(1u, std::min(64u, std::thread::hardware_concurrency())); }

// Calls f(w, begin, end) for every worker w of `workers` on its own thread, the n indices
// split into consecutive chunks, and waits for them all.
template <class F>
void parallel_chunks(uint64_t n, unsigned workers, F&& f) {
    std::vector<std::thread> threads;
    const uint64_t chunk = (n + workers - 1) / workers;
    for (unsigned w = 0; w < workers; ++w) {
        const uint64_t begin = std::min(n, w * chunk), end = std::min(n, begin + chunk);
        threads.emplace_back([&f, w, begin, end] { f(w, begin, end); });
    }
    for (auto& t : threads) t.join();
}

// ---- Timing ----------------------------------------------------------------------------

// Warm-up calls, one calibration batch that picks K (the calls per batch: at least
// min_calls, and enough for min_batch_s), then `reps` batches of K back-to-back calls on
// one stream with a CUDA event before and after each batch; the median over the batches.
struct TimingPlan {
    int reps = 7;
    double min_batch_s = 0.010;
    int min_calls = 20;
    int warmup_calls = 3;
    long max_calls = 200000;
};

struct Timing {
    double median = 0, min = 0, max = 0;
    long calls = 0;
};

inline double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t k = v.size() / 2;
    return v.size() % 2 ? v[k] : 0.5 * (v[k - 1] + v[k]);
}

// Seconds per call of `call` (which enqueues one call on `stream`), by the method above.
template <class F>
Timing measure(F&& call, cudaStream_t stream, const TimingPlan& plan) {
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

// A call at least this long (seconds) is timed by plan_for_call's reduced plan.
const double SLOW_CALL_S = 0.002;

// The plan for a point whose first call took `seconds`: `plan`, or for a slow call one
// warm-up call, a calibration batch of one call and at most 3 timed batches (each still at
// least min_batch_s). The same rule as Plan::for_call_of in bench/src/timing.rs.
inline TimingPlan plan_for_call(const TimingPlan& plan, double seconds) {
    if (seconds < SLOW_CALL_S) return plan;
    TimingPlan slow = plan;
    slow.warmup_calls = std::min(plan.warmup_calls, 1);
    slow.min_calls = 1;
    slow.reps = std::min(plan.reps, 3);
    return slow;
}

// ---- Arguments -------------------------------------------------------------------------

inline std::vector<std::string> split(const std::string& s) {
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

inline long parse_number(const std::string& flag, const std::string& text, long lo, long hi) {
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v < lo || v > hi) {
        usage(flag + " expects a whole number in " + std::to_string(lo) + ".." + std::to_string(hi) + ", not '" +
              text + "'");
    }
    return v;
}

inline std::vector<Type> parse_types(const std::string& value) {
    std::vector<Type> types;
    for (const auto& p : split(value)) {
        if (p == "f32") types.push_back(Type::F32);
        else if (p == "f64") types.push_back(Type::F64);
        else if (p == "i32") types.push_back(Type::I32);
        else usage("unknown type '" + p + "' (f32, f64, i32)");
    }
    return types;
}

// Takes `flag value` when it is one of the timing flags (--reps, --min-batch-ms,
// --min-calls); false for any other flag.
inline bool parse_timing_flag(const std::string& flag, const std::string& value, TimingPlan& plan) {
    if (flag == "--reps") {
        plan.reps = int(parse_number(flag, value, 1, 1000));
    } else if (flag == "--min-batch-ms") {
        plan.min_batch_s = double(parse_number(flag, value, 0, 10000)) * 1e-3;
    } else if (flag == "--min-calls") {
        plan.min_calls = int(parse_number(flag, value, 1, 1000000));
    } else {
        return false;
    }
    return true;
}

// ---- Facts -----------------------------------------------------------------------------

// Prints the `meta,` lines: the GPU, the driver and runtime, nvcc and CUB.
inline void print_meta() {
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
}

}  // namespace bench
