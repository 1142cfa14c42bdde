// The numerical flux across one edge (the IR-Roe scheme of de la Asunción, Mantas, Castro
// and Fernández-Nieto, 2012, section 2.2): a line-by-line mirror of src/physics/flux.rs
// (change both together; tests/gpu_probes.rs compares them). Jumps come from the stored
// deviations and neither side carries its own cell's hydrostatic pressure: exactly zero at
// rest in any precision (the module comment of flux.rs says why).
#pragma once

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

// Whether a layer's mass flux takes more out of its donor cell than cap times its thickness.
template <typename T> __device__ __forceinline__ bool flux_escapes(T cap, T mass, T hi, T hj) {
    return mass > cap * hi || -mass > cap * hj;
}

// The IR-Roe flux alone, for edges where both layers are wet on both sides.
template <typename T>
__device__ __forceinline__ EdgeFlux<T> ir_roe_flux(const Model<T>& m, const Side<T>& wi, const Side<T>& wj, T nx, T ny) {
    const T g = m.g, r = m.r;
    const T half = T(0.5);
    T h1i = side_h1(m, wi), h2i = side_h2(m, wi), h1j = side_h1(m, wj), h2j = side_h2(m, wj);
    T qn1i = wi.q1x * nx + wi.q1y * ny, qn2i = wi.q2x * nx + wi.q2y * ny;
    T qn1j = wj.q1x * nx + wj.q1y * ny, qn2j = wj.q2x * nx + wj.q2y * ny;
    T ih1i = T(1) / h1i, ih2i = T(1) / h2i, ih1j = T(1) / h1j, ih2j = T(1) / h2j;
    T u1i = qn1i * ih1i, u2i = qn2i * ih2i, u1j = qn1j * ih1j, u2j = qn2j * ih2j;

    T h1 = half * (h1i + h1j);
    T h2 = half * (h2i + h2j);
    T s1i = rt_sqrt(h1i), s1j = rt_sqrt(h1j), s2i = rt_sqrt(h2i), s2j = rt_sqrt(h2j);
    T u1 = (s1i * u1i + s1j * u1j) / (s1i + s1j);
    T u2 = (s2i * u2i + s2j * u2j) / (s2i + s2j);

    T dh1 = wj.d1 - wi.d1;
    T deta2 = wj.d2 - wi.d2;
    T deta1 = dh1 + deta2;
    T p1 = g * h1 * deta1;
    T p3 = g * h2 * (deta2 + r * dh1);
    T b[4] = {qn1j - qn1i, qn1j * u1j - qn1i * u1i + p1, qn2j - qn2i, qn2j * u2j - qn2i * u2i + p3};

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
        T dv[4] = {dh1, qn1j - qn1i, deta2, qn2j - qn2i};
#pragma unroll
        for (int k = 0; k < 4; ++k) dm[k] = half * (b[k] - speed * dv[k]);
    }

    T phi[4] = {qn1i + dm[0], qn1i * u1i + dm[1], qn2i + dm[2], qn2i * u2i + dm[3]};
    T m1 = phi[0], m2 = phi[2];
    T ut1 = m1 > T(0) ? (wi.q1y * nx - wi.q1x * ny) * ih1i : (wj.q1y * nx - wj.q1x * ny) * ih1j;
    T ut2 = m2 > T(0) ? (wi.q2y * nx - wi.q2x * ny) * ih2i : (wj.q2y * nx - wj.q2x * ny) * ih2j;
    T s1 = m1 * ut1, s2 = m2 * ut2;

    EdgeFlux<T> f;
    T a1 = phi[1], a2 = phi[3];
    f.i[0] = m1; f.i[1] = a1 * nx - s1 * ny; f.i[2] = a1 * ny + s1 * nx;
    f.i[3] = m2; f.i[4] = a2 * nx - s2 * ny; f.i[5] = a2 * ny + s2 * nx;
    a1 = phi[1] - p1; a2 = phi[3] - p3;
    f.j[0] = m1; f.j[1] = a1 * nx - s1 * ny; f.j[2] = a1 * ny + s1 * nx;
    f.j[3] = m2; f.j[4] = a2 * nx - s2 * ny; f.j[5] = a2 * ny + s2 * nx;
    f.speed = speed;
    f.fallback = fallback;
    return f;
}

// The flux across an edge: IR-Roe where every layer is wet on both sides and its flux keeps
// each layer's outgoing mass within speed/2 times the donor's thickness, else dry_flux
// (flux.rs says why).
template <typename T>
__device__ __forceinline__ EdgeFlux<T> numerical_flux(const Model<T>& m, const Side<T>& wi, const Side<T>& wj, T nx, T ny) {
    T h1i = side_h1(m, wi), h2i = side_h2(m, wi), h1j = side_h1(m, wj), h2j = side_h2(m, wj);
    if (needs_dry_flux(m, h1i, h2i, h1j, h2j)) return dry_flux(m, wi, wj, nx, ny);
    EdgeFlux<T> f = ir_roe_flux(m, wi, wj, nx, ny);
    T cap = T(0.5) * f.speed;
    if (flux_escapes(cap, f.i[0], h1i, h1j) || flux_escapes(cap, f.i[3], h2i, h2j)) return dry_flux(m, wi, wj, nx, ny);
    return f;
}
