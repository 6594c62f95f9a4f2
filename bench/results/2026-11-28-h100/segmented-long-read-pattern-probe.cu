// segmented-long-read-pattern-probe.cu: which way of reading a block's segment gets a
// fixed-length segmented sum of 65536-element f32 segments to CUB's time on this GPU?
// (Issue #13: L = 65536 at >= 1.0x CUB; warpsafe's block strategy, 512 threads x 48
// registers, 2 blocks per SM, stays at 0.97-0.99x at 2^25-2^28.) A block per segment,
// thread sums combined by a warp shuffle tree and shared memory; variants:
//   striped<T, V, B>: T threads, V 16-byte loads in flight per thread, step j of a round
//                     reads vector (round * V + j) * T + tid (what warpsafe does);
//   blocked<T, V, B>: thread tid reads V consecutive vectors (round * T + tid) * V ...
//                     (CUB's vectorised blocked load);
// B = minimum blocks per SM asked of ptxas (__launch_bounds__), occupancy printed.
//
//   nvcc -O3 -std=c++17 -arch=native -I bench/cub -o probe segmented-long-read-pattern-probe.cu
//   ./probe [log2 n ...]   (default 24 26 28)

#include <cuda_runtime.h>

#include "bench_common.cuh"

using namespace bench;

namespace {

const uint64_t SALT = 130;
const uint64_t L = 65536;

float element(uint64_t i) { return float(hash(SALT, i) >> 61); }

template <int T>
__device__ __forceinline__ float block_sum(float s) {
    __shared__ float warp_sums[T / 32];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
    __syncthreads();
    float r = 0.0f;
    if (threadIdx.x == 0)
        for (int w = 0; w < T / 32; ++w) r += warp_sums[w];
    __syncthreads();
    return r;
}

// ld.global.nc with the L2::256B prefetch hint (what warpsafe's sm_90 build issues).
__device__ __forceinline__ float4 load_hinted(const float4* p) {
    float4 v;
    asm("ld.global.nc.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
        : "l"(p));
    return v;
}

template <int T, int V, int B, bool BLOCKED, bool HINT>
__global__ void __launch_bounds__(T, B) segments_kernel(const float4* __restrict__ x, uint64_t segments,
                                                          float* __restrict__ out) {
    constexpr uint64_t VECTORS = L / 4, ROUND = uint64_t(T) * V;
    for (uint64_t s = blockIdx.x; s < segments; s += gridDim.x) {
        const float4* seg = x + s * VECTORS;
        float acc = 0.0f;
        for (uint64_t r = 0; r < VECTORS; r += ROUND) {
            float4 v[V];
#pragma unroll
            for (int j = 0; j < V; ++j)
            {
                const float4* p = seg + r + (BLOCKED ? threadIdx.x * V + j : j * T + threadIdx.x);
                v[j] = HINT ? load_hinted(p) : __ldg(p);
            }
#pragma unroll
            for (int j = 0; j < V; ++j) acc += (v[j].x + v[j].y) + (v[j].z + v[j].w);
        }
        const float total = block_sum<T>(acc);
        if (threadIdx.x == 0) out[s] = total;
    }
}

template <int T, int V, int B, bool BLOCKED, bool HINT = false>
void run(const float* d_x, uint64_t n, float* d_out, const std::vector<double>& want, const cudaDeviceProp& prop,
         cudaStream_t stream, bool capped_grid) {
    auto k = segments_kernel<T, V, B, BLOCKED, HINT>;
    const uint64_t segments = n / L;
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, T, 0));
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, k));
    const uint64_t wave = uint64_t(per_sm) * prop.multiProcessorCount;
    const unsigned grid = unsigned(capped_grid ? std::min(segments, wave) : segments);
    CHECK(cudaMemset(d_out, 0xff, segments * sizeof(float)));
    k<<<grid, T, 0, stream>>>((const float4*)d_x, segments, d_out);
    CHECK(cudaStreamSynchronize(stream));
    std::vector<float> got(segments);
    CHECK(cudaMemcpy(got.data(), d_out, segments * sizeof(float), cudaMemcpyDeviceToHost));
    uint64_t bad = 0;
    for (uint64_t s = 0; s < segments; ++s) bad += double(got[s]) != want[s];
    TimingPlan plan;
    const Timing t = measure([&] { k<<<grid, T, 0, stream>>>((const float4*)d_x, segments, d_out); }, stream, plan);
    std::printf("read,n=%" PRIu64 ",%s%s,threads=%d,loads=%d,min_blocks=%d,regs=%d,blocks/SM=%d,grid=%u,us=%.2f,min=%.2f,"
                "max=%.2f,GB/s=%.1f,wrong=%" PRIu64 "\n",
                n, BLOCKED ? "blocked" : "striped", HINT ? "+L2::256B" : "", T, V, B, attr.numRegs, per_sm, grid, t.median * 1e6, t.min * 1e6,
                t.max * 1e6, double(n) * 4 / t.median * 1e-9, bad);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> logs;
    for (int i = 1; i < argc; ++i) logs.push_back(std::atoi(argv[i]));
    if (logs.empty()) logs = {24, 26, 28};  // the second run of 2026-11-28 passed 26 28
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device,%s,%d SMs\n", prop.name, prop.multiProcessorCount);
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    for (int lg : logs) {
        const uint64_t n = uint64_t(1) << lg, segments = n / L;
        std::vector<float> x(n);
        parallel_chunks(n, host_workers(), [&](unsigned, uint64_t b, uint64_t e) {
            for (uint64_t i = b; i < e; ++i) x[i] = element(i);
        });
        std::vector<double> want(segments, 0.0);
        for (uint64_t s = 0; s < segments; ++s)
            for (uint64_t i = s * L; i < (s + 1) * L; ++i) want[s] += x[i];
        float *d_x, *d_out;
        CHECK(cudaMalloc(&d_x, n * sizeof(float)));
        CHECK(cudaMalloc(&d_out, segments * sizeof(float)));
        CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        for (int rep = 0; rep < 2; ++rep) {
            run<512, 4, 2, false>(d_x, n, d_out, want, prop, stream, true);        // warpsafe's shape
            run<512, 4, 2, false, true>(d_x, n, d_out, want, prop, stream, true);  // and its hint
            run<1024, 2, 2, false>(d_x, n, d_out, want, prop, stream, false);
            run<1024, 2, 2, false, true>(d_x, n, d_out, want, prop, stream, false);
            run<1024, 4, 1, false>(d_x, n, d_out, want, prop, stream, false);
            run<256, 8, 4, false>(d_x, n, d_out, want, prop, stream, false);
        }
        CHECK(cudaFree(d_x));
        CHECK(cudaFree(d_out));
    }
    return 0;
}
