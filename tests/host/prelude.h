// Host stand-ins for the CUDA built-ins the kernels use, so that g++ compiles the kernel
// sources as C++ (tests/kernels_host.rs): one thread at a time (blockDim = 1), warp votes and
// shuffles of one lane, atomics as plain read-modify-writes, intrinsics as IEEE operations.
#include <math.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <string>
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
#define __shared__ static
struct Dim3 { unsigned x, y, z; };
static Dim3 blockIdx, threadIdx, blockDim;
static float __fadd_rn(float a, float b) { return a + b; }
static double __dadd_rn(double a, double b) { return a + b; }
static float __fsub_rn(float a, float b) { return a - b; }
static double __dsub_rn(double a, double b) { return a - b; }
static float __fmul_rn(float a, float b) { return a * b; }
static double __dmul_rn(double a, double b) { return a * b; }
static double __dsqrt_rn(double a) { return sqrt(a); }
static float __fsqrt_rn(float a) { return sqrtf(a); }
static float __fdiv_rn(float a, float b) { return a / b; }
static float __fdividef(float a, float b) { return a / b; }
static double __ddiv_rn(double a, double b) { return a / b; }
static unsigned __float_as_uint(float x) { unsigned u; memcpy(&u, &x, 4); return u; }
static long long __double_as_longlong(double x) { long long u; memcpy(&u, &x, 8); return u; }
static unsigned __ballot_sync(unsigned, bool p) { return p ? 1u : 0u; }
static int __popc(unsigned x) { return __builtin_popcount(x); }
template <class T> T atomicAdd(T* a, T v) { T o = *a; *a += v; return o; }
template <class T> T atomicOr(T* a, T v) { T o = *a; *a |= v; return o; }
template <class T> T atomicMin(T* a, T v) { T o = *a; if (v < o) *a = v; return o; }
template <class T> T __shfl_down_sync(unsigned, T v, int) { return v; }
static void __syncthreads() {}
struct int4 { int x, y, z, w; };
using std::isfinite;
struct int2 { int x, y; };
// The tile kernel's records (kernels/order2.cu): one block of one thread at a time.
#define PYCNO_HOST_SHARED static unsigned char pycno_tile_records[1 << 16];
