// Probe: what programmatic dependent launch saves for a short kernel followed by a nearly
// empty one (the balanced segmented reduce at 2^16: batches then an empty chunk kernel).
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void primary(const float* in, float* out, int n, int trigger) {
  if (trigger) asm volatile("griddepcontrol.launch_dependents;");
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0;
  for (int k = i; k < n; k += gridDim.x * blockDim.x) acc += in[k];
  if (acc == 12345.f) out[0] = acc;
}
__global__ void secondary(unsigned long long* counter, int wait) {
  if (wait) asm volatile("griddepcontrol.wait;" ::: "memory");
  unsigned long long c = *(volatile unsigned long long*)counter;
  if (c != 0 && threadIdx.x == 0) counter[1] = c;
}
__global__ void fused_like(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0;
  for (int k = i; k < n; k += gridDim.x * blockDim.x) acc += in[k];
  if (acc == 12345.f) out[0] = acc;
}

int main() {
  int n = 1 << 16;
  float *in, *out; unsigned long long* counter;
  cudaMalloc(&in, n * 4); cudaMemset(in, 0, n * 4); cudaMalloc(&out, 4); cudaMalloc(&counter, 16); cudaMemset(counter, 0, 16);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  const int iters = 2000;
  for (int mode = 0; mode < 6; ++mode) {
    for (int rep = 0; rep < 3; ++rep) {
      cudaEventRecord(a, s);
      for (int it = 0; it < iters; ++it) {
        if (mode == 5) { fused_like<<<64, 256, 0, s>>>(in, out, n); continue; }
        primary<<<64, 256, 0, s>>>(in, out, n, mode == 3 || mode == 4);
        if (mode == 0) continue;  // primary alone
        if (mode == 1) { secondary<<<396, 256, 0, s>>>(counter, 0); continue; }
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(396); cfg.blockDim = dim3(256); cfg.stream = s;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr; cfg.numAttrs = 1;
        cudaLaunchKernelEx(&cfg, secondary, counter, 1);
      }
      cudaEventRecord(b, s); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b);
      const char* names[] = {"primary alone", "primary + secondary (plain)", "primary + secondary (PDL, no trigger)",
                             "primary(trigger at start) + secondary (PDL)", "same as 3", "fused-like alone"};
      printf("%-45s %.2f us per call\n", names[mode], ms * 1000 / iters);
    }
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
