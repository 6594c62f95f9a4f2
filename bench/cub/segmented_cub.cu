// segmented_cub: CUB's cub::DeviceSegmentedReduce::Sum over f32, timed the way warpsafe's
// segreduce-bench times warpsafe's SegmentedReducer, so that the two can be compared line
// by line. segreduce-bench compiles and runs this file itself (nvcc -O3 -std=c++17
// -arch=native, bench_common.cuh beside it); by hand:
//
//   nvcc -O3 -std=c++17 -arch=native -o segmented_cub segmented_cub.cu
//   ./segmented_cub [--counts 1024,4096] [--patterns 1,8,32,128,1024,65536,power-law]
//                   [--reps 7] [--min-batch-ms 10] [--min-calls 20]
//
// --counts are element counts; a pattern is a fixed segment length (a point whose length
// exceeds the count is skipped, as segreduce-bench skips it) or power-law. For every count
// it fills an input with the data that bench/src/segmented/data.rs documents (the same
// functions, integer arithmetic only: both sides see the same elements and segments):
// element i is hash(130, i) >> 61 (a whole number 0 to 7) as a float; a fixed length L
// gives ceil(n / L) segments with offsets min(i * L, n); power-law gives the offsets of
// power_law_offsets below. CUB gets 64-bit offsets (uint64_t), begin = offsets and end =
// offsets + 1, num_segments as an int64_t. For every pattern it queries the temporary
// storage once, calls CUB once over a poisoned output (all bits set: NaN) and checks the
// sums against a host reference, then times it by the method of bench_common.cuh (warm-up
// calls, one calibration batch, --reps batches of K back-to-back calls between CUDA events
// on one stream; a point whose first call took 2 ms or more gets plan_for_call's reduced
// plan: 1 warm-up call, batches of at least 1 call, at most 3 batches), then checks the
// last call's sums again. Each call is what a user pays for: CUB's launches of that call,
// with the temporary storage allocated outside the timed loop.
//
// Checks: a sum below 2^24 must be exact (every partial sum is a whole number a float
// holds, so any order gives the same bits); a larger one (only power-law's huge segments)
// within 1e-5 of the double reference, relative.
//
// Output, one record per line, comma separated (segreduce-bench parses it):
//   meta,<key>,<value>
//   cub,<pattern>,<n>,<segments>,<median s/call>,<calls per batch>,<reps>,<min s/call>,<max s/call>,<check>,<detail>
//   error,<message>                 (then a non-zero exit status)
// <check> is "ok", or "bad:<what differs>"; <detail> says how CUB was called.

#include <cub/device/device_segmented_reduce.cuh>

#include <chrono>

#include "bench_common.cuh"

namespace {

using namespace bench;

// ---- Input data and segments: the same functions as bench/src/segmented/data.rs -------

const uint64_t SALT = 130;
const uint64_t LENGTH_SALT = 131;

float element(uint64_t i) { return float(hash(SALT, i) >> 61); }

// The s-th power-law length before it is cut at the input's end: 2^k plus k more random
// bits, k the number of trailing zeros of a hash, at most 16.
uint64_t power_law_length(uint64_t s) {
    const uint64_t h = hash(LENGTH_SALT, s);
    const uint64_t k = h == 0 ? 16 : std::min<uint64_t>(uint64_t(__builtin_ctzll(h)), 16);
    return (uint64_t(1) << k) + ((h >> 32) & ((uint64_t(1) << k) - 1));
}

// Power-law segments one after another, except that when the next segment starts at or
// past q * n / 4 (q = 1, 2, 3) for the first time, a huge segment of n / 16 elements comes
// first (when n >= 16); the last segment is cut at n.
std::vector<uint64_t> power_law_offsets(uint64_t n) {
    const uint64_t huge = n / 16;
    std::vector<uint64_t> offsets{0};
    uint64_t at = 0, s = 0, huge_done = 0;
    while (at < n) {
        uint64_t len;
        if (huge > 0 && huge_done < 3 && at >= (huge_done + 1) * n / 4) {
            ++huge_done;
            len = huge;
        } else {
            len = power_law_length(s);
            ++s;
        }
        at = std::min(at + len, n);
        offsets.push_back(at);
    }
    return offsets;
}

// A pattern: a fixed segment length, or 0 for power-law.
struct Pattern {
    uint64_t len;
};

std::string pattern_name(Pattern p) { return p.len == 0 ? std::string("power-law") : std::to_string(p.len); }

std::vector<uint64_t> offsets_of(Pattern p, uint64_t n) {
    if (p.len == 0) return power_law_offsets(n);
    const uint64_t segments = (n + p.len - 1) / p.len;
    std::vector<uint64_t> offsets(segments + 1);
    parallel_chunks(segments + 1, host_workers(), [&](unsigned, uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) offsets[i] = std::min(i * p.len, n);
    });
    return offsets;
}

