// Cell source terms, applied at the end of each cell's update: mirrors
// src/physics/source.rs (change both together; tests/gpu_probes.rs compares them).
#pragma once

__device__ __forceinline__ float rt_cbrt(float x) { return cbrtf(x); }
__device__ __forceinline__ double rt_cbrt(double x) { return cbrt(x); }
__device__ __forceinline__ void rt_sincos(float x, float* s, float* c) { sincosf(x, s, c); }
__device__ __forceinline__ void rt_sincos(double x, double* s, double* c) { sincos(x, s, c); }

template <typename T>
__device__ __forceinline__ void source_at(const Model<T>& m, Side<T>& s, T dt, T f);

template <typename T>
__device__ __forceinline__ void source(const Model<T>& m, Side<T>& s, T dt) {
    source_at(m, s, dt, m.coriolis_f);
}

// source with the cell's own Coriolis parameter f (source_at in source.rs).
template <typename T>
__device__ __forceinline__ void source_at(const Model<T>& m, Side<T>& s, T dt, T f) {
    T one = T(1), two = T(2), four = T(4);
    // Vanishing layers: wind on the top wet layer, bottom friction on the lowest wet one,
    // interlayer friction only where both are present (source.rs).
    T h1 = side_h1(m, s), h2 = side_h2(m, s);
    bool wet1 = h1 > m.dry_tolerance, wet2 = h2 > m.dry_tolerance;
    if (m.wind_x != T(0) || m.wind_y != T(0)) {
        if (wet1) {
            s.q1x = s.q1x + dt * m.wind_x;
            s.q1y = s.q1y + dt * m.wind_y;
        } else if (wet2) {
            s.q2x = s.q2x + dt * m.wind_x;
            s.q2y = s.q2y + dt * m.wind_y;
        }
    }
    // The lowest wet layer: its momentum and thickness.
    T* bx = wet2 ? &s.q2x : &s.q1x;
    T* by = wet2 ? &s.q2y : &s.q1y;
    T hb = wet2 ? h2 : h1;
    if (m.linear_friction > T(0) && (wet1 || wet2)) {
        T f = one / (one + dt * m.linear_friction / hb);
        *bx = *bx * f;
        *by = *by * f;
    }
    if (m.manning > T(0) && (wet1 || wet2)) {
        T speed = rt_sqrt(*bx * *bx + *by * *by);
        T k = m.g * m.manning * m.manning / (hb * hb * rt_cbrt(hb));
        T f = two / (one + rt_sqrt(one + four * dt * k * speed));
        *bx = *bx * f;
        *by = *by * f;
    }
    if (m.interlayer_friction > T(0) && wet1 && wet2) {
        T dux = s.q1x / h1 - s.q2x / h2, duy = s.q1y / h1 - s.q2y / h2;
        T speed = rt_sqrt(dux * dux + duy * duy);
        T k = m.interlayer_friction * (one / h1 + m.r / h2);
        T change = two / (one + rt_sqrt(one + four * dt * k * speed)) - one;
        T w = h1 * h2 / (m.r * h1 + h2);
        T c1x = w * change * dux, c1y = w * change * duy;
        T c2x = m.r * w * change * dux, c2y = m.r * w * change * duy;
        s.q1x = s.q1x + c1x; s.q1y = s.q1y + c1y;
        s.q2x = s.q2x - c2x; s.q2y = s.q2y - c2y;
    }
    if (m.shear_bound > T(0) && wet1 && wet2) limit_shear(m, s, h1, h2);
    if (f != T(0)) {
        T angle = f * dt;
        T sn, cs;
        rt_sincos(angle, &sn, &cs);
        T q1x = cs * s.q1x + sn * s.q1y, q1y = cs * s.q1y - sn * s.q1x;
        T q2x = cs * s.q2x + sn * s.q2y, q2y = cs * s.q2y - sn * s.q2x;
        s.q1x = q1x; s.q1y = q1y; s.q2x = q2x; s.q2y = q2y;
    }
}
