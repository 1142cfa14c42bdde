// Boundary ghost states and the flux through a boundary edge: mirrors
// src/physics/boundary.rs (change both together; tests/gpu_probes.rs compares them).
#pragma once

#define BOUNDARY_WALL 0
#define BOUNDARY_OPEN 1
#define BOUNDARY_ELEVATION 2
#define BOUNDARY_DISCHARGE 3
#define BOUNDARY_DATA 8

template <typename T> struct Boundary {
    int kind;      // BOUNDARY_WALL, ...
    int reserved;  // keeps data aligned
    T data[BOUNDARY_DATA];
};

// The mirror image of w across an edge with unit normal n: normal momenta reversed.
template <typename T>
__device__ __forceinline__ Side<T> mirror(const Side<T>& w, T nx, T ny) {
    Side<T> m = w;
    T qn1 = w.q1x * nx + w.q1y * ny;
    T qn2 = w.q2x * nx + w.q2y * ny;
    m.q1x = w.q1x - T(2) * qn1 * nx; m.q1y = w.q1y - T(2) * qn1 * ny;
    m.q2x = w.q2x - T(2) * qn2 * nx; m.q2y = w.q2y - T(2) * qn2 * ny;
    return m;
}

// The ghost's momentum of one layer: the cell's normal velocity plus dun, its tangential
// velocity, times the ghost's thickness hg.
template <typename T>
__device__ __forceinline__ void turn(T qx, T qy, T hin, T hg, T dun, T nx, T ny, T& ox, T& oy) {
    T un = (qx * nx + qy * ny) / hin;
    T ut = (qy * nx - qx * ny) / hin;
    un = un + dun;
    ox = hg * (un * nx - ut * ny);
    oy = hg * (un * ny + ut * nx);
}

// The given surface, the interface radiated, velocities from the outgoing characteristics
// (elevation_ghost).
template <typename T>
__device__ __forceinline__ Side<T> elevation_ghost(const Model<T>& m, const Boundary<T>& b, const Side<T>& inner,
                                                   T nx, T ny) {
    T one = T(1), tol = m.dry_tolerance;
    T surface_in = inner.d1 + inner.d2;
    T d2 = b.data[3] == one ? b.data[1] : inner.d2;
    T surface = b.data[2] == one ? b.data[0] : surface_in;
    // The interface within the water column (a one-layer sea: boundary.rs).
    T bed = (-inner.depth) - m.ref_interface;
    T top = surface + m.ref_h1;
    if (d2 < bed) d2 = bed;
    if (d2 > top) d2 = top;
    T de1 = surface - surface_in, de2 = d2 - inner.d2;
    T h1 = side_h1(m, inner), h2 = side_h2(m, inner);
    T h = h1 + h2;
    if (!(h > tol)) return mirror(inner, nx, ny);
    bool wet1 = h1 > tol, wet2 = h2 > tol;
    T ce = rt_sqrt(m.g * h);
    T du = -(m.g / ce) * de1;
    T ds = T(0);
    if (wet1 && wet2) {
        // The internal mode radiated against the given interface (elevation_ghost).
        T ci = rt_sqrt(m.g * (one - m.r) * h1 * h2 / h);
        T k = h1 * h2 / (ci * h);
        T sc = (inner.q1x * nx + inner.q1y * ny) / h1 - (inner.q2x * nx + inner.q2y * ny) / h2;
        T zc = (-de2) + h2 / h * de1;
        T out = T(0.5) * (zc - k * sc);
        d2 = d2 + out;
        if (d2 < bed) d2 = bed;
        if (d2 > top) d2 = top;
        ds = -(out / k) - sc;
    }
    Side<T> g = inner;
    g.d1 = surface - d2;
    g.d2 = d2;
    T g1 = side_h1(m, g), g2 = side_h2(m, g);
    g.q1x = g.q1y = g.q2x = g.q2y = T(0);
    if (wet1) turn(inner.q1x, inner.q1y, h1, g1, du + h2 / h * ds, nx, ny, g.q1x, g.q1y);
    if (wet2) turn(inner.q2x, inner.q2y, h2, g2, du - h1 / h * ds, nx, ny, g.q2x, g.q2y);
    return g;
}

