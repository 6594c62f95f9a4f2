// segmented-merge-path-probe.cu: how fast can a merge-path segmented sum (Merrill &
// Garland's merge-based decomposition, the design CUB's SpMV uses) run the power-law mix of
// segreduce-bench on this GPU? A measurement for issue #13's "power-law mix at >= 80 % of
// the read ceiling", written in CUDA C++ so that the answer is about the design, not about
// warpsafe's code generation. Not part of the library; the same data as
// bench/cub/segmented_cub.cu (element i = hash(130, i) >> 61, power_law_offsets).
//
//   nvcc -O3 -std=c++17 -arch=native -I bench/cub -o probe segmented-merge-path-probe.cu
//   ./probe [log2 n ...]        (default 24 26 28)
//
// Per call, four launches on one stream:
//   1. partition: for every tile, where the merge path of (segment ends, element indices)
//      crosses its first diagonal (a binary search over the offsets);
//   2. tiles: a block per tile of THREADS * IPT merge items; the tile's elements are staged
//      in shared memory by 16-byte cp.async, its segment ends as 32-bit offsets from the
//      tile's first element; each thread walks IPT items of the path (an element: add it;
//      a segment end: close the segment), writes the segments it closes whole, and a
//      block-wide segmented scan of the threads' carries completes the first segment each
//      thread closes; the tile's own carry (what is open at its end) goes to scratch;
//   3. chunk totals: the tiles' carries folded per chunk of 1024 tiles;
//   4. fix-up: each tile that closes a segment adds the carries of the tiles before it
//      (back to the last tile that closed one) to its first segment.
// Checked against a double reference (exact below 2^24, else within 1e-5), as
// segmented_cub.cu checks CUB.

#include <cuda_runtime.h>

#include "bench_common.cuh"

using namespace bench;

namespace {

const uint64_t SALT = 130;
const uint64_t LENGTH_SALT = 131;

float element(uint64_t i) { return float(hash(SALT, i) >> 61); }

uint64_t power_law_length(uint64_t s) {
    const uint64_t h = hash(LENGTH_SALT, s);
    const uint64_t k = h == 0 ? 16 : std::min<uint64_t>(uint64_t(__builtin_ctzll(h)), 16);
    return (uint64_t(1) << k) + ((h >> 32) & ((uint64_t(1) << k) - 1));
}

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

// ---- A (closed, value) pair and its segmented-scan operator ---------------------------
// combine(earlier, later): later's value if later closed a segment, else the sum.
struct Carry {
    float v;
    unsigned closed;
};

__device__ __forceinline__ Carry combine(Carry a, Carry b) {
    Carry r;
    r.v = b.closed ? b.v : a.v + b.v;
    r.closed = a.closed | b.closed;
    return r;
}

// Block-wide exclusive scan of `mine` (thread order), with `*total` the inclusive result
// of the whole block; `initial` is combined in front. THREADS a multiple of 32, <= 1024.
template <int THREADS>
__device__ __forceinline__ Carry block_exclusive(Carry mine, Carry initial, Carry* total) {
    __shared__ Carry warp_totals[THREADS / 32];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    Carry inc = mine;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        Carry up;
        up.v = __shfl_up_sync(0xffffffffu, inc.v, off);
        up.closed = __shfl_up_sync(0xffffffffu, inc.closed, off);
        if (lane >= off) inc = combine(up, inc);
    }
    Carry exc;
    exc.v = __shfl_up_sync(0xffffffffu, inc.v, 1);
    exc.closed = __shfl_up_sync(0xffffffffu, inc.closed, 1);
    if (lane == 31) warp_totals[warp] = inc;
    __syncthreads();
    Carry before = initial;
    for (unsigned w = 0; w < warp; ++w) before = combine(before, warp_totals[w]);
    Carry all = initial;
#pragma unroll
    for (unsigned w = 0; w < THREADS / 32; ++w) all = combine(all, warp_totals[w]);
    *total = all;
    __syncthreads();
    return lane == 0 ? before : combine(before, exc);
}

