// scan_cub: CUB's cub::DeviceScan (InclusiveSum, ExclusiveSum) and cub::DeviceSelect (If,
// Flagged), and a device-to-device cudaMemcpyAsync of the same bytes (the copy ceiling),
// timed the way warpsafe's scan-bench times warpsafe's Scanner and Selector, so that the
// two can be compared line by line. scan-bench compiles and runs this file itself (nvcc
// -O3 -std=c++17 -arch=native, bench_common.cuh beside it); by hand:
//
//   nvcc -O3 -std=c++17 -arch=native -o scan_cub scan_cub.cu
//   ./scan_cub [--counts 1024,4096] [--types f32,f64,i32]
//              [--algorithms inclusive_sum,exclusive_sum,select_if,select_flagged,copy]
//              [--huge 2148532224] [--reps 7] [--min-batch-ms 10] [--min-calls 20]
//
// --counts are element counts; --huge N adds one more count for i32 only (skipped with a
// `skip,` line when the GPU has not the memory). For every (type, count) it fills an input
// with the data that bench/src/scan/data.rs documents (the same function: both sides see
// the same elements and select the same ones): uniform in [0, 1) for f32 and f64, in
// [0, 2^30) for i32, and flags that are 0 or 1 with probability 1/2. select_if keeps
// the elements below the midpoint (0.5, or 2^29 for i32). For every algorithm it calls
// CUB once over a poisoned output and checks the output against a host reference, then
// times it by the method of bench_common.cuh (warm-up calls, one calibration batch, --reps
// batches of K back-to-back calls between CUDA events on one stream), then checks the
// last call's output again. Each call is what a user pays for: CUB's launches of that
// call (two for a scan: the tile-state initialisation and the scan), with the temporary
// storage allocated outside the timed loop (once, grown when a call needs more). num_items
// is an int up to 2^31 - 1 elements, an int64_t beyond (CUB 3 takes both; i32 only).
//
// Checks: scans of i32 are exact (wrapping, as two's complement); scans of f32 and f64
// are compared with a running sum in double, within a relative tolerance of 1e-3 (f32)
// or 1e-9 (f64) of max(|sum|, 1): the summation order differs. Selections: the count and
// every kept element, bit for bit. The copy: every byte.
//
// Output, one record per line, comma separated (scan-bench parses it):
//   meta,<key>,<value>
//   cub,<algorithm>,<type>,<n>,<median s/call>,<selected or ->,<calls per batch>,<reps>,<min s/call>,<max s/call>,<check>,<detail>
//   skip,<message>
//   error,<message>                 (then a non-zero exit status)
// <check> is "ok", or "bad:<what differs>"; <detail> says how CUB was called.

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <climits>

#include "bench_common.cuh"

