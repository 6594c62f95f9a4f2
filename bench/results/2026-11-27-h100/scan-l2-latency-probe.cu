// Built and run on the GPU: nvcc -O3 -arch=sm_90 -o probe scan-l2-latency-probe.cu && ./probe
// Output of 2026-11-27 (NVIDIA H100 80GB HBM3): scan-lookback-cost-experiment.txt.
// Probe (not part of warpsafe): does an L2-resident load issued while an SM streams tiles in
// wait as long when the tiles come by TMA bulk copies as by per-thread cp.async?
// MODE 0: cp.async 16 B per thread, striped; 1: one cp.async.bulk of the whole tile + mbarrier;
// 2: no tile traffic (the probe's unloaded latency). Persistent grid, BPS blocks per SM.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
constexpr int THREADS = 128;
constexpr int TILE = 32768;
__device__ unsigned long long g_lat, g_cnt;
__device__ __forceinline__ uint32_t sa(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
template <int MODE>
__global__ void __launch_bounds__(THREADS) stream_tiles(const float4* __restrict__ in, float4* out, size_t tiles,
                                                         const unsigned long long* probe) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long mbar;
    float4* st = (float4*)smem;
    unsigned long long lat = 0, cnt = 0;
    uint32_t parity = 0;
    if (MODE == 1 && threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&mbar)));
        asm volatile("fence.mbarrier_init.release.cluster;");
    }
    __syncthreads();
    for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const float4* src = in + t * (TILE / 16);
        if (MODE == 0) {
            for (int i = threadIdx.x; i < TILE / 16; i += THREADS)
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(st + i)), "l"(src + i) : "memory");
            asm volatile("cp.async.commit_group;");
        }
        if (MODE == 1 && threadIdx.x == 0) {
            asm volatile("fence.proxy.async.shared::cta;");
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&mbar)), "r"(TILE) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(sa(st)),
                         "l"(src), "r"(TILE), "r"(sa(&mbar))
                         : "memory");
        }
        if (threadIdx.x == 0) {
            unsigned long long c0, c1, v;
            asm volatile("mov.u64 %0, %%clock64;" : "=l"(c0));
            v = 0;
            for (int k = 0; k < 4; k++)
                asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(probe + ((t + k + v) % 64) * 16) : "memory");
            asm volatile("{ .reg .pred p; setp.eq.u64 p, %1, 12345; @p trap; mov.u64 %0, %%clock64; }" : "=l"(c1) : "l"(v) : "memory");
            lat += c1 - c0;
            cnt += 4;
        }
        if (MODE == 0) asm volatile("cp.async.wait_all;" ::: "memory");
        if (MODE == 1) {
            uint32_t done = 0;
            while (!done)
                asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                             : "=r"(done)
                             : "r"(sa(&mbar)), "r"(parity)
                             : "memory");
            parity ^= 1;
        }
        __syncthreads();
        if (MODE != 2) {
            float4* dst = out + t * (TILE / 16);
            for (int i = threadIdx.x; i < TILE / 16; i += THREADS) dst[i] = st[i];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) { atomicAdd(&g_lat, lat); atomicAdd(&g_cnt, cnt); }
}
template <int MODE>
void run(int bps, const float4* in, float4* out, size_t tiles, const unsigned long long* probe, int sms) {
    auto k = stream_tiles<MODE>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, TILE);
    unsigned long long z = 0;
    float best = 1e30f; double latency = 0;
    for (int rep = 0; rep < 5; rep++) {
        cudaMemcpyToSymbol(g_lat, &z, 8); cudaMemcpyToSymbol(g_cnt, &z, 8);
        cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
        cudaEventRecord(a);
        k<<<sms * bps, THREADS, TILE>>>(in, out, tiles, probe);
        cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b);
        unsigned long long l, c; cudaMemcpyFromSymbol(&l, g_lat, 8); cudaMemcpyFromSymbol(&c, g_cnt, 8);
        if (ms < best) { best = ms; latency = (double)l / c; }
    }
    double bytes = (MODE == 2 ? 0.0 : 2.0) * tiles * TILE;
    printf("mode %d blocks/SM %d: %.1f us, %.0f GB/s (read+write), probe latency %.0f cycles  %s\n", MODE, bps, best * 1e3,
           bytes / (best * 1e-3) / 1e9, latency, cudaGetErrorString(cudaGetLastError()));
}
int main() {
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    size_t n = size_t(1) << 28, bytes = n * 4, tiles = bytes / TILE;
    float4 *in, *out; unsigned long long* probe;
    cudaMalloc(&in, bytes); cudaMalloc(&out, bytes); cudaMalloc(&probe, 64 * 16 * 8);
    cudaMemset(in, 1, bytes); cudaMemset(probe, 0, 64 * 16 * 8);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    float best = 1e30f;
    for (int rep = 0; rep < 5; rep++) {
        cudaEventRecord(a); cudaMemcpy(out, in, bytes, cudaMemcpyDeviceToDevice); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
    }
    printf("copy: %.1f us, %.0f GB/s\n", best * 1e3, 2.0 * bytes / (best * 1e-3) / 1e9);
    for (int bps : {2, 4, 6}) { run<2>(bps, in, out, tiles, probe, sms); run<0>(bps, in, out, tiles, probe, sms); run<1>(bps, in, out, tiles, probe, sms); }
    return 0;
}