// ---- 1. Partition ----------------------------------------------------------------------

__global__ void partition(const uint64_t* __restrict__ ends, uint64_t segments, uint64_t n, uint64_t tile_items,
                          uint64_t tiles, uint64_t* __restrict__ coord_a, uint64_t* __restrict__ coord_b) {
    const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t > tiles) return;
    const uint64_t d = t * tile_items < n + segments ? t * tile_items : n + segments;
    uint64_t lo = d > n ? d - n : 0, hi = d < segments ? d : segments;
    while (lo < hi) {
        const uint64_t mid = (lo + hi) >> 1;
        if (ends[mid] <= d - mid - 1) lo = mid + 1;
        else hi = mid;
    }
    coord_a[t] = lo;
    coord_b[t] = d - lo;
}

// The same search, first over every SAMPLE-th end (an array small enough to stay in
// the L2 cache), then inside the window of SAMPLE ends it leaves: at most 6 dependent
// reads of the offsets themselves instead of about 24 (2026-11-28 run 2; run 1 had only
// `partition`).
constexpr uint64_t SAMPLE = 64;

__global__ void sample_ends(const uint64_t* __restrict__ ends, uint64_t segments, uint64_t* __restrict__ samples) {
    const uint64_t j = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j * SAMPLE < segments) samples[j] = ends[j * SAMPLE];
}

__global__ void partition_sampled(const uint64_t* __restrict__ ends, const uint64_t* __restrict__ samples,
                                  uint64_t segments, uint64_t n, uint64_t tile_items, uint64_t tiles,
                                  uint64_t* __restrict__ coord_a, uint64_t* __restrict__ coord_b) {
    const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t > tiles) return;
    const uint64_t d = t * tile_items < n + segments ? t * tile_items : n + segments;
    uint64_t lo = d > n ? d - n : 0, hi = d < segments ? d : segments;
    // Sampled ends a = SAMPLE * j with lo <= a < hi.
    uint64_t jlo = (lo + SAMPLE - 1) / SAMPLE, jhi = (hi + SAMPLE - 1) / SAMPLE;
    const uint64_t jfirst = jlo;
    while (jlo < jhi) {
        const uint64_t mid = (jlo + jhi) >> 1, a = mid * SAMPLE;
        if (samples[mid] <= d - a - 1) jlo = mid + 1;
        else jhi = mid;
    }
    if (jlo > jfirst) lo = SAMPLE * (jlo - 1) + 1;
    if (SAMPLE * jlo < hi) hi = SAMPLE * jlo;
    while (lo < hi) {
        const uint64_t mid = (lo + hi) >> 1;
        if (ends[mid] <= d - mid - 1) lo = mid + 1;
        else hi = mid;
    }
    coord_a[t] = lo;
    coord_b[t] = d - lo;
}

// Run 3: the sampled search with its top levels in shared memory. In run 2 every thread
// read the same few samples in its first steps (one address per step for a whole grid of
// threads: those reads queue at one L2 slice), and the sampled partition took as long as
// the plain one. Here each block first copies TOP evenly spaced samples into shared
// memory. The search is for the first a whose ends[a] + a + 1 exceeds d (a strictly
// increasing key; the clamps of `partition` follow from it).
constexpr int TOP = 1024;

