// The two-layer IR-Roe physics for the GPU: a line-by-line mirror of src/physics
// (real.rs, eigen.rs, flux.rs). Change both together; tests compare them
// (tools/gpu-test.sh). Layer 1 is the upper, lighter layer; H is the depth of the bottom.
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

// ---- eigen.rs ----------------------------------------------------------------------

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

// ---- flux.rs -----------------------------------------------------------------------

template <typename T> struct Side { T h1, q1x, q1y, h2, q2x, q2y, depth; };
template <typename T> struct EdgeFlux { T i[6]; T j[6]; T speed; bool fallback; };

template <typename T>
__device__ __forceinline__ Side<T> wall_mirror(const Side<T>& w, T nx, T ny) {
    Side<T> m = w;
    T qn1 = w.q1x * nx + w.q1y * ny;
    T qn2 = w.q2x * nx + w.q2y * ny;
    m.q1x = w.q1x - T(2) * qn1 * nx; m.q1y = w.q1y - T(2) * qn1 * ny;
    m.q2x = w.q2x - T(2) * qn2 * nx; m.q2y = w.q2y - T(2) * qn2 * ny;
    return m;
}

template <typename T>
__device__ __forceinline__ T left_share(T lambda, T lambda_l, T lambda_r, T tiny) {
    if (lambda_l < T(0) && T(0) < lambda_r) {
        if (rt_abs(lambda) > tiny) return lambda_l * (lambda_r - lambda) / ((lambda_r - lambda_l) * lambda);
        return T(0.5);
    }
    if (lambda < T(0)) return T(1);
    if (lambda > T(0)) return T(0);
    return T(0.5);
}

