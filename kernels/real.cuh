// Floating-point helpers shared by every kernel header: the float4/float2 records of the
// data layout, machine epsilon, and math that picks the float or double intrinsic.
// Mirrors src/physics/real.rs. The kernel sources are concatenated in the order of
// KERNEL_SOURCES in src/solver/cuda/device.rs and compiled by NVRTC at run time.
#pragma once
template <typename T> struct alignas(4 * sizeof(T)) V4 { T x, y, z, w; };
template <typename T> struct alignas(2 * sizeof(T)) V2 { T x, y; };

template <typename T> struct Eps;
template <> struct Eps<float> { static constexpr float value = 1.1920929e-7f; };
template <> struct Eps<double> { static constexpr double value = 2.220446049250313e-16; };

__device__ __forceinline__ float rt_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double rt_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float rt_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double rt_abs(double x) { return fabs(x); }
template <typename T> __device__ __forceinline__ T rt_max(T a, T b) { return a > b ? a : b; }
template <typename T> __device__ __forceinline__ T rt_min(T a, T b) { return a < b ? a : b; }


// Explicitly rounded arithmetic: the compiler may neither fuse these into an fma nor
// reorder them, which the compensated sum below depends on.
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double div_rn(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float sqrt_rn(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double sqrt_rn(double a) { return __dsqrt_rn(a); }

// (hi + lo) + x kept as a pair: hi' = fl(hi + (lo + x)) and lo' its exact rounding error
// (TwoSum). Mirrors add_compensated in src/physics/real.rs.
template <typename T>
__device__ __forceinline__ void add_compensated(T hi, T lo, T x, T& hi_out, T& lo_out) {
    T t = add_rn(lo, x);
    T s = add_rn(hi, t);
    T b = sub_rn(s, hi);
    lo_out = add_rn(sub_rn(hi, sub_rn(s, b)), sub_rn(t, b));
    hi_out = s;
}