// ---- Host reference and check ----------------------------------------------------------

// The segments' sums in double (exact: whole numbers far below 2^53).
std::vector<double> reference(const std::vector<float>& in, const std::vector<uint64_t>& offsets) {
    const uint64_t segments = offsets.size() - 1;
    std::vector<double> sums(segments);
    parallel_chunks(segments, host_workers(), [&](unsigned, uint64_t begin, uint64_t end) {
        for (uint64_t s = begin; s < end; ++s) {
            double sum = 0;
            for (uint64_t i = offsets[s]; i < offsets[s + 1]; ++i) sum += double(in[i]);
            sums[s] = sum;
        }
    });
    return sums;
}

bool matches(float got, double want) {
    if (want < 16777216.0) return double(got) == want;
    return std::fabs(double(got) - want) <= 1e-5 * want;
}

// Empty when the device's sums match the reference, else the first mismatch and how many.
std::string check_sums(const float* d_out, const std::vector<double>& want, cudaStream_t stream) {
    const uint64_t segments = want.size();
    std::vector<float> got(segments);
    if (segments > 0) {
        CHECK(cudaMemcpyAsync(got.data(), d_out, segments * sizeof(float), cudaMemcpyDeviceToHost, stream));
    }
    CHECK(cudaStreamSynchronize(stream));
    const unsigned workers = host_workers();
    std::vector<uint64_t> first(workers, UINT64_MAX), count(workers, 0);
    parallel_chunks(segments, workers, [&](unsigned w, uint64_t begin, uint64_t end) {
        for (uint64_t s = begin; s < end; ++s) {
            if (!matches(got[s], want[s])) {
                if (first[w] == UINT64_MAX) first[w] = s;
                ++count[w];
            }
        }
    });
    uint64_t bad = UINT64_MAX, total = 0;
    for (unsigned w = 0; w < workers; ++w) {
        bad = std::min(bad, first[w]);
        total += count[w];
    }
    if (bad == UINT64_MAX) return "";
    std::string message = "segment " + std::to_string(bad) + " is " + format_value(got[bad]) + " not " +
                          format_value(want[bad]);
    if (total > 1) message += " (and " + std::to_string(total - 1) + " more)";
    return message;
}

// ---- The run ---------------------------------------------------------------------------