// The outgoing external and internal waves of the cell, linearized about the reference rest
// state, and nothing incoming (open_ghost).
template <typename T>
__device__ __forceinline__ Side<T> open_ghost(const Model<T>& m, const Side<T>& inner, T nx, T ny) {
    T one = T(1), half = T(0.5);
    T r1 = m.ref_h1, r2 = m.ref_interface + inner.depth;
    T h1 = side_h1(m, inner), h2 = side_h2(m, inner);
    if (!(r1 > m.dry_tolerance && r2 > m.dry_tolerance && h1 > m.dry_tolerance && h2 > m.dry_tolerance)) return inner;
    T h = h1 + h2;
    T disc = rt_sqrt(one - T(4) * (one - m.r) * h1 * h2 / (h * h));
    T ce2 = half * m.g * h * (one + disc);
    T ci2 = m.g * m.g * (one - m.r) * h1 * h2 / ce2;
    T ce = rt_sqrt(ce2), ci = rt_sqrt(ci2);
    T ae = ce2 / (m.g * h1) - one, ai = ci2 / (m.g * h1) - one;
    T u1 = (inner.q1x * nx + inner.q1y * ny) / h1;
    T u2 = (inner.q2x * nx + inner.q2y * ny) / h2;
    T det = ai - ae;
    T se = (ai * inner.d1 - inner.d2) / det, si = (inner.d2 - ae * inner.d1) / det;
    T p = h1 * u1, q = h2 * u2;
    T ve = (ai * p - q) / det, vi = (q - ae * p) / det;
    T oe = half * (se + ve / ce), oi = half * (si + vi / ci);
    T fu1 = (ce * oe + ci * oi) / h1, fu2 = (ce * ae * oe + ci * ai * oi) / h2;
    Side<T> g = inner;
    g.d1 = oe + oi;
    g.d2 = ae * oe + ai * oi;
    T g1 = side_h1(m, g), g2 = side_h2(m, g);
    T ut1 = (inner.q1y * nx - inner.q1x * ny) / h1;
    T ut2 = (inner.q2y * nx - inner.q2x * ny) / h2;
    g.q1x = g1 * (fu1 * nx - ut1 * ny); g.q1y = g1 * (fu1 * ny + ut1 * nx);
    g.q2x = g2 * (fu2 * nx - ut2 * ny); g.q2y = g2 * (fu2 * ny + ut2 * nx);
    return g;
}

// Prescribed inflow per unit length in the given layers (discharge_ghost).
template <typename T>
__device__ __forceinline__ Side<T> discharge_ghost(const Boundary<T>& b, const Side<T>& inner, T nx, T ny) {
    Side<T> g = inner;
    if (b.data[2] == T(1)) { g.q1x = -b.data[0] * nx; g.q1y = -b.data[0] * ny; }
    if (b.data[3] == T(1)) { g.q2x = -b.data[1] * nx; g.q2y = -b.data[1] * ny; }
    return g;
}

template <typename T>
__device__ __forceinline__ Side<T> ghost(const Model<T>& m, const Boundary<T>& b, const Side<T>& inner, T nx, T ny,
                                         T t) {
    switch (b.kind) {
        case BOUNDARY_OPEN: return open_ghost(m, inner, nx, ny);
        case BOUNDARY_ELEVATION: return elevation_ghost(m, b, inner, nx, ny);
        case BOUNDARY_DISCHARGE: return discharge_ghost(b, inner, nx, ny);
        default: return mirror(inner, nx, ny);
    }
}

// What the boundary prescribes of the flux between the cell and its ghost: no mass through a
// wall, the given discharge through a discharge boundary (boundary_mass). Apart from
// boundary_flux for the edge kernel, which takes one numerical_flux for every edge.
template <typename T> __device__ __forceinline__ void boundary_mass(const Boundary<T>& b, EdgeFlux<T>& f) {
    if (b.kind == BOUNDARY_WALL) {
        f.i[0] = T(0); f.i[3] = T(0); f.j[0] = T(0); f.j[3] = T(0);
    } else if (b.kind == BOUNDARY_DISCHARGE) {
        if (b.data[2] == T(1)) { f.i[0] = -b.data[0]; f.j[0] = -b.data[0]; }
        if (b.data[3] == T(1)) { f.i[3] = -b.data[1]; f.j[3] = -b.data[1]; }
    }
}

// A wall's push on a layer that leaves it at most that of the layer with its normal velocity
// stopped (wall_leaving_cap in src/physics/boundary.rs says why). f.i only.
template <typename T>
__device__ __forceinline__ void wall_leaving_cap(const Model<T>& m, const Boundary<T>& b, const Side<T>& inner, T nx,
                                                 T ny, EdgeFlux<T>& f) {
    if (b.kind != BOUNDARY_WALL) return;
    T a1 = inner.q1x * nx + inner.q1y * ny, a2 = inner.q2x * nx + inner.q2y * ny;
    bool leave1 = a1 < T(0), leave2 = a2 < T(0);
    if (!(leave1 || leave2)) return;
    Side<T> r = inner;
    if (leave1) { r.q1x = inner.q1x - a1 * nx; r.q1y = inner.q1y - a1 * ny; }
    if (leave2) { r.q2x = inner.q2x - a2 * nx; r.q2y = inner.q2y - a2 * ny; }
    EdgeFlux<T> cap = numerical_flux(m, r, mirror(r, nx, ny), nx, ny);
    for (int k = 1; k <= 4; k += 3) {
        bool leave = k == 1 ? leave1 : leave2;
        T push = f.i[k] * nx + f.i[k + 1] * ny, most = cap.i[k] * nx + cap.i[k + 1] * ny;
        if (leave && push > most) {
            T d = most - push;
            f.i[k] = f.i[k] + d * nx;
            f.i[k + 1] = f.i[k + 1] + d * ny;
        }
    }
}

template <typename T>
__device__ __forceinline__ EdgeFlux<T> boundary_flux(const Model<T>& m, const Boundary<T>& b, const Side<T>& inner,
                                                     T nx, T ny, T t) {
    EdgeFlux<T> f = numerical_flux(m, inner, ghost(m, b, inner, nx, ny, t), nx, ny);
    boundary_mass(b, f);
    wall_leaving_cap(m, b, inner, nx, ny, f);
    return f;
}
