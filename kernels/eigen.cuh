// Eigenvalues and eigenvectors of the projected two-layer matrix: a line-by-line mirror
// of src/physics/eigen.rs (change both together; tests/gpu_probes.rs compares them).
#pragma once

template <typename T> struct Eigenvalues { T lambda[4]; bool hyperbolic; };

template <typename T>
__device__ __forceinline__ void scaled_quartic(T l, T u1, T u2, T igh1, T igh2, T one_minus_r, T& q, T& dq) {
    T d1 = l - u1, d2 = l - u2;
    T e1 = d1 * igh1, e2 = d2 * igh2;
    T a = d1 * e1, b = d2 * e2;
    q = a + b - a * b - one_minus_r;
    dq = T(2) * (e1 * (T(1) - b) + e2 * (T(1) - a));
}

#define NEWTON_MAX 40

template <typename T>
__device__ __forceinline__ T newton(T l, T scale, T u1, T u2, T igh1, T igh2, T one_minus_r, bool& ok) {
    ok = false;
    for (int it = 0; it < NEWTON_MAX; ++it) {
        T q, dq;
        scaled_quartic(l, u1, u2, igh1, igh2, one_minus_r, q, dq);
        if (dq == T(0)) return l;
        T step = q / dq;
        l = l - step;
        if (rt_abs(step) <= T(4) * Eps<T>::value * scale) { ok = true; return l; }
    }
    return l;
}

template <typename T>
__device__ __forceinline__ bool beyond(T l, T dir, T u1, T u2, T igh1, T igh2) {
    T d1 = l - u1, d2 = l - u2;
    return d1 * dir > T(0) && d2 * dir > T(0) && d1 * d1 * igh1 > T(1) && d2 * d2 * igh2 > T(1);
}

template <typename T>
__device__ __forceinline__ T extreme_root(T estimate, T bound, T dir, T scale, T u1, T u2, T igh1, T igh2, T one_minus_r) {
    bool ok;
    T l = newton(estimate, scale, u1, u2, igh1, igh2, one_minus_r, ok);
    if (ok && beyond(l, dir, u1, u2, igh1, igh2)) return l;
    return newton(bound, scale, u1, u2, igh1, igh2, one_minus_r, ok);
}

template <typename T>
__device__ __forceinline__ Eigenvalues<T> eigenvalues(T g, T r, T h1, T u1, T h2, T u2) {
    T gh1 = g * h1, gh2 = g * h2;
    T igh1 = T(1) / gh1, igh2 = T(1) / gh2;
    T hs = h1 + h2;
    T one_minus_r = T(1) - r;
    T um = (h1 * u1 + h2 * u2) / hs;
    T ce = rt_sqrt(g * hs);
    T scale = ce + rt_max(rt_abs(u1), rt_abs(u2));
    T lo = extreme_root(um - ce, rt_min(u1, u2) - ce, T(-1), scale, u1, u2, igh1, igh2, one_minus_r);
    T hi = extreme_root(um + ce, rt_max(u1, u2) + ce, T(1), scale, u1, u2, igh1, igh2, one_minus_r);
    T m = u1 + u2 - T(0.5) * (lo + hi);
    T qm, dqm;
    scaled_quartic(m, u1, u2, igh1, igh2, one_minus_r, qm, dqm);
    T d2 = -(gh1 * gh2) * qm / ((m - lo) * (hi - m));
    Eigenvalues<T> e;
    e.lambda[0] = lo;
    e.lambda[3] = hi;
    if (d2 > T(0)) {
        T d = rt_sqrt(d2);
        e.lambda[1] = m - d;
        e.lambda[2] = m + d;
        e.hyperbolic = true;
    } else {
        e.lambda[1] = m;
        e.lambda[2] = m;
        e.hyperbolic = false;
    }
    return e;
}

template <typename T>
__device__ __forceinline__ void eigenvector(T l, T u1, T igh1, T v[4]) {
    T d = l - u1;
    T a = d * d * igh1 - T(1);
    v[0] = T(1); v[1] = l; v[2] = a; v[3] = a * l;
}

template <typename T>
__device__ __forceinline__ void wave_strengths(const T lambda[4], T u1, T sqrt_gh1, const T b[4], T c[4]) {
    T is = T(1) / sqrt_gh1;
    T x[4] = {(lambda[0] - u1) * is, (lambda[1] - u1) * is, (lambda[2] - u1) * is, (lambda[3] - u1) * is};
    T m0 = b[0];
    T m1 = (b[1] - u1 * b[0]) * is;
    T m2 = b[0] + b[2];
    T m3 = m1 + (b[3] - u1 * b[2]) * is;
#pragma unroll
    for (int l = 0; l < 4; ++l) {
        T p = x[(l + 1) % 4], q = x[(l + 2) % 4], r = x[(l + 3) % 4];
        T e1 = p + q + r;
        T e2 = p * q + p * r + q * r;
        T e3 = p * q * r;
        T den = (x[l] - p) * (x[l] - q) * (x[l] - r);
        c[l] = (m3 - e1 * m2 + e2 * m1 - e3 * m0) / den;
    }
}

template <typename T>
__device__ __forceinline__ void estimates(T g, T r, T h1, T u1, T h2, T u2, T out[4]) {
    T hs = h1 + h2;
    T ihs = T(1) / hs;
    T um = (h1 * u1 + h2 * u2) * ihs;
    T uc = (h1 * u2 + h2 * u1) * ihs;
    T ce = rt_sqrt(g * hs);
    T gp = (T(1) - r) * g;
    T du = u1 - u2;
    T ci = rt_sqrt(rt_max(gp * h1 * h2 * ihs - du * du * h1 * h2 * ihs * ihs, T(0)));
    out[0] = um - ce; out[1] = uc - ci; out[2] = uc + ci; out[3] = um + ce;
}