template <class Greater>
__device__ __forceinline__ uint64_t first_greater(uint64_t lo, uint64_t hi, Greater greater) {
    while (lo < hi) {
        const uint64_t mid = (lo + hi) >> 1;
        if (greater(mid)) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

__global__ void partition_top(const uint64_t* __restrict__ ends, const uint64_t* __restrict__ samples,
                              uint64_t segments, uint64_t n, uint64_t tile_items, uint64_t tiles,
                              uint64_t* __restrict__ coord_a, uint64_t* __restrict__ coord_b) {
    __shared__ uint64_t s_top[TOP];
    const uint64_t nsamples = (segments + SAMPLE - 1) / SAMPLE;
    const uint64_t stride = (nsamples + TOP - 1) / TOP;
    for (int i = threadIdx.x; i < TOP; i += blockDim.x) s_top[i] = uint64_t(i) * stride < nsamples ? samples[i * stride] : 0;
    __syncthreads();
    const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t > tiles) return;
    const uint64_t d = t * tile_items < n + segments ? t * tile_items : n + segments;
    const uint64_t i1 = first_greater(0, TOP, [&](uint64_t i) {
        return i * stride >= nsamples || s_top[i] + i * stride * SAMPLE + 1 > d;
    });
    const uint64_t lo_j = i1 > 0 ? (i1 - 1) * stride + 1 : 0;
    const uint64_t hi_j = i1 * stride < nsamples ? i1 * stride : nsamples;
    const uint64_t j = first_greater(lo_j, hi_j, [&](uint64_t k) { return samples[k] + k * SAMPLE + 1 > d; });
    const uint64_t lo_a = j > 0 ? (j - 1) * SAMPLE + 1 : 0;
    const uint64_t hi_a = j * SAMPLE < segments ? j * SAMPLE : segments;
    const uint64_t a = first_greater(lo_a, hi_a, [&](uint64_t k) { return ends[k] + k + 1 > d; });
    coord_a[t] = a;
    coord_b[t] = d - a;
}

// ---- 2. Tiles --------------------------------------------------------------------------

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
    const unsigned s = unsigned(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

__device__ __forceinline__ void bulk_prefetch_l2(const void* gmem, unsigned bytes) {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(gmem), "r"(bytes) : "memory");
}

template <int THREADS, int IPT>
__global__ void __launch_bounds__(THREADS) tiles_kernel(const float* __restrict__ x, const uint64_t* __restrict__ ends,
                                                        const uint64_t* __restrict__ coord_a,
                                                        const uint64_t* __restrict__ coord_b, float* __restrict__ out,
                                                        Carry* __restrict__ tile_carry, uint64_t tiles,
                                                        uint64_t prefetch_distance) {
    constexpr int TILE = THREADS * IPT;
    __shared__ __align__(16) float s_x[TILE + 8];
    __shared__ unsigned s_end[TILE + 1];
    const uint64_t t = blockIdx.x;
    const uint64_t a0 = coord_a[t], a1 = coord_a[t + 1], b0 = coord_b[t], b1 = coord_b[t + 1];
    const int na = int(a1 - a0), nb = int(b1 - b0);
    // Elements: aligned 16-byte vectors covering [b0, b1) (n is a multiple of 4).
    const uint64_t vb = b0 & ~uint64_t(3);
    const int shift = int(b0 - vb);
    const int vectors = int(((b1 + 3) & ~uint64_t(3)) - vb) / 4;
    for (int i = threadIdx.x; i < vectors; i += THREADS) cp_async16(&s_x[4 * i], x + vb + 4 * uint64_t(i));
    asm volatile("cp.async.commit_group;\n" ::);
    // Run 3: thread 0 asks the L2 cache for the elements and offsets of tile
    // t + prefetch_distance (a block that starts later), so that more bytes are on their
    // way from memory while this SM's blocks walk their tiles (0: off).
    if (prefetch_distance != 0 && threadIdx.x == 0 && t + prefetch_distance < tiles) {
        const uint64_t tn = t + prefetch_distance;
        const uint64_t e0 = coord_b[tn] & ~uint64_t(3), e1 = (coord_b[tn + 1] + 3) & ~uint64_t(3);
        const uint64_t* offsets = ends - 1;
        const uint64_t o0 = (coord_a[tn] + 1) & ~uint64_t(1), o1 = (coord_a[tn + 1] + 2) & ~uint64_t(1);
        if (e1 > e0) bulk_prefetch_l2(x + e0, unsigned((e1 - e0) * 4));
        if (o1 > o0) bulk_prefetch_l2(offsets + o0, unsigned((o1 - o0) * 8));
    }
    for (int i = threadIdx.x; i < na; i += THREADS) s_end[i] = unsigned(ends[a0 + i] - b0);
    if (threadIdx.x == 0) s_end[na] = 0xffffffffu;
    asm volatile("cp.async.wait_all;\n" ::);
    __syncthreads();

    const int items = na + nb;
    const int d = min(int(threadIdx.x) * IPT, items);
    int lo = max(0, d - nb), hi = min(d, na);
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (s_end[mid] <= unsigned(d - mid - 1)) lo = mid + 1;
        else hi = mid;
    }
    int a = lo, b = d - lo;
    const int steps = min(IPT, items - d);
    float acc = 0.0f, head = 0.0f;
    int head_a = 0;
    bool closed = false;
#pragma unroll
    for (int k = 0; k < IPT; ++k) {
        if (k < steps) {
            const unsigned e = s_end[a];
            if (unsigned(b) < e) {
                acc += s_x[shift + b];
                ++b;
            } else {
                if (closed) out[a0 + a] = acc;
                else {
                    head = acc;
                    head_a = a;
                }
                closed = true;
                acc = 0.0f;
                ++a;
            }
        }
    }
    Carry mine{acc, closed ? 1u : 0u}, total, none{0.0f, 0u};
    const Carry before = block_exclusive<THREADS>(mine, none, &total);
    if (closed) out[a0 + head_a] = before.v + head;
    if (threadIdx.x == 0) tile_carry[t] = total;
}

