// Built and run on the GPU: nvcc -O3 -arch=sm_90 -o scanprobe scan-bulk-copy-probe.cu && ./scanprobe
// Output of 2026-11-27 (NVIDIA H100 80GB HBM3): scan-bulk-copy-probe.txt.
// Probe (not part of warpsafe): a single-pass u32 inclusive scan with decoupled look-back whose
// 32 KiB tiles are staged by per-thread cp.async (MODE 0) or by TMA bulk copies (MODE 1), same
// padded staging layout, same look-back; LOOKBACK 0 replaces the look-back by prefix 0.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
constexpr int THREADS = 128, RUN_BYTES = 256, STRIDE = 272, ITEMS = RUN_BYTES / 4;
constexpr int TILE_ITEMS = THREADS * ITEMS, TILE_BYTES = TILE_ITEMS * 4, STAGE_BYTES = THREADS * STRIDE;
__device__ __forceinline__ uint32_t sa(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned long long ld_relaxed(const unsigned long long* p) {
    unsigned long long v; asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_relaxed(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
template <int MODE, int LOOKBACK>
__global__ void __launch_bounds__(THREADS) scan(const uint32_t* in, uint32_t* out, unsigned long long* status,
                                                unsigned* counter, unsigned tiles) {
    extern __shared__ __align__(128) unsigned char stage[];
    __shared__ __align__(8) unsigned long long mbar;
    __shared__ unsigned ticket;
    __shared__ uint32_t warp_sums[4];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) {
        ticket = atomicAdd(counter, 1);
        if (MODE == 1) { asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&mbar))); asm volatile("fence.mbarrier_init.release.cluster;"); }
    }
    __syncthreads();
    unsigned t = ticket;
    const char* src = (const char*)(in + (size_t)t * TILE_ITEMS);
    if (MODE == 0) {
        for (int i = lane; i < 32 * 16; i += 32) {
            int run = warp * 32 + i / 16, k = i % 16;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(stage + run * STRIDE + k * 16)), "l"(src + run * RUN_BYTES + k * 16) : "memory");
        }
        asm volatile("cp.async.wait_all;" ::: "memory");
    } else {
        if (threadIdx.x == 0) asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&mbar)), "r"(TILE_BYTES) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(sa(stage + threadIdx.x * STRIDE)),
                     "l"(src + threadIdx.x * RUN_BYTES), "r"(RUN_BYTES), "r"(sa(&mbar)) : "memory");
        uint32_t done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(sa(&mbar)) : "memory");
    }
    __syncthreads();
    uint4* mine = (uint4*)(stage + threadIdx.x * STRIDE);
    uint32_t sum = 0;
    for (int k = 0; k < ITEMS / 4; k++) { uint4 v = mine[k]; sum += v.x + v.y + v.z + v.w; }
    uint32_t inc = sum;
    for (int d = 1; d < 32; d *= 2) { uint32_t o = __shfl_up_sync(~0u, inc, d); if (lane >= d) inc += o; }
    if (lane == 31) warp_sums[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        uint32_t ws = lane < 4 ? warp_sums[lane] : 0, wi = ws;
        for (int d = 1; d < 4; d *= 2) { uint32_t o = __shfl_up_sync(~0u, wi, d); if (lane >= d) wi += o; }
        uint32_t aggregate = __shfl_sync(~0u, wi, 3);
        uint32_t prefix = 0;
        if (LOOKBACK) {
            if (lane == 0) st_relaxed(status + t, (1ull << 32) | aggregate);
            long long base = (long long)t - 1;
            while (base >= 0) {
                long long s = base - lane;
                unsigned long long v;
                do { v = s >= 0 ? ld_relaxed(status + s) : (2ull << 32); } while (!__all_sync(~0u, (v >> 32) != 0));
                unsigned incl = __ballot_sync(~0u, (v >> 32) == 2);
                int stop = incl ? __ffs(incl) - 1 : 32;
                uint32_t part = lane <= stop && lane < 32 && s >= 0 ? (uint32_t)v : 0;
                if (lane > stop) part = 0;
                for (int d = 16; d; d /= 2) part += __shfl_xor_sync(~0u, part, d);
                prefix += part;
                if (incl) break;
                base -= 32;
            }
            if (lane == 0) st_relaxed(status + t, (2ull << 32) | (prefix + aggregate));
        }
        if (lane < 4) warp_sums[lane] = prefix + wi - ws;
    }
    __syncthreads();
    uint32_t running = warp_sums[warp] + inc - sum;
    for (int k = 0; k < ITEMS / 4; k++) {
        uint4 v = mine[k];
        v.x += running; v.y += v.x; v.z += v.y; v.w += v.z; running = v.w; mine[k] = v;
    }
    __syncthreads();
    char* dst = (char*)(out + (size_t)t * TILE_ITEMS);
    for (int i = lane; i < 32 * 16; i += 32) {
        int run = warp * 32 + i / 16, k = i % 16;
        *(uint4*)(dst + run * RUN_BYTES + k * 16) = *(uint4*)(stage + run * STRIDE + k * 16);
    }
}
template <int MODE, int LOOKBACK>
void run(const char* name, int log2n, const uint32_t* in, uint32_t* out, unsigned long long* status, unsigned* counter, float copy_us) {
    size_t n = size_t(1) << log2n; unsigned tiles = n / TILE_ITEMS;
    auto k = scan<MODE, LOOKBACK>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, STAGE_BYTES);
    int per_sm; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, THREADS, STAGE_BYTES);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    std::vector<float> times;
    for (int rep = 0; rep < 12; rep++) {
        cudaMemset(status, 0, tiles * 8); cudaMemset(counter, 0, 4); cudaMemset(out, 0, 64);
        cudaEventRecord(a); k<<<tiles, THREADS, STAGE_BYTES>>>(in, out, status, counter, tiles); cudaEventRecord(b);
        cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (rep >= 2) times.push_back(ms * 1e3f);
    }
    std::sort(times.begin(), times.end());
    std::vector<uint32_t> tail(TILE_ITEMS);
    cudaMemcpy(tail.data(), out + n - TILE_ITEMS, TILE_ITEMS * 4, cudaMemcpyDeviceToHost);
    bool ok = true; for (size_t i = 0; i < TILE_ITEMS; i++) ok &= tail[i] == (uint32_t)(n - TILE_ITEMS + i + 1);
    printf("2^%d %-26s %4d blocks/SM  median %8.2f us  (min %8.2f)  copy/this %.3f  check %s  %s\n", log2n, name, per_sm, times[times.size() / 2],
           times[0], copy_us / times[times.size() / 2], LOOKBACK ? (ok ? "ok" : "WRONG") : "-", cudaGetErrorString(cudaGetLastError()));
}

