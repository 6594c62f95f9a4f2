// segmented-window-scan-probe.cu: can ONE launch run segreduce-bench's power-law mix at
// >= 80 % of the read ceiling if segments are found by a scan over the elements instead
// of being walked one by one? A measurement for issue #13, in CUDA C++ so that the answer
// is about the design, not about warpsafe's code generation. Not part of the library; the
// same data as bench/cub/segmented_cub.cu (element i = hash(130, i) >> 61,
// power_law_offsets), checked the same way (exact below 2^24, else within 1e-5).
//
//   nvcc -O3 -std=c++17 -arch=native -I bench/cub -o probe segmented-window-scan-probe.cu
//   ./probe [log2 n ...]        (default 24 26 28)
//
// The design (every cost is per element, none per segment except one store):
// - the input is cut into chunks of C elements; a warp takes chunk numbers from an atomic
//   ticket and finds the segment that holds its chunk's first element by a 32-way search
//   over the offsets (5 rounds for 2^24 segments), with its first window's loads already
//   in flight;
// - a window is 32 lanes x V 16-byte vectors (lane l holds elements 4Vl .. 4Vl + 4V - 1,
//   loaded one window ahead, into registers (runs 1-2) or, best, into a ring in shared
//   memory by cp.async (STAGES, run 3 on)); the segment starts inside it become bits of a per-lane mask
//   in shared memory (one atomicOr per start, 32 starts per round);
// - each lane folds its elements in order, restarting at its starts; a segmented warp
//   scan of the lanes' last partials (5 shuffles) gives each lane the partial of the
//   segment open at its first element, and lane 31's the carry into the next window;
// - the lanes' running values go to shared memory, and each segment that ends in the
//   window is written by the lane that holds its offsets: the running value at its last
//   element, after the partial open at that lane's start if the segment began earlier;
// - at the chunk's end the warp publishes (epoch, state, value) in one 64-bit word: the
//   partial open at its end, "inclusive" if a segment started in the chunk, else
//   "aggregate"; a chunk that began inside a segment looks back over 32 predecessors at
//   a time for the partial before it (in this probe by a right-to-left fold: fine for
//   whole-number sums, NOT the canonical order a library needs for float bits).

#include <cuda_runtime.h>

#include <chrono>

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

constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;
constexpr unsigned FULL = 0xffffffffu;
constexpr unsigned AGGREGATE = 1, INCLUSIVE = 2;

__device__ __forceinline__ unsigned long long pack(unsigned epoch, unsigned state, float v) {
    return (uint64_t(epoch) << 34) | (uint64_t(state) << 32) | __float_as_uint(v);
}

__device__ __forceinline__ void publish(unsigned long long* p, unsigned long long w) {
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}

__device__ __forceinline__ unsigned long long poll(const unsigned long long* p) {
    unsigned long long w;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    return w;
}

__device__ __forceinline__ float4 load4(const float* p) { return __ldg(reinterpret_cast<const float4*>(p)); }

__device__ __forceinline__ float component(const float4* v, int j) {
    const float4 q = v[j / 4];
    switch (j % 4) {
        case 0: return q.x;
        case 1: return q.y;
        case 2: return q.z;
        default: return q.w;
    }
}

// Lane l's vector k sits at vector k ^ swizzle(l) of its row in shared memory, so that the
// 8 lanes of each 128-byte phase of a 16-byte store hit 8 different groups of 4 banks.
template <int V>
__device__ __forceinline__ unsigned swizzle(unsigned lane) {
    return (lane / (8 / V)) % V;
}

template <int V>
__device__ __forceinline__ void copy_window(float4* slot, const float* from, unsigned lane) {
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const unsigned to = unsigned(__cvta_generic_to_shared(slot + lane * V + k));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(from + (lane * V + k) * 4) : "memory");
    }
}

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