// ---- 3, 4. Chunks of tiles and the fix-up ----------------------------------------------

constexpr int FIX_THREADS = 256, FIX_PER_THREAD = 4, CHUNK = FIX_THREADS * FIX_PER_THREAD;

__global__ void chunk_totals(const Carry* __restrict__ tile_carry, uint64_t tiles, Carry* __restrict__ chunk_carry) {
    const uint64_t first = uint64_t(blockIdx.x) * CHUNK + threadIdx.x * FIX_PER_THREAD;
    Carry mine{0.0f, 0u}, none{0.0f, 0u}, total;
    for (int k = 0; k < FIX_PER_THREAD; ++k)
        if (first + k < tiles) mine = combine(mine, tile_carry[first + k]);
    block_exclusive<FIX_THREADS>(mine, none, &total);
    if (threadIdx.x == 0) chunk_carry[blockIdx.x] = total;
}

__global__ void fix_up(const Carry* __restrict__ tile_carry, const Carry* __restrict__ chunk_carry, uint64_t tiles,
                       const uint64_t* __restrict__ coord_a, float* __restrict__ out) {
    __shared__ Carry s_initial;
    // Run 3: the chunks before this one folded by a warp (each lane a run of them, then
    // an ordered scan across the lanes); runs 1 and 2 had thread 0 fold them one by one.
    if (threadIdx.x < 32) {
        const unsigned lane = threadIdx.x, c = blockIdx.x, per = (c + 31) / 32;
        Carry p{0.0f, 0u};
        for (unsigned k = lane * per; k < c && k < (lane + 1) * per; ++k) p = combine(p, chunk_carry[k]);
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            Carry up;
            up.v = __shfl_up_sync(0xffffffffu, p.v, off);
            up.closed = __shfl_up_sync(0xffffffffu, p.closed, off);
            if (int(lane) >= off) p = combine(up, p);
        }
        if (lane == 31) s_initial = p;
    }
    __syncthreads();
    const uint64_t first = uint64_t(blockIdx.x) * CHUNK + threadIdx.x * FIX_PER_THREAD;
    Carry own[FIX_PER_THREAD], mine{0.0f, 0u}, total;
    for (int k = 0; k < FIX_PER_THREAD; ++k) {
        own[k] = first + k < tiles ? tile_carry[first + k] : Carry{0.0f, 0u};
        mine = combine(mine, own[k]);
    }
    Carry running = block_exclusive<FIX_THREADS>(mine, s_initial, &total);
    for (int k = 0; k < FIX_PER_THREAD; ++k) {
        const uint64_t t = first + k;
        if (t >= tiles) break;
        if (t > 0 && own[k].closed) out[coord_a[t]] += running.v;
        running = combine(running, own[k]);
    }
}

