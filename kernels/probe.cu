// Probe kernels: each evaluates one physics function on many inputs, so that tests can
// compare the CUDA mirror with the Rust physics function by function (tests/gpu_probes.rs).
// Not used by runs (second order: the reconstruction of one cell, the cell-interior term and
// the second-order edge fluxes of reconstruct.cuh, as the order2.cu kernels call them). A side state is 7 values (d1, q1x, q1y, d2, q2x, q2y, depth); a flux
// result is 14 (i[6], j[6], speed, fallback as 0 or 1).

template <typename T>
__device__ __forceinline__ Side<T> probe_side(const T* x) {
    Side<T> s;
    s.d1 = x[0]; s.q1x = x[1]; s.q1y = x[2]; s.d2 = x[3]; s.q2x = x[4]; s.q2y = x[5]; s.depth = x[6];
    return s;
}

template <typename T>
__device__ __forceinline__ void probe_store_side(const Side<T>& s, T* y) {
    y[0] = s.d1; y[1] = s.q1x; y[2] = s.q1y; y[3] = s.d2; y[4] = s.q2x; y[5] = s.q2y; y[6] = s.depth;
}

template <typename T>
__device__ __forceinline__ void probe_store_flux(const EdgeFlux<T>& f, T* y) {
    for (int k = 0; k < 6; ++k) { y[k] = f.i[k]; y[6 + k] = f.j[k]; }
    y[12] = f.speed;
    y[13] = f.fallback ? T(1) : T(0);
}

// One cell's reconstruction (rc_cell, as the reconstruction kernel runs it) from 53 inputs:
// a (4), b (4), across (3), the neighbours' a (3 x 4) and b (3 x 4), w (6), r (6), ln (6);
// out: the gradients (12) and the faces (18).
template <typename T> __device__ __forceinline__ void probe_cell(const Model<T>& m, const T* x, T* y) {
    V4<T> a = {x[0], x[1], x[2], x[3]}, b = {x[4], x[5], x[6], x[7]};
    int o[3];
    V4<T> na[3], nb[3];
    V2<T> l[3];
    T w[3][2], r[3][2];
    for (int k = 0; k < 3; ++k) {
        o[k] = (int)x[8 + k];
        const T* p = x + 11 + 4 * k;
        const T* q = x + 23 + 4 * k;
        na[k].x = p[0]; na[k].y = p[1]; na[k].z = p[2]; na[k].w = p[3];
        nb[k].x = q[0]; nb[k].y = q[1]; nb[k].z = q[2]; nb[k].w = q[3];
        w[k][0] = x[35 + 2 * k]; w[k][1] = x[36 + 2 * k];
        r[k][0] = x[41 + 2 * k]; r[k][1] = x[42 + 2 * k];
        l[k].x = x[47 + 2 * k]; l[k].y = x[48 + 2 * k];
    }
    T g[RC_VARS][2], f[3][RC_VARS];
    rc_cell(m, a, b, o, na, nb, w, r, l, g, f);
    for (int v = 0; v < RC_VARS; ++v) { y[2 * v] = g[v][0]; y[2 * v + 1] = g[v][1]; }
    for (int k = 0; k < 3; ++k)
        for (int v = 0; v < RC_VARS; ++v) y[12 + RC_VARS * k + v] = f[k][v];
}

// The cell-interior term from 15 inputs: d1, d2, the faces' d1 (3) and d2 (3), ln (6), depth;
// out: 6.
template <typename T> __device__ __forceinline__ void probe_interior_of(const Model<T>& m, const T* x, T* y) {
    V2<T> l[3];
    for (int k = 0; k < 3; ++k) { l[k].x = x[8 + 2 * k]; l[k].y = x[9 + 2 * k]; }
    rc_interior(m, x[0], x[1], x + 2, x + 5, l, x[14], y);
}

// edge_flux from fi, fj, ci, cj (7 each) and n (2); out: 14.
template <typename T> __device__ __forceinline__ void probe_edge_flux_of(const Model<T>& m, const T* x, T* y) {
    Side<T> fi = probe_side(x), fj = probe_side(x + 7), ci = probe_side(x + 14), cj = probe_side(x + 21);
    auto mean_i = [&]() { return ci; };
    auto mean_j = [&]() { return cj; };
    probe_store_flux(rc_edge_flux(m, fi, fj, side_h1(m, ci), side_h2(m, ci), side_h1(m, cj), side_h2(m, cj), mean_i,
                                  mean_j, x[28], x[29]),
                     y);
}

// edge_boundary_flux from fi, ci (7 each), n (2) and t; out: 14.
template <typename T>
__device__ __forceinline__ void probe_edge_boundary_flux_of(const Model<T>& m, const Boundary<T>& b, const T* x, T* y) {
    Side<T> fi = probe_side(x), ci = probe_side(x + 7);
    auto mean_i = [&]() { return ci; };
    probe_store_flux(rc_edge_boundary_flux(m, b, fi, side_h1(m, ci), side_h2(m, ci), mean_i, x[14], x[15], x[16]), y);
}

