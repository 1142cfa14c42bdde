// Boundary ghost states and the flux through a boundary edge: mirrors
// src/physics/boundary.rs (change both together; tests/gpu_probes.rs compares them).
#pragma once

#define BOUNDARY_WALL 0
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

template <typename T>
__device__ __forceinline__ Side<T> ghost(const Boundary<T>& b, const Side<T>& inner, T nx, T ny, T t) {
    switch (b.kind) {
        default: return mirror(inner, nx, ny);
    }
}

template <typename T>
__device__ __forceinline__ EdgeFlux<T> boundary_flux(const Model<T>& m, const Boundary<T>& b, const Side<T>& inner,
                                                     T nx, T ny, T t) {
    EdgeFlux<T> f = numerical_flux(m, inner, ghost(b, inner, nx, ny, t), nx, ny);
    if (b.kind == BOUNDARY_WALL) {
        f.i[0] = T(0); f.i[3] = T(0); f.j[0] = T(0); f.j[3] = T(0);
    }
    return f;
}
