// Vanishing layers and dry land: a line-by-line mirror of src/physics/wetdry.rs (change both
// together; tests/gpu_probes.rs compares them). An edge with a layer thinner than m.thin on
// either side takes dry_flux: per layer, the hydrostatic reconstruction over what lies
// beneath it and an HLL flux (Einfeldt's bounds, u + 2c at a dry bed), exactly zero at
// rest, positive under the reported speed.
#pragma once

// Whether an edge with these four thicknesses takes dry_flux (a NaN compares false).
template <typename T> __device__ __forceinline__ bool needs_dry_flux(const Model<T>& m, T h1i, T h2i, T h1j, T h2j) {
    return h1i < m.thin || h2i < m.thin || h1j < m.thin || h2j < m.thin;
}

// What an absent layer's thickness may read as over a bottom at depth `depth`.
template <typename T> __device__ __forceinline__ T wd_rounding(const Model<T>& m, T depth) {
    return T(4) * Eps<T>::value * (rt_abs(depth) + rt_abs(m.ref_interface));
}
// A layer's thickness as the dry-aware flux sees it: 0 where no more than that rounding.
template <typename T> __device__ __forceinline__ T wd_present(T h, T slack) { return h > slack ? h : T(0); }
// A layer's velocity component: zero at or below the dry tolerance (also the viscosity's,
// viscosity.cuh).
template <typename T> __device__ __forceinline__ T wd_velocity(T q, T h, T tol) { return h > tol ? q / h : T(0); }

// The hydrostatic reconstruction of one layer: (h*_i, h*_j) over the higher bottom, and their
// jump, the surface jump ds where both are positive.
template <typename T> __device__ __forceinline__ void wd_reconstruct(T hi, T hj, T dz, T ds, T& ri, T& rj, T& dh) {
    ri = rt_max(hi - rt_max(dz, T(0)), T(0));
    rj = rt_max(hj - rt_max(-dz, T(0)), T(0));
    dh = (ri > T(0) && rj > T(0)) ? ds : rj - ri;
}

// The slowest and fastest normal velocity of the layers present on one side.
template <typename T> __device__ __forceinline__ void wd_span(T h1, T u1, T h2, T u2, T& lo, T& hi) {
    if (h1 > T(0) && h2 > T(0)) { lo = rt_min(u1, u2); hi = rt_max(u1, u2); }
    else if (h1 > T(0)) { lo = u1; hi = u1; }
    else { lo = u2; hi = u2; }
}

// A layer's Roe-averaged (sqrt h-weighted) velocity between its two sides (0 where absent).
template <typename T> __device__ __forceinline__ T wd_roe(T hi, T ui, T hj, T uj) {
    T si = rt_sqrt(hi), sj = rt_sqrt(hj);
    T w = si + sj;
    return w > T(0) ? (si * ui + sj * uj) / w : T(0);
}

// Whether the reconstruction cuts a present layer h to half or less (h* <= h/2).
template <typename T> __device__ __forceinline__ bool wd_cut(T h, T r) { return h > T(0) && r <= T(0.5) * h; }

// One layer's HLL flux between reconstructed states, bounds sl <= 0 <= sr, d = sr - sl > 0:
// out = (mass, normal momentum word of i, of j, tangential flux).
template <typename T>
__device__ __forceinline__ void wd_layer_flux(T g, T sl, T sr, T d, T hi, T hj, T dh, T vix, T viy, T vjx, T vjy, T nx, T ny, T* out) {
    T uni = vix * nx + viy * ny, unj = vjx * nx + vjy * ny;
    T qi = hi * uni, qj = hj * unj;
    T mass = (sr * qi - sl * qj + sl * sr * dh) / d;
    T adv = (sr * (qi * uni) - sl * (qj * unj) + sl * sr * (qj - qi)) / d;
    T dp = T(0.5) * g * (hi + hj) * dh;
    T ut = mass > T(0) ? viy * nx - vix * ny : vjy * nx - vjx * ny;
    out[0] = mass; out[1] = adv - sl * dp / d; out[2] = adv - sr * dp / d; out[3] = mass * ut;
}