#define PYCNO_PROBES(T, SUFFIX)                                                                                   \
    /* in: (h1, u1, h2, u2) per sample; out: lambda[4], hyperbolic */                                            \
    extern "C" __global__ void probe_eigenvalues_##SUFFIX(Model<T> m, const T* in, T* out, int n) {              \
        int k = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (k >= n) return;                                                                                       \
        const T* x = in + 4 * k;                                                                                  \
        Eigenvalues<T> e = eigenvalues(m.g, m.r, x[0], x[1], x[2], x[3]);                                         \
        for (int l = 0; l < 4; ++l) out[5 * k + l] = e.lambda[l];                                                 \
        out[5 * k + 4] = e.hyperbolic ? T(1) : T(0);                                                              \
    }                                                                                                             \
    /* in: wi (7), wj (7), n (2) per sample; out: 14 */                                                          \
    extern "C" __global__ void probe_flux_##SUFFIX(Model<T> m, const T* in, T* out, int n) {                     \
        int k = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (k >= n) return;                                                                                       \
        const T* x = in + 16 * k;                                                                                 \
        probe_store_flux(numerical_flux(m, probe_side(x), probe_side(x + 7), x[14], x[15]), out + 14 * k);       \
    }                                                                                                             \
    /* in: inner (7), n (2), t per sample; out: ghost (7) and boundary flux (14) */                              \
    extern "C" __global__ void probe_boundary_##SUFFIX(Model<T> m, Boundary<T> b, const T* in, T* out, int n) {  \
        int k = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (k >= n) return;                                                                                       \
        const T* x = in + 10 * k;                                                                                 \
        Side<T> w = probe_side(x);                                                                                \
        probe_store_side(ghost(m, b, w, x[7], x[8], x[9]), out + 21 * k);                                        \
        probe_store_flux(boundary_flux(m, b, w, x[7], x[8], x[9]), out + 21 * k + 7);                            \
    }                                                                                                             \
    /* in: state (7), dt per sample; out: state after the sources (7) */                                         \
    extern "C" __global__ void probe_source_##SUFFIX(Model<T> m, const T* in, T* out, int n) {                   \
        int k = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (k >= n) return;                                                                                       \
        const T* x = in + 8 * k;                                                                                  \
        Side<T> s = probe_side(x);                                                                                \
        source(m, s, x[7]);                                                                                       \
        probe_store_side(s, out + 7 * k);                                                                         \
    }                                                                                                             \
    /* in: state (6) per sample, extremes (8 doubles) per sample; out: 8 started from the state, 8 folded */     \
    extern "C" __global__ void probe_extremes_##SUFFIX(const T* in, const double* ext, double* out, int n, double t, \
                                                       double threshold, int surface) {                           \
        int k = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (k >= n) return;                                                                                       \
        const T* x = in + 6 * k;                                                                                  \
        Arrival a = {threshold, surface, 0};                                                                      \
        double* y = out + 16 * k;                                                                                 \
        ext_start(y, x[0], x[1], x[2], x[3], x[4], x[5], a);                                                      \
        for (int l = 0; l < E_WIDTH; ++l) y[8 + l] = ext[8 * k + l];                                              \
        ext_fold(y + 8, x[0], x[1], x[2], x[3], x[4], x[5], t, a);                                                \
    }                                                                                                             \
    /* in: state (7), lo (2) per sample; out: state after settle (7), lo (2), admissible */                    \
    extern "C" __global__ void probe_settle_##SUFFIX(Model<T> m, const T* in, T* out, int n) {                   \
        int k = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (k >= n) return;                                                                                       \
        const T* x = in + 9 * k;                                                                                  \
        Side<T> s = probe_side(x);                                                                                \
        T lo1 = x[7], lo2 = x[8];                                                                                 \
        bool ok = settle(m, s, lo1, lo2);                                                                         \
        probe_store_side(s, out + 10 * k);                                                                        \
        out[10 * k + 7] = lo1; out[10 * k + 8] = lo2; out[10 * k + 9] = ok ? T(1) : T(0);                         \
    }                                                                                                             \
    /* in: 53 per sample (probe_cell); out: gradients (12), faces (18) */                                          \
    extern "C" __global__ void probe_reconstruct_##SUFFIX(Model<T> m, const T* in, T* out, int n) {               \
        int k = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (k >= n) return;                                                                                       \
        probe_cell(m, in + 53 * k, out + 30 * k);                                                                 \
    }                                                                                                             \
    /* in: u (6), depth, area, gradients (12) per sample; out: 6 */                                              \
    extern "C" __global__ void probe_interior_##SUFFIX(Model<T> m, const T* in, T* out, int n) {                  \
        int k = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (k >= n) return;                                                                                       \
        probe_interior_of(m, in + 15 * k, out + 6 * k);                                                           \
    }                                                                                                             \
    /* in: fi, fj, ci, cj (7 each), n (2) per sample; out: 14 */                                                 \
    extern "C" __global__ void probe_edge_flux_##SUFFIX(Model<T> m, const T* in, T* out, int n) {                 \
        int k = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (k >= n) return;                                                                                       \
        probe_edge_flux_of(m, in + 30 * k, out + 14 * k);                                                         \
    }                                                                                                             \
    /* in: fi, ci (7 each), n (2), t per sample; out: 14 */                                                      \
    extern "C" __global__ void probe_edge_boundary_flux_##SUFFIX(Model<T> m, Boundary<T> b, const T* in, T* out,  \
                                                                 int n) {                                         \
        int k = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (k >= n) return;                                                                                       \
        probe_edge_boundary_flux_of(m, b, in + 17 * k, out + 14 * k);                                             \
    }                                                                                                             \
    /* out: sizeof(Model<T>), sizeof(Boundary<T>), sizeof(Arrays<T>), sizeof(Order2Arrays<T>) as seen by the    \
       compiler */                                                                                                \
    extern "C" __global__ void probe_sizes_##SUFFIX(long long* out) {                                             \
        out[0] = sizeof(Model<T>);                                                                                \
        out[1] = sizeof(Boundary<T>);                                                                             \
        out[2] = sizeof(Arrays<T>);                                                                               \
        out[3] = sizeof(Order2Arrays<T>);                                                                         \
    }

PYCNO_PROBES(float, f32)
PYCNO_PROBES(double, f64)
