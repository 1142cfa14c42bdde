// The one admissibility rule: mirrors is_admissible in src/physics/state.rs.
#pragma once

__device__ __forceinline__ bool all_finite(float a, float b, float c) { return isfinite(a) && isfinite(b) && isfinite(c); }
__device__ __forceinline__ bool all_finite(double a, double b, double c) { return isfinite(a) && isfinite(b) && isfinite(c); }

// Both thicknesses positive and every value finite.
template <typename T>
__device__ __forceinline__ bool is_admissible(T h1, T q1x, T q1y, T h2, T q2x, T q2y) {
    return h1 > T(0) && h2 > T(0) && all_finite(h1, q1x, q1y) && all_finite(h2, q2x, q2y);
}