template <typename T>
__device__ __forceinline__ EdgeFlux<T> edge_flux(T g, T r, const Side<T>& wi, const Side<T>& wj, T nx, T ny) {
    const T half = T(0.5);
    T h1i = wi.h1, h2i = wi.h2, h1j = wj.h1, h2j = wj.h2;
    T qn1i = wi.q1x * nx + wi.q1y * ny, qn2i = wi.q2x * nx + wi.q2y * ny;
    T qn1j = wj.q1x * nx + wj.q1y * ny, qn2j = wj.q2x * nx + wj.q2y * ny;
    T ih1i = T(1) / h1i, ih2i = T(1) / h2i, ih1j = T(1) / h1j, ih2j = T(1) / h2j;
    T u1i = qn1i * ih1i, u2i = qn2i * ih2i, u1j = qn1j * ih1j, u2j = qn2j * ih2j;

    T h1 = half * (h1i + h1j);
    T h2 = half * (h2i + h2j);
    T s1i = rt_sqrt(h1i), s1j = rt_sqrt(h1j), s2i = rt_sqrt(h2i), s2j = rt_sqrt(h2j);
    T u1 = (s1i * u1i + s1j * u1j) / (s1i + s1j);
    T u2 = (s2i * u2i + s2j * u2j) / (s2i + s2j);

    T dh1 = h1j - h1i, dh2 = h2j - h2i, dd = wj.depth - wi.depth;
    T nc1 = g * h1 * (dh2 - dd);
    T nc3 = g * h2 * (r * dh1 - dd);
    T b[4] = {
        qn1j - qn1i,
        qn1j * u1j - qn1i * u1i + g * h1 * (dh1 + dh2 - dd),
        qn2j - qn2i,
        qn2j * u2j - qn2i * u2i + g * h2 * (dh2 + r * dh1 - dd),
    };

    Eigenvalues<T> eig = eigenvalues(g, r, h1, u1, h2, u2);
    T dm[4] = {T(0), T(0), T(0), T(0)};
    T speed = rt_max(rt_max(rt_max(rt_abs(eig.lambda[0]), rt_abs(eig.lambda[3])), rt_abs(eig.lambda[1])),
                     rt_abs(eig.lambda[2]));
    bool fallback = !(eig.hyperbolic && eig.lambda[2] - eig.lambda[1] > rt_sqrt(Eps<T>::value) * speed);
    if (!fallback) {
        T igh1 = T(1) / (g * h1);
        T cols[4][4];
#pragma unroll
        for (int l = 0; l < 4; ++l) eigenvector(eig.lambda[l], u1, igh1, cols[l]);
        T c[4];
        wave_strengths(eig.lambda, u1, rt_sqrt(g * h1), b, c);
        T el[4], er[4];
        estimates(g, r, h1i, u1i, h2i, u2i, el);
        estimates(g, r, h1j, u1j, h2j, u2j, er);
        bool maybe_transonic = false;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            T margin = T(0.25) * (rt_abs(el[l]) + rt_abs(er[l])) + Eps<T>::value * speed;
            maybe_transonic |= el[l] < margin && er[l] > -margin;
        }
        Eigenvalues<T> left = eig, right = eig;
        if (maybe_transonic) {
            left = eigenvalues(g, r, h1i, u1i, h2i, u2i);
            right = eigenvalues(g, r, h1j, u1j, h2j, u2j);
        }
        T tiny = rt_sqrt(Eps<T>::value) * speed;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            bool internal = l == 1 || l == 2;
            bool fix_ok = !internal || (left.hyperbolic && right.hyperbolic);
            T w = fix_ok ? left_share(eig.lambda[l], left.lambda[l], right.lambda[l], tiny)
                         : left_share(eig.lambda[l], eig.lambda[l], eig.lambda[l], tiny);
            T wc = w * c[l];
#pragma unroll
            for (int k = 0; k < 4; ++k) dm[k] = dm[k] + wc * cols[l][k];
        }
    } else {
        T dv[4] = {dh1, qn1j - qn1i, dh2 - dd, qn2j - qn2i};
#pragma unroll
        for (int k = 0; k < 4; ++k) dm[k] = half * (b[k] - speed * dv[k]);
    }

    T phi[4] = {
        qn1i + dm[0],
        qn1i * u1i + half * g * h1i * h1i + dm[1],
        qn2i + dm[2],
        qn2i * u2i + half * g * h2i * h2i + dm[3],
    };
    T m1 = phi[0], m2 = phi[2];
    T ut1 = m1 > T(0) ? (wi.q1y * nx - wi.q1x * ny) * ih1i : (wj.q1y * nx - wj.q1x * ny) * ih1j;
    T ut2 = m2 > T(0) ? (wi.q2y * nx - wi.q2x * ny) * ih2i : (wj.q2y * nx - wj.q2x * ny) * ih2j;
    T s1 = m1 * ut1, s2 = m2 * ut2;

    EdgeFlux<T> f;
    T p1 = phi[1], p2 = phi[3];
    f.i[0] = m1; f.i[1] = p1 * nx - s1 * ny; f.i[2] = p1 * ny + s1 * nx;
    f.i[3] = m2; f.i[4] = p2 * nx - s2 * ny; f.i[5] = p2 * ny + s2 * nx;
    p1 = phi[1] - nc1; p2 = phi[3] - nc3;
    f.j[0] = m1; f.j[1] = p1 * nx - s1 * ny; f.j[2] = p1 * ny + s1 * nx;
    f.j[3] = m2; f.j[4] = p2 * nx - s2 * ny; f.j[5] = p2 * ny + s2 * nx;
    f.speed = speed;
    f.fallback = fallback;
    return f;
}

template <typename T>
__device__ __forceinline__ EdgeFlux<T> wall_flux(T g, T r, const Side<T>& w, T nx, T ny) {
    EdgeFlux<T> f = edge_flux(g, r, w, wall_mirror(w, nx, ny), nx, ny);
    f.i[0] = T(0); f.i[3] = T(0); f.j[0] = T(0); f.j[3] = T(0);
    return f;
}