namespace {

using namespace bench;

enum class Algorithm { InclusiveSum, ExclusiveSum, SelectIf, SelectFlagged, Copy };

const Algorithm ALL_ALGORITHMS[] = {Algorithm::InclusiveSum, Algorithm::ExclusiveSum, Algorithm::SelectIf,
                                    Algorithm::SelectFlagged, Algorithm::Copy};

const char* algorithm_name(Algorithm a) {
    switch (a) {
        case Algorithm::InclusiveSum: return "inclusive_sum";
        case Algorithm::ExclusiveSum: return "exclusive_sum";
        case Algorithm::SelectIf: return "select_if";
        case Algorithm::SelectFlagged: return "select_flagged";
        default: return "copy";
    }
}

// ---- Input data: the same function as bench/src/scan/data.rs ---------------------------

const uint64_t FLAG_SALT = 80;

uint64_t value_salt(Type t) {
    switch (t) {
        case Type::F32: return 65;
        case Type::F64: return 66;
        default: return 67;
    }
}

// Element i of the input, and the select_if bound (the middle of the range).
template <class T>
T element(uint64_t i);
template <>
float element<float>(uint64_t i) {
    return float(hash(value_salt(Type::F32), i) >> 40) * 0x1p-24f;
}
template <>
double element<double>(uint64_t i) {
    return double(hash(value_salt(Type::F64), i) >> 11) * 0x1p-53;
}
template <>
int32_t element<int32_t>(uint64_t i) {
    return int32_t(hash(value_salt(Type::I32), i) >> 34);
}

template <class T>
T midpoint() {
    if constexpr (std::is_same_v<T, int32_t>) {
        return int32_t(1) << 29;
    } else {
        return T(0.5);
    }
}

uint8_t flag(uint64_t i) { return uint8_t(hash(FLAG_SALT, i) >> 63); }

// The select_if predicate: warpsafe's LessThan(midpoint).
template <class T>
struct LessThan {
    T bound;
    __host__ __device__ __forceinline__ bool operator()(const T& x) const { return x < bound; }
};

// ---- Host references -------------------------------------------------------------------

// The first mismatch a worker found: its index (UINT64_MAX: none) and message.
struct Mismatch {
    uint64_t index = UINT64_MAX;
    std::string message;
};

std::string first_of(const std::vector<Mismatch>& found) {
    const Mismatch* first = nullptr;
    for (const auto& m : found) {
        if (m.index != UINT64_MAX && (first == nullptr || m.index < first->index)) first = &m;
    }
    return first ? first->message : std::string();
}

// The running sum of a scan's reference, and whether an output element matches it.
template <class T>
struct ScanRef {
    using Acc = double;
    static constexpr double tolerance = std::is_same_v<T, float> ? 1e-3 : 1e-9;
    static Acc add(Acc a, T x) { return a + double(x); }
    static bool matches(T got, Acc want) {
        return std::fabs(double(got) - want) <= tolerance * std::max(std::fabs(want), 1.0);
    }
    static std::string show_acc(Acc a) { return format_value(a); }
};
template <>
struct ScanRef<int32_t> {
    using Acc = uint32_t;  // two's-complement wrap
    static Acc add(Acc a, int32_t x) { return a + uint32_t(x); }
    static bool matches(int32_t got, Acc want) { return uint32_t(got) == want; }
    static std::string show_acc(Acc a) { return format_value(int32_t(a)); }
};

// Empty when out[0..n) is the inclusive (or exclusive) sum of in[0..n), else what differs.
template <class T>
std::string check_scan(const std::vector<T>& in, const std::vector<T>& out, uint64_t n, bool exclusive) {
    using R = ScanRef<T>;
    const unsigned workers = host_workers();
    std::vector<typename R::Acc> sums(workers, typename R::Acc(0));
    parallel_chunks(n, workers, [&](unsigned w, uint64_t begin, uint64_t end) {
        typename R::Acc s(0);
        for (uint64_t i = begin; i < end; ++i) s = R::add(s, in[i]);
        sums[w] = s;
    });
    std::vector<Mismatch> found(workers);
    parallel_chunks(n, workers, [&](unsigned w, uint64_t begin, uint64_t end) {
        typename R::Acc s(0);
        for (unsigned v = 0; v < w; ++v) s = s + sums[v];
        uint64_t bad = 0;
        for (uint64_t i = begin; i < end; ++i) {
            const typename R::Acc before = s;
            s = R::add(s, in[i]);
            const typename R::Acc want = exclusive ? before : s;
            if (!R::matches(out[i], want)) {
                if (bad++ == 0) {
                    found[w].index = i;
                    found[w].message = "element " + std::to_string(i) + " is " + format_value(out[i]) + " not " +
                                       R::show_acc(want);
                }
            }
        }
        if (bad > 1) found[w].message += " (and " + std::to_string(bad - 1) + " more in its chunk)";
    });
    return first_of(found);
}

// Empty when out[0..count) holds the kept elements of in[0..n) in order and `count` is
// their number, else what differs. `keep(i)` says whether element i is kept.
template <class T, class Keep>
std::string check_select(const std::vector<T>& in, const std::vector<T>& out, uint64_t n, uint64_t count,
                         Keep&& keep) {
    const unsigned workers = host_workers();
    std::vector<uint64_t> kept(workers, 0);
    parallel_chunks(n, workers, [&](unsigned w, uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) kept[w] += keep(i) ? 1 : 0;
    });
    uint64_t total = 0;
    for (uint64_t k : kept) total += k;
    if (total != count) return "count " + std::to_string(count) + " not " + std::to_string(total);
    std::vector<Mismatch> found(workers);
    parallel_chunks(n, workers, [&](unsigned w, uint64_t begin, uint64_t end) {
        uint64_t j = 0;
        for (unsigned v = 0; v < w; ++v) j += kept[v];
        for (uint64_t i = begin; i < end && found[w].index == UINT64_MAX; ++i) {
            if (!keep(i)) continue;
            if (std::memcmp(&out[j], &in[i], sizeof(T)) != 0) {
                found[w].index = j;
                found[w].message = "kept element " + std::to_string(j) + " is " + format_value(out[j]) + " not " +
                                   format_value(in[i]) + " (input " + std::to_string(i) + ")";
            }
            ++j;
        }
    });
    return first_of(found);
}