struct Plan {
    std::vector<uint64_t> counts{};
    std::vector<Pattern> patterns{{1}, {8}, {32}, {128}, {1024}, {65536}, {0}};
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

void run_pattern(Context& ctx, Pattern pattern, uint64_t n, const float* d_in, const std::vector<float>& host) {
    const std::vector<uint64_t> offsets = offsets_of(pattern, n);
    const uint64_t segments = offsets.size() - 1;
    const std::vector<double> want = reference(host, offsets);
    uint64_t* d_offsets = nullptr;
    float* d_out = nullptr;
    CHECK(cudaMalloc(&d_offsets, offsets.size() * sizeof(uint64_t)));
    CHECK(cudaMalloc(&d_out, std::max<uint64_t>(segments, 1) * sizeof(float)));
    CHECK(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(uint64_t), cudaMemcpyHostToDevice));
    const uint64_t* begin = d_offsets;
    const uint64_t* end = d_offsets + 1;
    const int64_t num_segments = int64_t(segments);
    size_t temp_bytes = 0;
    CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, d_in, d_out, num_segments, begin, end, ctx.stream));
    reserve_temp(ctx, temp_bytes);
    auto once = [&] {
        size_t bytes_now = temp_bytes;
        CHECK(cub::DeviceSegmentedReduce::Sum(ctx.temp, bytes_now, d_in, d_out, num_segments, begin, end,
                                              ctx.stream));
    };
    // The first call's sums (over a poisoned output, so that a call that writes nothing
    // cannot pass) and the last timed call's must both be right.
    CHECK(cudaMemsetAsync(d_out, 0xFF, std::max<uint64_t>(segments, 1) * sizeof(float), ctx.stream));
    CHECK(cudaStreamSynchronize(ctx.stream));
    const auto started = std::chrono::steady_clock::now();
    once();
    CHECK(cudaStreamSynchronize(ctx.stream));
    const double first_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::string bad = check_sums(d_out, want, ctx.stream);
    const TimingPlan timing = plan_for_call(ctx.plan.timing, first_s);
    const Timing t = measure(once, ctx.stream, timing);
    const std::string bad_last = check_sums(d_out, want, ctx.stream);
    if (bad.empty() && !bad_last.empty()) bad = bad_last + " (after timing)";
    const bool ok = bad.empty();
    ctx.all_ok = ctx.all_ok && ok;
    std::replace(bad.begin(), bad.end(), ',', ';');
    const std::string detail =
        "temp " + std::to_string(temp_bytes) + " B; uint64_t offsets (begin = offsets; end = offsets + 1)";
    std::printf("cub,%s,%" PRIu64 ",%" PRIu64 ",%.6e,%ld,%d,%.6e,%.6e,%s%s,%s\n", pattern_name(pattern).c_str(), n,
                segments, t.median, t.calls, timing.reps, t.min, t.max, ok ? "ok" : "bad:", bad.c_str(),
                detail.c_str());
    std::fflush(stdout);
    CHECK(cudaFree(d_offsets));
    CHECK(cudaFree(d_out));
}

void run_count(Context& ctx, uint64_t n) {
    std::vector<float> host(n);
    parallel_chunks(n, host_workers(), [&](unsigned, uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) host[i] = element(i);
    });
    float* d_in = nullptr;
    CHECK(cudaMalloc(&d_in, std::max<uint64_t>(n, 1) * sizeof(float)));
    CHECK(cudaMemcpy(d_in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    for (Pattern p : ctx.plan.patterns) {
        if (p.len <= n) run_pattern(ctx, p, n, d_in, host);
    }
    CHECK(cudaFree(d_in));
}

Plan parse_args(int argc, char** argv) {
    Plan plan;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (i + 1 >= argc) usage(flag + " needs a value");
        const std::string value = argv[++i];
        // Up to 2^30 elements (4 GiB of f32), as segreduce-bench takes.
        const long most = long(1) << 30;
        if (flag == "--counts") {
            plan.counts.clear();
            for (const auto& p : split(value)) plan.counts.push_back(uint64_t(parse_number(flag, p, 0, most)));
        } else if (flag == "--patterns") {
            plan.patterns.clear();
            for (const auto& p : split(value)) {
                const uint64_t len = p == "power-law" ? 0 : uint64_t(parse_number(flag, p, 1, most));
                plan.patterns.push_back(Pattern{len});
            }
        } else if (!parse_timing_flag(flag, value, plan.timing)) {
            usage("unknown argument '" + flag + "'");
        }
    }
    if (plan.counts.empty()) {
        for (int log2n = 10; log2n <= 28; log2n += 2) plan.counts.push_back(uint64_t(1) << log2n);
    }
    if (plan.patterns.empty()) usage("nothing to run");
    return plan;
}

}  // namespace

int main(int argc, char** argv) {
    const Plan plan = parse_args(argc, argv);
    print_meta();
    Context ctx{plan};
    CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    for (uint64_t n : plan.counts) run_count(ctx, n);
    std::printf("meta,temp_storage_bytes,%zu\n", ctx.temp_capacity);
    CHECK(cudaFree(ctx.temp));
    CHECK(cudaStreamDestroy(ctx.stream));
    return exit_status(ctx.all_ok);
}
