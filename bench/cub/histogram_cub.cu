// histogram_cub: CUB's cub::DeviceHistogram::HistogramEven (256 even bins over [0, 256) of
// u8 samples, one channel) and a read-only kernel over the same bytes (the read ceiling),
// timed the way warpsafe's histogram-bench times warpsafe's Histogram, so that the two can
// be compared line by line. histogram-bench compiles and runs this file itself (nvcc -O3
// -std=c++17 -arch=native, bench_common.cuh beside it); by hand:
//
//   nvcc -O3 -std=c++17 -arch=native -o histogram_cub histogram_cub.cu
//   ./histogram_cub [--counts 1024,4096] [--distributions uniform,skewed]
//                   [--reps 7] [--min-batch-ms 10] [--min-calls 20]
//
// --counts are sample counts (at most 2^31 - 1). For every (distribution, count) it fills
// the samples with the data that bench/src/histogram.rs documents (the same function):
// uniform, sample i = hash(90, i) >> 56; skewed, 7 when hash(91, i) % 10 != 0 (90 % of the
// samples in bin 7), else the uniform sample. It calls CUB once over a poisoned histogram
// and checks every count against a host reference, times it by the method of
// bench_common.cuh (warm-up calls, one calibration batch, --reps batches of K back-to-back
// calls between CUDA events on one stream), then checks the last call's counts again. Each
// call is what a user pays for: CUB's launches of that call (the histogram's
// initialisation and the sweep), with the temporary storage allocated outside the timed
// loop (once, grown when a call needs more). The read ceiling: a grid-stride kernel that
// loads every 16-byte vector of the samples (4 per thread in flight) and folds them with
// xor (one word per block written only when it equals an impossible value), timed the
// same way.
//
// Output, one record per line, comma separated (histogram-bench parses it):
//   meta,<key>,<value>
//   cub,<implementation>,<distribution>,<n>,<median s/call>,<calls per batch>,<reps>,<min s/call>,<max s/call>,<check>
//   error,<message>                 (then a non-zero exit status)
// <implementation> is "cub" or "ceiling"; <check> is "ok", or "bad:<what differs>".

#include <cub/device/device_histogram.cuh>

#include "bench_common.cuh"

namespace {

using namespace bench;

const int BINS = 256;

enum class Distribution { Uniform, Skewed };

const char* distribution_name(Distribution d) { return d == Distribution::Uniform ? "uniform" : "skewed"; }

// ---- Input data: the same function as bench/src/histogram.rs ---------------------------

const uint64_t UNIFORM_SALT = 90;
const uint64_t SKEW_SALT = 91;
const uint8_t FAVOURITE = 7;

uint8_t sample(Distribution d, uint64_t i) {
    const uint8_t uniform = uint8_t(hash(UNIFORM_SALT, i) >> 56);
    if (d == Distribution::Skewed && hash(SKEW_SALT, i) % 10 != 0) return FAVOURITE;
    return uniform;
}

// ---- The read ceiling ------------------------------------------------------------------

__global__ void read_ceiling(const uint4* vectors, uint64_t count, uint32_t* sink) {
    const uint64_t threads = uint64_t(gridDim.x) * blockDim.x;
    uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    uint32_t acc = 0;
    for (; i + 3 * threads < count; i += 4 * threads) {
        const uint4 a = __ldg(&vectors[i]);
        const uint4 b = __ldg(&vectors[i + threads]);
        const uint4 c = __ldg(&vectors[i + 2 * threads]);
        const uint4 d = __ldg(&vectors[i + 3 * threads]);
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < count; i += threads) {
        const uint4 a = __ldg(&vectors[i]);
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == 0x9E3779B9u && threadIdx.x == 0) sink[blockIdx.x] = acc;
}

// ---- The run ---------------------------------------------------------------------------

struct Plan {
    std::vector<uint64_t> counts;
    std::vector<Distribution> distributions{Distribution::Uniform, Distribution::Skewed};
    TimingPlan timing;
};

Plan parse_args(int argc, char** argv) {
    Plan plan;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (i + 1 >= argc) usage(flag + " expects a value");
        const std::string value = argv[++i];
        if (flag == "--counts") {
            for (const auto& p : split(value)) plan.counts.push_back(uint64_t(parse_number(flag, p, 0, INT32_MAX)));
        } else if (flag == "--distributions") {
            plan.distributions.clear();
            for (const auto& p : split(value)) {
                if (p == "uniform") plan.distributions.push_back(Distribution::Uniform);
                else if (p == "skewed") plan.distributions.push_back(Distribution::Skewed);
                else usage("unknown distribution '" + p + "' (uniform, skewed)");
            }
        } else if (!parse_timing_flag(flag, value, plan.timing)) {
            usage("unknown flag " + flag);
        }
    }
    if (plan.counts.empty()) {
        for (int k = 10; k <= 28; k += 2) plan.counts.push_back(uint64_t(1) << k);
    }
    return plan;
}