// ---- CUB's calls -----------------------------------------------------------------------

struct Buffers {
    uint64_t n;
    void* d_in;
    const uint8_t* d_flags;
    void* d_out;
    unsigned long long* d_count;
};

// One call of `a` over `n` elements (num_items of type N); with temp == nullptr, only the
// temporary storage's size (CUB's convention; 0 for the copy).
template <class T, class N>
cudaError_t call_with(Algorithm a, void* temp, size_t& temp_bytes, const Buffers& b, N n, cudaStream_t stream) {
    const T* in = static_cast<const T*>(b.d_in);
    T* out = static_cast<T*>(b.d_out);
    switch (a) {
        case Algorithm::InclusiveSum: return cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n, stream);
        case Algorithm::ExclusiveSum: return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, n, stream);
        case Algorithm::SelectIf:
            return cub::DeviceSelect::If(temp, temp_bytes, in, out, b.d_count, n, LessThan<T>{midpoint<T>()}, stream);
        case Algorithm::SelectFlagged:
            return cub::DeviceSelect::Flagged(temp, temp_bytes, in, b.d_flags, out, b.d_count, n, stream);
        default:
            if (temp == nullptr) {
                temp_bytes = 0;
                return cudaSuccess;
            }
            return cudaMemcpyAsync(out, in, size_t(b.n) * sizeof(T), cudaMemcpyDeviceToDevice, stream);
    }
}

// num_items as an int when it fits (as most callers pass it), else as an int64_t.
bool int_items(uint64_t n) { return n <= uint64_t(INT_MAX); }

// One call (or the size query) with num_items of the type that fits. The int64_t form is
// compiled for i32 only (--huge), which keeps CUB's kernels to compile to a third fewer.
template <class T>
cudaError_t call(Algorithm a, void* temp, size_t& temp_bytes, const Buffers& b, cudaStream_t stream) {
    if (int_items(b.n)) return call_with<T, int>(a, temp, temp_bytes, b, int(b.n), stream);
    if constexpr (std::is_same_v<T, int32_t>) {
        return call_with<T, int64_t>(a, temp, temp_bytes, b, int64_t(b.n), stream);
    } else {
        usage("more than 2^31 - 1 elements are measured for i32 only (--huge)");
    }
}

// ---- The run ---------------------------------------------------------------------------

struct Plan {
    std::vector<uint64_t> counts{};
    std::vector<Type> types{Type::F32, Type::F64, Type::I32};
    std::vector<Algorithm> algorithms{std::begin(ALL_ALGORITHMS), std::end(ALL_ALGORITHMS)};
    uint64_t huge = 0;  // an extra i32 count (0: none)
    TimingPlan timing;
};

struct Context {
    const Plan& plan;
    cudaStream_t stream = nullptr;
    void* temp = nullptr;
    size_t temp_capacity = 0;
    bool all_ok = true;
};