template <int N>
__device__ __forceinline__ void wait_all_but() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// The partial before chunk t (which began inside a segment): predecessors' words, 32 at
// a time, until an inclusive one.
__device__ float look_back(const unsigned long long* status, uint64_t t, unsigned epoch, unsigned lane) {
    float acc = 0.0f;
    int64_t top = int64_t(t) - 1;  // the newest predecessor not folded yet
    while (true) {
        const int64_t j = top - int64_t(lane);
        unsigned long long w = 0;
        unsigned state = INCLUSIVE;  // lanes before chunk 0: nothing to wait for
        if (j >= 0) {
            do {
                w = poll(status + j);
            } while (unsigned(w >> 34) != epoch);
            state = unsigned(w >> 32) & 3;
        }
        const unsigned incl = __ballot_sync(FULL, state == INCLUSIVE);
        const int stop = incl ? __ffs(incl) - 1 : 31;  // the nearest inclusive lane
        float v = (int(lane) <= stop && j >= 0) ? __uint_as_float(unsigned(w)) : 0.0f;
        // Sum lanes 0..=stop (any order: whole numbers) into acc.
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(FULL, v, d);
        acc = v + acc;
        if (incl) return acc;
        top -= 32;
    }
}

template <int V, int MINB, int D, int STAGES, int FAST>
__global__ void __launch_bounds__(THREADS, MINB)
    window_scan(const float* __restrict__ x, const uint64_t* __restrict__ off, uint64_t n, uint64_t segments,
                float* __restrict__ out, uint64_t chunk, uint64_t chunks, unsigned* counters, unsigned call,
                unsigned long long* status) {
    constexpr int VE = 4 * V;  // elements per lane
    constexpr int W = 32 * VE;  // elements per window
    __shared__ __align__(16) float values[WARPS][W];
    __shared__ unsigned masks[WARPS][32];
    __shared__ float opened[WARPS][32];
    // Run 3 (STAGES > 0): each lane copies its vectors of the next STAGES - 1 windows into
    // a ring in shared memory by cp.async (no registers hold loads in flight) and reads
    // the window it folds from there; it reads only what it copied itself, so a lane's own
    // cp.async.wait_group is all the ordering it needs.
    // The ring is dynamic shared memory: WARPS * STAGES * 32 * V vectors.
    extern __shared__ __align__(16) float4 ring[];
    const unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (blockIdx.x == 0 && threadIdx.x == 0) counters[(call + 1) & 1] = 0;
    const unsigned epoch = call + 1;
    while (true) {
        unsigned t = 0;
        if (lane == 0) t = atomicAdd(counters + (call & 1), 1u);
        t = __shfl_sync(FULL, t, 0);
        if (t >= chunks) return;
        const uint64_t begin = uint64_t(t) * chunk, end = min(begin + chunk, n);
        // The elements of the next D windows are in flight while one is folded (run 2).
        float4 cur[V], ahead[D][V];
        if constexpr (STAGES > 0) {
#pragma unroll
            for (int a = 0; a + 1 < STAGES; ++a) {
                if (begin + a * W < end) copy_window<V>(ring + (wid * STAGES + a) * 32 * V, x + begin + a * W, lane);
                commit();
            }
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) cur[k] = load4(x + begin + (lane * V + k) * 4);
#pragma unroll
            for (int a = 0; a < D; ++a)
                if (begin + (a + 1) * W < end) {
#pragma unroll
                    for (int k = 0; k < V; ++k)
                        ahead[a][k] = load4(x + begin + (a + 1) * W + (lane * V + k) * 4);
                }
        }
        unsigned slot = 0;  // the ring slot of the window being folded
        // c: the last segment with off[c] <= begin.
        uint64_t lo = 0, hi = segments;
        while (hi - lo > 1) {
            const uint64_t step = (hi - lo + 31) / 32, idx = lo + step * (lane + 1);
            const bool le = idx < hi && __ldg(off + idx) <= begin;
            const unsigned cnt = __popc(__ballot_sync(FULL, le));
            const uint64_t nhi = lo + step * (cnt + 1);
            lo += step * cnt;
            hi = min(hi, nhi);
        }
        const uint64_t c = lo;
        const bool open_start = __ldg(off + c) < begin;
        uint64_t heads = open_start ? c + 1 : c;  // the next segment whose start is a head
        uint64_t next_out = t == 0 ? 0 : c;       // the next segment to write
        // The first round of the next window's starts, loaded a window ahead (run 2).
        // (The entry at `segments` is the input's end: no segment's start, the last one's end.)
        uint64_t starts = heads + lane <= segments ? __ldg(off + heads + lane) : ~uint64_t(0);
        float carry = 0.0f, prefix = 0.0f;
        bool any_head = false, has_prefix = false;
        for (uint64_t base = begin; base < end; base += W) {
            const bool more = base + W < end;
            if constexpr (STAGES > 0) {
                const unsigned fill = (slot + STAGES - 1) % STAGES;
                if (base + (STAGES - 1) * W < end) copy_window<V>(ring + (wid * STAGES + fill) * 32 * V, x + base + (STAGES - 1) * W, lane);
                commit();
                wait_all_but<STAGES - 1>();
#pragma unroll
                for (int k = 0; k < V; ++k) cur[k] = ring[(wid * STAGES + slot) * 32 * V + lane * V + k];
                slot = (slot + 1) % STAGES;
            }
            const uint64_t heads0 = heads, starts0 = starts;
            masks[wid][lane] = 0;
            __syncwarp();
            for (bool round0 = true;; round0 = false) {
                const uint64_t s = heads + lane;
                const uint64_t o = round0 ? starts : (s < segments ? __ldg(off + s) : ~uint64_t(0));
                const bool in = s < segments && o < base + W;
                if (in) {
                    const unsigned rel = unsigned(o - base);
                    atomicOr(&masks[wid][rel / VE], 1u << (rel % VE));
                }
                const unsigned b = __ballot_sync(FULL, in);
                heads += __popc(b);
                if (b != FULL) break;
            }
            starts = heads + lane <= segments ? __ldg(off + heads + lane) : ~uint64_t(0);
            if (FAST == 2 && lane < 2 && heads + 64 + 16 * lane <= segments)
                asm volatile("prefetch.global.L2 [%0];" ::"l"(off + heads + 64 + 16 * lane));
            __syncwarp();
            const unsigned m = masks[wid][lane];
            float run[VE];
            float acc = 0.0f;
#pragma unroll
            for (int j = 0; j < VE; ++j) {
                const float e = component(cur, j);
                acc = (j == 0 || ((m >> j) & 1)) ? e : acc + e;
                run[j] = acc;
            }
            const unsigned hb = __ballot_sync(FULL, m != 0);
            any_head |= hb != 0;
            float tv = (lane == 0 && m == 0) ? carry + acc : acc;
            const int first = 31 - __clz((hb | 1u) & (FULL >> (31 - lane)));
#pragma unroll
            for (int d = 1; d < 32; d <<= 1) {
                const float u = __shfl_up_sync(FULL, tv, d);
                if (int(lane) - d >= first) tv = u + tv;
            }
            const float before = __shfl_up_sync(FULL, tv, 1);
            opened[wid][lane] = lane == 0 ? carry : before;
            carry = __shfl_sync(FULL, tv, 31);
#pragma unroll
            for (int k = 0; k < V; ++k)
                reinterpret_cast<float4*>(&values[wid][lane * VE])[k ^ swizzle<V>(lane)] =
                    make_float4(run[4 * k], run[4 * k + 1], run[4 * k + 2], run[4 * k + 3]);
            __syncwarp();
            for (bool round0 = true;; round0 = false) {
                const uint64_t s = next_out + lane;
                // Run 5 (FAST): when the first segment to write is the one open at the
                // window's start, its and the next 31 segments' ends are this window's
                // starts, already in registers (`starts0`), and the starts before them one
                // lane down; the open segment began before `base` (0 stands for it).
                const bool fast = FAST && round0 && next_out + 1 == heads0;
                uint64_t e, st = 0;
                if (fast) {
                    e = starts0;
                    st = __shfl_up_sync(FULL, starts0, 1);
                    if (lane == 0) st = 0;
                } else {
                    e = s < segments ? __ldg(off + s + 1) : ~uint64_t(0);
                }
                const bool in = e <= base + W;
                if (in) {
                    if (!fast) st = __ldg(off + s);
                    float r = 0.0f;
                    if (st != e) {
                        const unsigned p = unsigned(e - 1 - base), lp = p / VE;
                        r = values[wid][lp * VE + 4 * (((p % VE) / 4) ^ swizzle<V>(lp)) + p % 4];
                        if (st < base + uint64_t(lp) * VE) r = opened[wid][lp] + r;
                    }
                    if (open_start && s == c) {
                        has_prefix = true;
                        prefix = r;
                    } else {
                        out[s] = r;
                    }
                }
                const unsigned b = __ballot_sync(FULL, in);
                next_out += __popc(b);
                if (b != FULL) break;
            }
            if (STAGES == 0 && more) {
#pragma unroll
                for (int k = 0; k < V; ++k) cur[k] = ahead[0][k];
#pragma unroll
                for (int a = 0; a + 1 < D; ++a)
#pragma unroll
                    for (int k = 0; k < V; ++k) ahead[a][k] = ahead[a + 1][k];
                if (base + (D + 1) * W < end) {
#pragma unroll
                    for (int k = 0; k < V; ++k) ahead[D - 1][k] = load4(x + base + (D + 1) * W + (lane * V + k) * 4);
                }
            }
        }
        if (lane == 0) publish(status + t, pack(epoch, any_head ? INCLUSIVE : AGGREGATE, carry));
        if (open_start) {
            const float before = look_back(status, t, epoch, lane);
            const unsigned pb = __ballot_sync(FULL, has_prefix);
            if (pb) {
                if (has_prefix) out[c] = before + prefix;
            } else if (lane == 0) {
                publish(status + t, pack(epoch, INCLUSIVE, before + carry));
            }
        }
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

// Every launch's number: its counter is call & 1 and its epoch call + 1 (one sequence for
// all variants, so that no launch sees an earlier one's words as its own).
unsigned call = 0;

const auto started = std::chrono::steady_clock::now();
double elapsed_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); }