struct Context {
    Plan plan;
    cudaStream_t stream = nullptr;
    void* temp = nullptr;
    size_t temp_capacity = 0;
    bool all_ok = true;
};

void record(const char* implementation, Distribution d, uint64_t n, const Timing& t, int reps,
            const std::string& check) {
    std::printf("cub,%s,%s,%" PRIu64 ",%.9e,%ld,%d,%.9e,%.9e,%s\n", implementation, distribution_name(d), n, t.median,
                t.calls, reps, t.min, t.max, check.c_str());
    std::fflush(stdout);
}

std::string check_counts(const std::vector<uint32_t>& got, const std::vector<uint32_t>& expected) {
    for (int b = 0; b < BINS; ++b) {
        if (got[b] != expected[b]) {
            return "bad:bin " + std::to_string(b) + " holds " + std::to_string(got[b]) + " instead of " +
                   std::to_string(expected[b]);
        }
    }
    return "ok";
}

void run_point(Context& ctx, Distribution d, uint64_t n) {
    std::vector<uint8_t> host(n);
    parallel_chunks(n, host_workers(), [&](unsigned, uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) host[i] = sample(d, i);
    });
    std::vector<uint32_t> expected(BINS, 0);
    for (uint64_t i = 0; i < n; ++i) ++expected[host[i]];

    uint8_t* samples = nullptr;
    uint32_t* histogram = nullptr;
    uint32_t* sink = nullptr;
    CHECK(cudaMalloc(&samples, std::max<uint64_t>(n, 16)));
    CHECK(cudaMalloc(&histogram, BINS * sizeof(uint32_t)));
    CHECK(cudaMalloc(&sink, 4096 * sizeof(uint32_t)));
    CHECK(cudaMemcpy(samples, host.data(), n, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(histogram, 0x5A, BINS * sizeof(uint32_t)));

    const int num_samples = int(n);
    size_t temp_bytes = 0;
    CHECK(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, samples, histogram, BINS + 1, 0, 256, num_samples,
                                              ctx.stream));
    if (temp_bytes > ctx.temp_capacity) {
        CHECK(cudaFree(ctx.temp));
        CHECK(cudaMalloc(&ctx.temp, std::max<size_t>(temp_bytes, 1)));
        ctx.temp_capacity = temp_bytes;
    }
    auto call = [&] {
        size_t bytes = ctx.temp_capacity;
        CHECK(cub::DeviceHistogram::HistogramEven(ctx.temp, bytes, samples, histogram, BINS + 1, 0, 256, num_samples,
                                                  ctx.stream));
    };
    auto download = [&] {
        std::vector<uint32_t> got(BINS);
        CHECK(cudaStreamSynchronize(ctx.stream));
        CHECK(cudaMemcpy(got.data(), histogram, BINS * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        return got;
    };
    call();
    std::string check = check_counts(download(), expected);
    const Timing t = measure(call, ctx.stream, ctx.plan.timing);
    if (check == "ok") check = check_counts(download(), expected);
    if (check != "ok") ctx.all_ok = false;
    record("cub", d, n, t, ctx.plan.timing.reps, check);

    // The read ceiling over the same bytes (whole vectors; the tail under 16 bytes is
    // immaterial at the sizes where the ceiling matters).
    int multiprocessors = 0, device = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
    const uint64_t vectors = n / 16;
    const uint64_t wanted = (vectors + 4 * 256 - 1) / (4 * 256);
    const int blocks = int(std::max<uint64_t>(1, std::min<uint64_t>(wanted, uint64_t(multiprocessors) * 8)));
    auto read = [&] {
        read_ceiling<<<blocks, 256, 0, ctx.stream>>>(reinterpret_cast<const uint4*>(samples), vectors, sink);
        CHECK(cudaGetLastError());
    };
    const Timing r = measure(read, ctx.stream, ctx.plan.timing);
    record("ceiling", d, n, r, ctx.plan.timing.reps, "ok");

    CHECK(cudaFree(samples));
    CHECK(cudaFree(histogram));
    CHECK(cudaFree(sink));
}

}  // namespace

int main(int argc, char** argv) {
    Context ctx{parse_args(argc, argv)};
    print_meta();
    CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    for (Distribution d : ctx.plan.distributions) {
        for (uint64_t n : ctx.plan.counts) run_point(ctx, d, n);
    }
    std::printf("meta,temp_storage_bytes,%zu\n", ctx.temp_capacity);
    CHECK(cudaFree(ctx.temp));
    CHECK(cudaStreamDestroy(ctx.stream));
    return exit_status(ctx.all_ok);
}