// Room for `bytes` of temporary storage (at least one byte, so that the pointer is never
// null); grows the allocation outside any timed loop.
void reserve_temp(Context& ctx, size_t bytes) {
    bytes = std::max<size_t>(bytes, 1);
    if (bytes <= ctx.temp_capacity) return;
    CHECK(cudaStreamSynchronize(ctx.stream));
    CHECK(cudaFree(ctx.temp));
    CHECK(cudaMalloc(&ctx.temp, bytes));
    ctx.temp_capacity = bytes;
}

// What one call's output must be, checked against the host data: empty when right.
template <class T>
std::string check_output(Algorithm a, const Buffers& b, const std::vector<T>& in, const std::vector<uint8_t>& flags,
                         cudaStream_t stream, uint64_t* selected) {
    std::vector<T> out(b.n);
    unsigned long long count = 0;
    CHECK(cudaMemcpyAsync(out.data(), b.d_out, b.n * sizeof(T), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaMemcpyAsync(&count, b.d_count, sizeof count, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    *selected = count;
    const T bound = midpoint<T>();
    switch (a) {
        case Algorithm::InclusiveSum: return check_scan(in, out, b.n, false);
        case Algorithm::ExclusiveSum: return check_scan(in, out, b.n, true);
        case Algorithm::SelectIf:
            return check_select(in, out, b.n, count, [&](uint64_t i) { return in[i] < bound; });
        case Algorithm::SelectFlagged:
            return check_select(in, out, b.n, count, [&](uint64_t i) { return flags[i] != 0; });
        default:
            if (b.n > 0 && std::memcmp(out.data(), in.data(), b.n * sizeof(T)) != 0) return "the copy differs";
            return "";
    }
}

template <class T>
void run_count(Context& ctx, Type type, uint64_t n) {
    std::vector<T> host(n);
    std::vector<uint8_t> flags(n);
    parallel_chunks(n, host_workers(), [&](unsigned, uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) {
            host[i] = element<T>(i);
            flags[i] = flag(i);
        }
    });
    const size_t bytes = std::max<size_t>(n * sizeof(T), 1);
    Buffers b{n, nullptr, nullptr, nullptr, nullptr};
    uint8_t* d_flags = nullptr;
    CHECK(cudaMalloc(&b.d_in, bytes));
    CHECK(cudaMalloc(&b.d_out, bytes));
    CHECK(cudaMalloc(&d_flags, std::max<size_t>(n, 1)));
    CHECK(cudaMalloc(&b.d_count, sizeof(unsigned long long)));
    b.d_flags = d_flags;
    CHECK(cudaMemcpy(b.d_in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_flags, flags.data(), n, cudaMemcpyHostToDevice));
    for (Algorithm a : ctx.plan.algorithms) {
        size_t temp_bytes = 0;
        CHECK(call<T>(a, nullptr, temp_bytes, b, ctx.stream));
        reserve_temp(ctx, temp_bytes);
        auto once = [&] {
            size_t bytes_now = temp_bytes;
            CHECK(call<T>(a, ctx.temp, bytes_now, b, ctx.stream));
        };
        // The first call's output (over a poisoned output and count, so that a call that
        // writes nothing cannot pass) and the last timed call's must both be right.
        CHECK(cudaMemsetAsync(b.d_out, 0x5A, bytes, ctx.stream));
        CHECK(cudaMemsetAsync(b.d_count, 0xFF, sizeof(unsigned long long), ctx.stream));
        once();
        uint64_t selected = 0;
        std::string bad = check_output<T>(a, b, host, flags, ctx.stream, &selected);
        const Timing t = measure(once, ctx.stream, ctx.plan.timing);
        const std::string bad_last = check_output<T>(a, b, host, flags, ctx.stream, &selected);
        if (bad.empty() && !bad_last.empty()) bad = bad_last + " (after timing)";
        const bool ok = bad.empty();
        ctx.all_ok = ctx.all_ok && ok;
        const bool selects = a == Algorithm::SelectIf || a == Algorithm::SelectFlagged;
        const std::string count_field = selects ? std::to_string(selected) : "-";
        std::string detail = a == Algorithm::Copy ? std::string("cudaMemcpyAsync device to device")
                                                  : "temp " + std::to_string(temp_bytes) + " B; num_items " +
                                                        (int_items(n) ? "int" : "int64_t");
        std::replace(bad.begin(), bad.end(), ',', ';');
        std::printf("cub,%s,%s,%" PRIu64 ",%.6e,%s,%ld,%d,%.6e,%.6e,%s%s,%s\n", algorithm_name(a), type_name(type), n,
                    t.median, count_field.c_str(), t.calls, ctx.plan.timing.reps, t.min, t.max, ok ? "ok" : "bad:",
                    bad.c_str(), detail.c_str());
        std::fflush(stdout);
    }
    CHECK(cudaFree(b.d_in));
    CHECK(cudaFree(b.d_out));
    CHECK(cudaFree(d_flags));
    CHECK(cudaFree(b.d_count));
}

// Whether the GPU has room for a run over n elements of T (input, output, flags and some
// temporary storage, with a margin); prints a `skip,` line when not.
template <class T>
bool fits(Type type, uint64_t n) {
    size_t free_bytes = 0, total_bytes = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double need = double(n) * (2.0 * sizeof(T) + 1.0) * 1.05 + double(1 << 30);
    if (need <= double(free_bytes)) return true;
    std::printf("skip,%s %" PRIu64 ": needs about %.1f GiB of device memory and %.1f GiB are free\n", type_name(type),
                n, need / double(1ull << 30), double(free_bytes) / double(1ull << 30));
    std::fflush(stdout);
    return false;
}

template <class T>
void run_type(Context& ctx, Type type) {
    for (uint64_t n : ctx.plan.counts) run_count<T>(ctx, type, n);
    if (type == Type::I32 && ctx.plan.huge > 0 && fits<T>(type, ctx.plan.huge)) run_count<T>(ctx, type, ctx.plan.huge);
}

Plan parse_args(int argc, char** argv) {
    Plan plan;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (i + 1 >= argc) usage(flag + " needs a value");
        const std::string value = argv[++i];
        // Up to 2^34 elements (64 GiB of f32).
        const long most = long(1) << 34;
        if (flag == "--counts") {
            plan.counts.clear();
            for (const auto& p : split(value)) plan.counts.push_back(uint64_t(parse_number(flag, p, 0, most)));
        } else if (flag == "--types") {
            plan.types = parse_types(value);
        } else if (flag == "--algorithms") {
            plan.algorithms.clear();
            for (const auto& p : split(value)) {
                const Algorithm* found = nullptr;
                for (const Algorithm& a : ALL_ALGORITHMS) {
                    if (p == algorithm_name(a)) found = &a;
                }
                if (found == nullptr) {
                    usage("unknown algorithm '" + p +
                          "' (inclusive_sum, exclusive_sum, select_if, select_flagged, copy)");
                }
                plan.algorithms.push_back(*found);
            }
        } else if (flag == "--huge") {
            plan.huge = uint64_t(parse_number(flag, value, 0, most));
        } else if (!parse_timing_flag(flag, value, plan.timing)) {
            usage("unknown argument '" + flag + "'");
        }
    }
    if (plan.counts.empty() && plan.huge == 0) {
        for (int log2n = 10; log2n <= 28; log2n += 2) plan.counts.push_back(uint64_t(1) << log2n);
    }
    if (plan.types.empty() || plan.algorithms.empty()) usage("nothing to run");
    return plan;
}

}  // namespace

int main(int argc, char** argv) {
    const Plan plan = parse_args(argc, argv);
    print_meta();
    Context ctx{plan};
    CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    for_each_type(plan.types, [&](auto zero, Type type) { run_type<decltype(zero)>(ctx, type); });
    std::printf("meta,temp_storage_bytes,%zu\n", ctx.temp_capacity);
    CHECK(cudaFree(ctx.temp));
    CHECK(cudaStreamDestroy(ctx.stream));
    return exit_status(ctx.all_ok);
}