// ---- The read ceiling: the bytes a call must move (elements, offsets, sums) -----------

__global__ void roofline(const float4* __restrict__ x, uint64_t vectors, const ulonglong2* __restrict__ off,
                         uint64_t pairs, float* __restrict__ out, uint64_t segments, float* __restrict__ sink) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    const uint64_t i0 = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    float s = 0.0f;
    uint64_t i = i0;
    for (; i + 3 * stride < vectors; i += 4 * stride) {
        float4 v[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] = __ldg(x + i + k * stride);
#pragma unroll
        for (int k = 0; k < 4; ++k) s += v[k].x + v[k].y + v[k].z + v[k].w;
    }
    for (; i < vectors; i += stride) {
        const float4 v = __ldg(x + i);
        s += v.x + v.y + v.z + v.w;
    }
    uint64_t o = 0;
    for (uint64_t j = i0; j < pairs; j += stride) {
        const ulonglong2 p = __ldg(off + j);
        o += p.x ^ p.y;
    }
    for (uint64_t j = i0; j < segments; j += stride) out[j] = float(j & 7);
    if (s == -1.0f && o == 7) *sink = s;
}

struct Buffers {
    const float* x;
    const uint64_t* offsets;
    uint64_t n, segments;
    float* out;
    uint64_t *coord_a, *coord_b;
    Carry *tile_carry, *chunk_carry;
    uint64_t* samples;
};

template <int THREADS, int IPT>
struct MergePath {
    static constexpr uint64_t TILE = uint64_t(THREADS) * IPT;
    static uint64_t tiles(uint64_t items) { return (items + TILE - 1) / TILE; }
    static void call(const Buffers& b, cudaStream_t stream, uint64_t prefetch_distance,
                     cudaEvent_t* marks = nullptr) {
        const uint64_t items = b.n + b.segments, t = tiles(items);
        const uint64_t chunks = (t + CHUNK - 1) / CHUNK;
        const uint64_t samples = (b.segments + SAMPLE - 1) / SAMPLE;
        if (samples > 0) sample_ends<<<unsigned((samples + 255) / 256), 256, 0, stream>>>(b.offsets + 1, b.segments, b.samples);
        partition_top<<<unsigned((t + 1 + 255) / 256), 256, 0, stream>>>(b.offsets + 1, b.samples, b.segments, b.n,
                                                                         TILE, t, b.coord_a, b.coord_b);
        if (marks) CHECK(cudaEventRecord(marks[0], stream));
        tiles_kernel<THREADS, IPT><<<unsigned(t), THREADS, 0, stream>>>(b.x, b.offsets + 1, b.coord_a, b.coord_b,
                                                                        b.out, b.tile_carry, t, prefetch_distance);
        if (marks) CHECK(cudaEventRecord(marks[1], stream));
        chunk_totals<<<unsigned(chunks), FIX_THREADS, 0, stream>>>(b.tile_carry, t, b.chunk_carry);
        fix_up<<<unsigned(chunks), FIX_THREADS, 0, stream>>>(b.tile_carry, b.chunk_carry, t, b.coord_a, b.out);
    }
};

bool matches(float got, double want) {
    if (want < 16777216.0) return double(got) == want;
    return std::fabs(double(got) - want) <= 1e-5 * want;
}