int main() {
    size_t n = size_t(1) << 28;
    uint32_t *in, *out; unsigned long long* status; unsigned* counter;
    cudaMalloc(&in, n * 4); cudaMalloc(&out, n * 4); cudaMalloc(&status, (n / TILE_ITEMS) * 8); cudaMalloc(&counter, 4);
    std::vector<uint32_t> ones(n, 1); cudaMemcpy(in, ones.data(), n * 4, cudaMemcpyHostToDevice);
    for (int log2n : {20, 24, 28}) {
        size_t m = size_t(1) << log2n; cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b); std::vector<float> c;
        for (int rep = 0; rep < 12; rep++) { cudaEventRecord(a); cudaMemcpy(out, in, m * 4, cudaMemcpyDeviceToDevice); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); c.push_back(ms * 1e3f); }
        std::sort(c.begin(), c.end()); float copy_us = c[c.size() / 2];
        printf("2^%d copy median %.2f us\n", log2n, copy_us);
        for (int round = 0; round < 2; round++) {
            run<0, 1>("cp.async + look-back", log2n, in, out, status, counter, copy_us);
            run<1, 1>("bulk copies + look-back", log2n, in, out, status, counter, copy_us);
            run<0, 0>("cp.async, no look-back", log2n, in, out, status, counter, copy_us);
            run<1, 0>("bulk copies, no look-back", log2n, in, out, status, counter, copy_us);
        }
    }
    return 0;
}