template <typename T>
__device__ __forceinline__ EdgeFlux<T> dry_flux(const Model<T>& m, const Side<T>& wi, const Side<T>& wj, T nx, T ny) {
    const T g = m.g, r = m.r;
    T si = wd_rounding(m, wi.depth), sj = wd_rounding(m, wj.depth), tol = m.dry_tolerance;
    T h1i = wd_present(side_h1(m, wi), si), h2i = wd_present(side_h2(m, wi), si);
    T h1j = wd_present(side_h1(m, wj), sj), h2j = wd_present(side_h2(m, wj), sj);
    // Dry land on both sides: nothing moves across, at no cost.
    if (h1i + h2i + h1j + h2j == T(0)) {
        EdgeFlux<T> z;
        for (int k = 0; k < 6; ++k) { z.i[k] = T(0); z.j[k] = T(0); }
        z.speed = T(0);
        z.fallback = false;
        return z;
    }
    T v1ix = wd_velocity(wi.q1x, h1i, tol), v1iy = wd_velocity(wi.q1y, h1i, tol);
    T v2ix = wd_velocity(wi.q2x, h2i, tol), v2iy = wd_velocity(wi.q2y, h2i, tol);
    T v1jx = wd_velocity(wj.q1x, h1j, tol), v1jy = wd_velocity(wj.q1y, h1j, tol);
    T v2jx = wd_velocity(wj.q2x, h2j, tol), v2jy = wd_velocity(wj.q2y, h2j, tol);

    T dd1 = wj.d1 - wi.d1;
    T dd2 = wj.d2 - wi.d2;
    T r1i, r1j, dh1;
    wd_reconstruct(h1i, h1j, dd2, dd1 + dd2, r1i, r1j, dh1);
    T ds2 = dd2 + r * dd1;
    T r2i, r2j, dh2;
    wd_reconstruct(h2i, h2j, ds2 - (h2j - h2i), ds2, r2i, r2j, dh2);

    // HLL bounds, one pair for both layers, from the cells' own states.
    T u1i = v1ix * nx + v1iy * ny, u2i = v2ix * nx + v2iy * ny;
    T u1j = v1jx * nx + v1jy * ny, u2j = v2jx * nx + v2jy * ny;
    T hi = h1i + h2i, hj = h1j + h2j;
    T ci = rt_sqrt(g * hi), cj = rt_sqrt(g * hj);
    T loi, hii, loj, hij;
    wd_span(h1i, u1i, h2i, u2i, loi, hii);
    wd_span(h1j, u1j, h2j, u2j, loj, hij);
    const T two = T(2);
    T sl, sr;
    if (hj == T(0)) {
        // Dry bed at j: the front runs at u + 2c.
        sl = loi - ci; sr = hii + two * ci;
    } else if (hi == T(0)) {
        sl = loj - two * cj; sr = hij + cj;
    } else {
        // Einfeldt, widened to hold every present layer's velocity.
        T c = rt_sqrt(g * (T(0.5) * (hi + hj)));
        T lo, up;
        wd_span(h1i + h1j, wd_roe(h1i, u1i, h1j, u1j), h2i + h2j, wd_roe(h2i, u2i, h2j, u2j), lo, up);
        sl = rt_min(rt_min(loi - ci, lo - c), loj); sr = rt_max(rt_max(hij + cj, up + c), hii);
    }
    // Clamped: an edge whose waves all run one way is upwind. d > 0: some layer is present.
    sl = rt_min(sl, T(0)); sr = rt_max(sr, T(0));
    // A step that cuts a present layer to half or less: symmetric bounds.
    if (wd_cut(h1i, r1i) || wd_cut(h1j, r1j) || wd_cut(h2i, r2i) || wd_cut(h2j, r2j)) {
        T s = rt_max(-sl, sr);
        sl = -s; sr = s;
    }
    T d = sr - sl;

    T f1[4], f2[4];
    wd_layer_flux(g, sl, sr, d, r1i, r1j, dh1, v1ix, v1iy, v1jx, v1jy, nx, ny, f1);
    wd_layer_flux(g, sl, sr, d, r2i, r2j, dh2, v2ix, v2iy, v2jx, v2jy, nx, ny, f2);
    EdgeFlux<T> f;
    f.i[0] = f1[0]; f.i[1] = f1[1] * nx - f1[3] * ny; f.i[2] = f1[1] * ny + f1[3] * nx;
    f.i[3] = f2[0]; f.i[4] = f2[1] * nx - f2[3] * ny; f.i[5] = f2[1] * ny + f2[3] * nx;
    f.j[0] = f1[0]; f.j[1] = f1[2] * nx - f1[3] * ny; f.j[2] = f1[2] * ny + f1[3] * nx;
    f.j[3] = f2[0]; f.j[4] = f2[2] * nx - f2[3] * ny; f.j[5] = f2[2] * ny + f2[3] * nx;
    f.speed = two * rt_max(-sl, sr);
    f.fallback = false;
    return f;
}

// Whether an interior edge's flux is exactly zero because no layer is present on either side:
// numerical_flux then takes dry_flux (some thickness is below m.thin) and dry_flux its first
// return (every thickness at most its rounding). The edge kernel then writes two quiet words
// instead of four (solver.cu, the accumulator layout).
template <typename T> __device__ __forceinline__ bool dry_edge(const Model<T>& m, const Side<T>& wi, const Side<T>& wj) {
    T h1i = side_h1(m, wi), h2i = side_h2(m, wi), h1j = side_h1(m, wj), h2j = side_h2(m, wj);
    if (!needs_dry_flux(m, h1i, h2i, h1j, h2j)) return false;
    T si = wd_rounding(m, wi.depth), sj = wd_rounding(m, wj.depth);
    return wd_present(h1i, si) + wd_present(h2i, si) + wd_present(h1j, sj) + wd_present(h2j, sj) == T(0);
}

// A cell after its update: momentum dropped at or below the dry tolerance, a thickness that
// rounding left negative within the tolerance set to exactly zero. Returns whether the state
// was admissible before.
template <typename T> __device__ __forceinline__ bool settle(const Model<T>& m, Side<T>& s, T& lo1, T& lo2) {
    const T tol = m.dry_tolerance;
    T h1 = side_h1(m, s), h2 = side_h2(m, s);
    bool ok = is_admissible(h1, s.q1x, s.q1y, h2, s.q2x, s.q2y, tol);
    if (h1 < T(0) && h1 >= -tol) { s.d1 = -m.ref_h1; lo1 = T(0); }
    if (h2 < -wd_rounding(m, s.depth) && h2 >= -tol) { s.d2 = (-s.depth) - m.ref_interface; lo2 = T(0); }
    if (h1 <= tol) { s.q1x = T(0); s.q1y = T(0); }
    if (h2 <= tol) { s.q2x = T(0); s.q2y = T(0); }
    return ok;
}
