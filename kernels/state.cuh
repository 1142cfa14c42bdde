// The one admissibility rule: mirrors is_admissible in src/physics/state.rs.
#pragma once

__device__ __forceinline__ bool all_finite(float a, float b, float c) { return isfinite(a) && isfinite(b) && isfinite(c); }
__device__ __forceinline__ bool all_finite(double a, double b, double c) { return isfinite(a) && isfinite(b) && isfinite(c); }

// Every value finite and neither thickness below -slack (a layer may be absent).
template <typename T>
__device__ __forceinline__ bool is_admissible(T h1, T q1x, T q1y, T h2, T q2x, T q2y, T slack) {
    return h1 >= -slack && h2 >= -slack && all_finite(h1, q1x, q1y) && all_finite(h2, q2x, q2y);
}