std::string check(const float* d_out, const std::vector<double>& want) {
    std::vector<float> got(want.size());
    CHECK(cudaMemcpy(got.data(), d_out, want.size() * sizeof(float), cudaMemcpyDeviceToHost));
    uint64_t bad = 0, first = 0;
    for (uint64_t s = 0; s < want.size(); ++s)
        if (!matches(got[s], want[s])) {
            if (bad++ == 0) first = s;
        }
    if (bad == 0) return "ok";
    char buf[200];
    std::snprintf(buf, sizeof buf, "bad: %" PRIu64 " wrong, first segment %" PRIu64 ": %.9g not %.9g", bad, first,
                  double(got[first]), want[first]);
    return buf;
}

template <int THREADS, int IPT>
void run_variant(const Buffers& b, const std::vector<double>& want, double ceiling_us, cudaStream_t stream,
                 int prefetch_waves = 0) {
    using MP = MergePath<THREADS, IPT>;
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, tiles_kernel<THREADS, IPT>));
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tiles_kernel<THREADS, IPT>, THREADS, 0));
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const uint64_t dist = uint64_t(prefetch_waves) * per_sm * sms;
    CHECK(cudaMemset(b.out, 0xff, b.segments * sizeof(float)));
    MP::call(b, stream, dist);
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaGetLastError());
    const std::string first = check(b.out, want);
    TimingPlan plan;
    const Timing t = measure([&] { MP::call(b, stream, dist); }, stream, plan);
    const std::string last = check(b.out, want);
    // One call with events between its launches: partition, tiles, the two fix-ups.
    cudaEvent_t ev[4];
    for (auto& e : ev) CHECK(cudaEventCreate(&e));
    CHECK(cudaEventRecord(ev[0], stream));
    cudaEvent_t marks[2] = {ev[1], ev[2]};
    MP::call(b, stream, dist, marks);
    CHECK(cudaEventRecord(ev[3], stream));
    CHECK(cudaEventSynchronize(ev[3]));
    float p = 0, k = 0, f = 0;
    CHECK(cudaEventElapsedTime(&p, ev[0], ev[1]));
    CHECK(cudaEventElapsedTime(&k, ev[1], ev[2]));
    CHECK(cudaEventElapsedTime(&f, ev[2], ev[3]));
    for (auto& e : ev) CHECK(cudaEventDestroy(e));
    const double us = t.median * 1e6;
    std::printf("merge-path,n=%" PRIu64 ",threads=%d,ipt=%d,prefetch_distance=%" PRIu64 ",tile=%" PRIu64
                ",regs=%d,blocks/SM=%d,us=%.2f,min=%.2f,max=%.2f,ceiling_us=%.2f,of_ceiling=%.3f,"
                "one_call_us partition=%.1f tiles=%.1f fixup=%.1f,check=%s/%s\n",
                b.n, THREADS, IPT, dist, MP::TILE, attr.numRegs, per_sm, us, t.min * 1e6, t.max * 1e6, ceiling_us,
                ceiling_us / us, p * 1e3, k * 1e3, f * 1e3, first.c_str(), last.c_str());
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> logs;
    for (int i = 1; i < argc; ++i) logs.push_back(std::atoi(argv[i]));
    if (logs.empty()) logs = {24, 26, 28};
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device,%s,%d SMs\n", prop.name, prop.multiProcessorCount);
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    for (int lg : logs) {
        const uint64_t n = uint64_t(1) << lg;
        std::vector<float> x(n);
        parallel_chunks(n, host_workers(), [&](unsigned, uint64_t b, uint64_t e) {
            for (uint64_t i = b; i < e; ++i) x[i] = element(i);
        });
        const std::vector<uint64_t> offsets = power_law_offsets(n);
        const uint64_t segments = offsets.size() - 1;
        std::vector<double> want(segments);
        parallel_chunks(segments, host_workers(), [&](unsigned, uint64_t b, uint64_t e) {
            for (uint64_t s = b; s < e; ++s) {
                double sum = 0;
                for (uint64_t i = offsets[s]; i < offsets[s + 1]; ++i) sum += x[i];
                want[s] = sum;
            }
        });
        Buffers buf{};
        float *d_x, *d_out, *d_sink;
        uint64_t *d_off, *d_ca, *d_cb;
        Carry *d_tc, *d_cc;
        uint64_t* d_samples;
        const uint64_t max_tiles = (n + segments) / (64 * 7) + 2;
        CHECK(cudaMalloc(&d_samples, (segments / SAMPLE + 2) * sizeof(uint64_t)));
        CHECK(cudaMalloc(&d_x, n * sizeof(float)));
        CHECK(cudaMalloc(&d_off, (segments + 2) * sizeof(uint64_t)));
        CHECK(cudaMalloc(&d_out, segments * sizeof(float)));
        CHECK(cudaMalloc(&d_sink, sizeof(float)));
        CHECK(cudaMalloc(&d_ca, (max_tiles + 1) * sizeof(uint64_t)));
        CHECK(cudaMalloc(&d_cb, (max_tiles + 1) * sizeof(uint64_t)));
        CHECK(cudaMalloc(&d_tc, max_tiles * sizeof(Carry)));
        CHECK(cudaMalloc(&d_cc, (max_tiles / CHUNK + 2) * sizeof(Carry)));
        CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(d_off, offsets.data(), (segments + 1) * sizeof(uint64_t), cudaMemcpyHostToDevice));
        buf.x = d_x;
        buf.offsets = d_off;
        buf.n = n;
        buf.segments = segments;
        buf.out = d_out;
        buf.coord_a = d_ca;
        buf.coord_b = d_cb;
        buf.tile_carry = d_tc;
        buf.chunk_carry = d_cc;
        buf.samples = d_samples;
        // The ceiling: the elements, the offsets (as 16-byte pairs, the odd one left out)
        // and the sums, in one grid-stride kernel.
        const unsigned grid = unsigned(prop.multiProcessorCount) * 8;
        TimingPlan plan;
        const Timing roof = measure(
            [&] {
                roofline<<<grid, 256, 0, stream>>>((const float4*)d_x, n / 4, (const ulonglong2*)d_off,
                                                   (segments + 1) / 2, d_out, segments, d_sink);
            },
            stream, plan);
        const double ceiling_us = roof.median * 1e6;
        const double bytes = double(n) * 4 + double(segments + 1) * 8 + double(segments) * 4;
        std::printf("ceiling,n=%" PRIu64 ",segments=%" PRIu64 ",bytes=%.0f,us=%.2f,GB/s=%.1f\n", n, segments, bytes,
                    ceiling_us, bytes / roof.median * 1e-9);
        // Run 1 (2026-11-28): <256, 7>, <256, 11>, <256, 15>, <128, 15>, <256, 23>, <512, 11>
        // with `partition`; run 2: <128, 15>, <128, 19>, <128, 23>, <128, 31>, <64, 31>,
        // <96, 23> with `partition_sampled`; run 3: these, with `partition_top` and the
        // warp's chunk prefix in `fix_up`; run 4: the same and the L2 prefetch below.
        run_variant<128, 15>(buf, want, ceiling_us, stream);
        run_variant<128, 11>(buf, want, ceiling_us, stream);
        run_variant<64, 15>(buf, want, ceiling_us, stream);
        run_variant<256, 15>(buf, want, ceiling_us, stream);
        // Run 4: the L2 prefetch of a later block's tile, one and two waves ahead.
        run_variant<128, 15>(buf, want, ceiling_us, stream, 1);
        run_variant<128, 15>(buf, want, ceiling_us, stream, 2);
        run_variant<64, 15>(buf, want, ceiling_us, stream, 1);
        run_variant<64, 15>(buf, want, ceiling_us, stream, 2);
        for (void* p : {(void*)d_x, (void*)d_off, (void*)d_out, (void*)d_sink, (void*)d_ca, (void*)d_cb, (void*)d_tc,
                        (void*)d_cc, (void*)d_samples})
            CHECK(cudaFree(p));
    }
    return 0;
}
