// Cell source terms, applied at the end of each cell's update: mirrors
// src/physics/source.rs (change both together; tests/gpu_probes.rs compares them).
#pragma once

template <typename T>
__device__ __forceinline__ void source(const Model<T>& m, Side<T>& s, T dt) {
    if (m.linear_friction > T(0)) {
        T f = T(1) / (T(1) + dt * m.linear_friction / side_h2(m, s));
        s.q2x = s.q2x * f;
        s.q2y = s.q2y * f;
    }
}