struct Buffers {
    const float* x;
    const uint64_t* offsets;
    uint64_t n, segments;
    float* out;
    unsigned* counters;
    unsigned long long* status;
};

template <int V, int MINB, int D, int STAGES = 0, int FAST = 0>
void run_variant(const Buffers& b, uint64_t chunk, const std::vector<double>& want, double ceiling_us,
                 cudaStream_t stream) {
    constexpr uint64_t W = 32 * 4 * V;
    if (chunk % W != 0 || b.n % W != 0) return;
    const uint64_t chunks = (b.n + chunk - 1) / chunk;
    const size_t ring_bytes = STAGES > 0 ? size_t(WARPS) * STAGES * 32 * V * sizeof(float4) : 0;
    CHECK(cudaFuncSetAttribute(window_scan<V, MINB, D, STAGES, FAST>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(ring_bytes)));
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, window_scan<V, MINB, D, STAGES, FAST>));
    int per_sm = 0, sms = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, window_scan<V, MINB, D, STAGES, FAST>, THREADS,
                                                        ring_bytes));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    // As many blocks as fit, or as the chunks need.
    const uint64_t want_blocks = (chunks + WARPS - 1) / WARPS;
    const unsigned grid = unsigned(std::min<uint64_t>(uint64_t(per_sm) * sms, want_blocks));
    auto one = [&] {
        window_scan<V, MINB, D, STAGES, FAST><<<grid, THREADS, ring_bytes, stream>>>(b.x, b.offsets, b.n, b.segments, b.out, chunk, chunks,
                                                           b.counters, call, b.status);
        ++call;
    };
    CHECK(cudaMemset(b.out, 0xff, b.segments * sizeof(float)));
    one();
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaGetLastError());
    const std::string first = check(b.out, want);
    TimingPlan plan;
    const Timing t = measure(one, stream, plan);
    const std::string last = check(b.out, want);
    const double us = t.median * 1e6;
    std::printf("window-scan,n=%" PRIu64 ",V=%d,minb=%d,D=%d,stages=%d,fast=%d,chunk=%" PRIu64 ",chunks=%" PRIu64
                ",regs=%d,local=%zu,blocks/SM=%d,grid=%u,us=%.2f,min=%.2f,max=%.2f,ceiling_us=%.2f,of_ceiling=%.3f,"
                "check=%s/%s,at_s=%.0f\n",
                b.n, V, MINB, D, STAGES, FAST, chunk, chunks, attr.numRegs, attr.localSizeBytes, per_sm, grid, us, t.min * 1e6,
                t.max * 1e6, ceiling_us, ceiling_us / us, first.c_str(), last.c_str(), elapsed_s());
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
    unsigned* d_counters;
    CHECK(cudaMalloc(&d_counters, 2 * sizeof(unsigned)));
    CHECK(cudaMemset(d_counters, 0, 2 * sizeof(unsigned)));
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
        float *d_x, *d_out, *d_sink;
        uint64_t* d_off;
        unsigned long long* d_status;
        const uint64_t max_chunks = n / 1024 + 2;
        CHECK(cudaMalloc(&d_x, n * sizeof(float)));
        CHECK(cudaMalloc(&d_off, (segments + 2) * sizeof(uint64_t)));
        CHECK(cudaMalloc(&d_out, segments * sizeof(float)));
        CHECK(cudaMalloc(&d_sink, sizeof(float)));
        CHECK(cudaMalloc(&d_status, max_chunks * sizeof(unsigned long long)));
        CHECK(cudaMemset(d_status, 0, max_chunks * sizeof(unsigned long long)));
        CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(d_off, offsets.data(), (segments + 1) * sizeof(uint64_t), cudaMemcpyHostToDevice));
        const Buffers buf{d_x, d_off, n, segments, d_out, d_counters, d_status};
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
        std::printf("ceiling,n=%" PRIu64 ",segments=%" PRIu64 ",bytes=%.0f,us=%.2f,GB/s=%.1f,at_s=%.0f\n", n, segments,
                    bytes, ceiling_us, bytes / roof.median * 1e-9, elapsed_s());
        // Run 1 (D = 1, no offsets ahead): chunks 2048 .. 16384 with <4, 4> and <2, 4>,
        // then <4, 3> at 8192 and <2, 6> at 4096. Run 2: the offsets of the next window's
        // first round ahead, and D windows of elements.
        // Run 2's variants: <2, 4, 1>, <2, 4, 2>, <2, 3, 2>, <2, 3, 3>, <4, 3, 1>, chunks 4096
        // and 16384. Run 3: the best of them against cp.async rings of STAGES windows.
        // Run 3's: <2, 4, 1> and <2, 4, 1, 3>, <2, 4, 1, 5>, <2, 5, 1, 3>, <2, 5, 1, 4>,
        // <4, 4, 1, 2> at chunks 4096 and 16384. Run 4: the best, <2, 5, 1, 3>, over chunk
        // sizes, and more warps per SM; PROBE_ONLY=1 runs only <2, 5, 1, 3> at 16384 (for
        // Nsight Compute).
        // Run 4's: <2, 5, 1, 3> at chunks 1024 .. 32768, and <2, 5, 1, 2>, <2, 6, 1, 2>,
        // <2, 6, 1, 3>, <4, 5, 1, 2> at 4096 and 16384. Run 5: the first round of a window's
        // ends from registers, and an L2 prefetch of the offsets two windows ahead (FAST = 1 in
        // run 5 had both; since run 6 FAST = 1 is the registers alone, FAST = 2 both).
        const std::vector<uint64_t> chunk_sizes =
            lg <= 24 ? std::vector<uint64_t>{2048, 3072, 4096} : std::vector<uint64_t>{4096, 8192, 16384};
        // Run 5: for each chunk size <2, 5, 1, 2>, <2, 5, 1, 2, 1>, <2, 5, 1, 3, 1>,
        // <2, 6, 1, 2, 1>. Run 6: the registers without the prefetch, deeper rings.
        if (std::getenv("PROBE_ONLY")) {
            run_variant<2, 5, 1, 2>(buf, 4096, want, ceiling_us, stream);
        } else {
            for (uint64_t chunk : chunk_sizes) {
                run_variant<2, 5, 1, 2>(buf, chunk, want, ceiling_us, stream);
                run_variant<2, 5, 1, 2, 1>(buf, chunk, want, ceiling_us, stream);
                run_variant<2, 5, 1, 3, 1>(buf, chunk, want, ceiling_us, stream);
                run_variant<2, 4, 1, 4, 1>(buf, chunk, want, ceiling_us, stream);
                run_variant<2, 5, 1, 2, 2>(buf, chunk, want, ceiling_us, stream);
            }
        }
        for (void* p : {(void*)d_x, (void*)d_off, (void*)d_out, (void*)d_sink, (void*)d_status}) CHECK(cudaFree(p));
    }
    return 0;
}
