// The four phases of a step on the GPU (de la Asunción et al. 2012, section 5): the edge
// pass (one thread per edge, writing its two cells' accumulator slots), the per-volume time
// step with its minimum, and the volume update. Kernels are extern "C" and named
// {op}_{dtype}; each takes the layout's arrays as one struct (Arrays, mirrored by
// DeviceArrays in src/solver/cuda/launch.rs) and the model as another. The host side is
// src/solver/cuda/.
//
// Layout (src/solver/layout.rs): v1 = (d1, q1x, q1y, H), v2 = (d2, q2x, q2y, area), the
// thicknesses stored as deviations from the reference rest state; lo = (d1_lo, d2_lo), their
// low parts, which only the update reads and writes;
// ecells = (i, j, slot_i, slot_j) with j = -1 on a boundary, where the fourth int is the
// boundary table index; enormal = n * L;
// acc[(2 * slot + layer) * stride + cell] = (M1, M2, M3, Z) / (M4, M5, M6, 0), Z >= 0; an edge
// with no water on either side (dry_edge in wetdry.cuh) writes only its layer-1 words, with
// Z = -1 (a quiet slot): the layer-2 word then reads as the same zeros (+0 for the edge's
// first cell, -0 = -(len * 0) for its second: the sums are the bits of the words written).
// scratch[0] = bits of the minimum dt (atomicMin on the bit pattern of a positive float),
// scratch[1] = "a cell went unphysical", scratch[2] = hyperbolicity fallbacks.

template <typename T> struct Arrays {
    const V4<T>* v1;  // the state this step reads
    const V4<T>* v2;
    V4<T>* o1;        // the state the update writes (the host then swaps the pairs)
    V4<T>* o2;
    const V2<T>* lo;  // low parts of the owned cells' deviations, read by the update
    V2<T>* olo;       // and written here (swapped likewise)
    const int4* ecells;
    const V2<T>* enormal;
    V4<T>* acc;
    const Boundary<T>* boundaries;
    unsigned long long* scratch;
    long long stride;  // cells in the layout: the accumulators' stride
    int n_owned;
    int reserved;
    const T* coriolis;  // each owned cell's Coriolis parameter on a beta-plane
    const T* evisc;     // each edge's viscous coupling (Layout::edge_viscosity); null: no viscosity
};

template <typename T>
__device__ __forceinline__ Side<T> load_side(const V4<T>& a, const V4<T>& b) {
    Side<T> s;
    s.d1 = a.x; s.q1x = a.y; s.q1y = a.z; s.depth = a.w;
    s.d2 = b.x; s.q2x = b.y; s.q2y = b.z;
    return s;
}

// The device functions take the arrays as __restrict__ parameters (the kernels below unpack
// Arrays into them): after inlining, the compiler keeps the no-aliasing facts, which let it
// read through the read-only cache.
// VISC: the horizontal viscosity's kernel (edge_visc_*), taken only by a run with viscosity.
// A kernel of its own, so that a run without it runs the code it ran before the viscosity
// came: with the branch compiled in, order 1's edge pass was 4.4% slower on an H200 without
// ever taking it (registers and code size).
template <typename T, bool VISC>
__device__ __forceinline__ void edge_kernel(const V4<T>* __restrict__ v1, const V4<T>* __restrict__ v2,
                                            const int4* __restrict__ ecells, const V2<T>* __restrict__ enormal,
                                            const Boundary<T>* __restrict__ boundaries, V4<T>* __restrict__ acc,
                                            long long stride, int e_begin, int e_end, const Model<T>& m, T t,
                                            unsigned long long* __restrict__ scratch,
                                            const T* __restrict__ evisc) {
    int e = e_begin + blockIdx.x * blockDim.x + threadIdx.x;
    bool fallback = false;
    if (e < e_end) {
        int4 ec = ecells[e];
        V2<T> nl = enormal[e];
        T len = rt_sqrt(nl.x * nl.x + nl.y * nl.y);
        T nx = nl.x / len, ny = nl.y / len;
        Side<T> wi = load_side(v1[ec.x], v2[ec.x]);
        // A boundary edge's other side is its ghost: one numerical_flux for both kinds of
        // edge (boundary_flux's arithmetic), so that a warp holding both runs the flux once
        // instead of one inlined copy after the other.
        Side<T> wj = ec.y < 0 ? ghost(m, boundaries[ec.w], wi, nx, ny, t) : load_side(v1[ec.y], v2[ec.y]);
        if (ec.y >= 0 && dry_edge(m, wi, wj)) {
            // Dry land on both sides: two quiet words instead of four (the mostly-dry speed-up
            // of issue 17; the update and the time step know them by Z < 0).
            V4<T> a = {T(0), T(0), T(0), T(-1)};
            V4<T> c = {-T(0), -T(0), -T(0), T(-1)};
            acc[(2 * ec.z) * stride + ec.x] = a;
            acc[(2 * ec.w) * stride + ec.y] = c;
        } else {
            EdgeFlux<T> f = numerical_flux(m, wi, wj, nx, ny);
            if (ec.y < 0) {
                boundary_mass(boundaries[ec.w], f);
                wall_leaving_cap(m, boundaries[ec.w], wi, nx, ny, f);
            }
            T z = len * f.speed;
            V4<T> a = {len * f.i[0], len * f.i[1], len * f.i[2], z};
            V4<T> b = {len * f.i[3], len * f.i[4], len * f.i[5], T(0)};
            // The viscous stress between the cells' means (viscosity.cuh; k is 0 on a boundary
            // edge).
            T k = VISC ? evisc[e] : T(0);
            if (VISC && k > T(0)) {
                V4<T> c = {-(len * f.j[0]), -(len * f.j[1]), -(len * f.j[2]), z};
                V4<T> d = {-(len * f.j[3]), -(len * f.j[4]), -(len * f.j[5]), T(0)};
                // The cells' states read again rather than held through the flux (the
                // registers an inviscid run would pay for).
                add_viscosity(m, load_side(v1[ec.x], v2[ec.x]), load_side(v1[ec.y], v2[ec.y]), k, a, b, c, d);
                acc[(2 * ec.z) * stride + ec.x] = a;
                acc[(2 * ec.z + 1) * stride + ec.x] = b;
                acc[(2 * ec.w) * stride + ec.y] = c;
                acc[(2 * ec.w + 1) * stride + ec.y] = d;
            } else {
                acc[(2 * ec.z) * stride + ec.x] = a;
                acc[(2 * ec.z + 1) * stride + ec.x] = b;
                if (ec.y >= 0) {
                    V4<T> c = {-(len * f.j[0]), -(len * f.j[1]), -(len * f.j[2]), z};
                    V4<T> d = {-(len * f.j[3]), -(len * f.j[4]), -(len * f.j[5]), T(0)};
                    acc[(2 * ec.w) * stride + ec.y] = c;
                    acc[(2 * ec.w + 1) * stride + ec.y] = d;
                }
            }
            fallback = f.fallback;
        }
    }
    unsigned int n = __popc(__ballot_sync(0xffffffffu, fallback));
    if ((threadIdx.x & 31) == 0 && n != 0) atomicAdd(&scratch[2], (unsigned long long)n);
}

__device__ __forceinline__ unsigned long long min_bits(float x) { return (unsigned long long)__float_as_uint(x); }
__device__ __forceinline__ unsigned long long min_bits(double x) { return (unsigned long long)__double_as_longlong(x); }

// The layer-2 word a quiet slot (its layer-1 word w1 has Z < 0) stands for: w1's zeros.
template <typename T> __device__ __forceinline__ V4<T> quiet_layer2(const V4<T>& w1) {
    V4<T> w = {w1.x, w1.y, w1.z, T(0)};
    return w;
}
// A slot's layer-2 word, given its layer-1 word w1: read at `at` unless the slot is quiet.
template <typename T>
__device__ __forceinline__ V4<T> layer2_word(const V4<T>* __restrict__ acc, const V4<T>& w1, long long at) {
    if (w1.w < T(0)) return quiet_layer2(w1);
    return acc[at];
}
// A slot's Z (+0 for a quiet slot; a NaN stays NaN).
template <typename T> __device__ __forceinline__ T slot_z(T z) { return z < T(0) ? T(0) : z; }
// A cell's three slots' Z (the layer-1 words' fourth lanes) summed as the time step sums them,
// (slot 0 + slot 1) + slot 2: here once for the time-step kernel and the first stage's tiles at
// order 2 (order2.cu, TILE_SUMS), which must give the same bits.
template <typename T> __device__ __forceinline__ T slots_z(T z0, T z2, T z4) {
    return slot_z(z0) + slot_z(z2) + slot_z(z4);
}

// A cell's time step as the bits the minimum compares, from its slots' Z summed (slots_z) and
// its area; ~0 where there is none. Also taken by the first stage's tiles at order 2 for the
// cells they sum (order2.cu, TILE_SUMS).
template <typename T> __device__ __forceinline__ unsigned long long cell_dt_from(T z, T area, T two_gamma) {
    T dt = two_gamma * area / z;
    return dt > T(0) ? min_bits(dt) : ~0ull;
}

// Cell c's time step 2 gamma |V_c| / Z_c as the bits of a positive float (~0: none).
// Positive floats order like their bit patterns; NaN (bits above +inf) never wins.
template <typename T>
__device__ __forceinline__ unsigned long long cell_dt_bits(const V4<T>* __restrict__ v2, const V4<T>* __restrict__ acc,
                                                           long long stride, long long c, T two_gamma) {
    return cell_dt_from(slots_z(acc[c].w, acc[2 * stride + c].w, acc[4 * stride + c].w), v2[c].w, two_gamma);
}

// The minimum of every thread's `bits` over the block, valid in thread 0 (every thread of
// the block must call it).
__device__ __forceinline__ unsigned long long block_min_bits(unsigned long long bits) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        unsigned long long other = __shfl_down_sync(0xffffffffu, bits, off);
        bits = other < bits ? other : bits;
    }
    __shared__ unsigned long long warp_min[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_min[warp] = bits;
    __syncthreads();
    if (warp == 0) {
        bits = lane < (blockDim.x + 31) / 32 ? warp_min[lane] : ~0ull;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            unsigned long long other = __shfl_down_sync(0xffffffffu, bits, off);
            bits = other < bits ? other : bits;
        }
    }
    return bits;
}

// The minimum of bits_of(i) over 0..n into scratch[0], a thread each.
template <typename F>
__device__ __forceinline__ void dt_min_kernel(int n, unsigned long long* __restrict__ scratch, F bits_of) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long bits = block_min_bits(i < n ? bits_of(i) : ~0ull);
    if (threadIdx.x == 0) atomicMin(&scratch[0], bits);
}
// Over cells 0..n.
template <typename T>
__device__ __forceinline__ void dt_kernel(const V4<T>* __restrict__ v2, const V4<T>* __restrict__ acc, long long stride,
                                          int n, T two_gamma, unsigned long long* __restrict__ scratch) {
    dt_min_kernel(n, scratch, [&](int i) { return cell_dt_bits(v2, acc, stride, i, two_gamma); });
}

// What an update reads of a cell: its stored state, its low parts and its slots' layer-1 words
// (the layer-2 words follow: a quiet slot has none). Split from the update so that the
// device-resident update can issue these loads with its control block's (resident.cu).
template <typename T> struct CellWords {
    V4<T> a, b;
    V2<T> l;
    V4<T> s0, s2, s4;
};
template <typename T>
__device__ __forceinline__ CellWords<T> cell_words(const V4<T>* __restrict__ v1, const V4<T>* __restrict__ v2,
                                                   const V2<T>* __restrict__ lo, const V4<T>* __restrict__ acc,
                                                   long long stride, int c) {
    CellWords<T> w;
    w.a = v1[c];
    w.b = v2[c];
    w.l = lo[c];
    w.s0 = acc[c];
    w.s2 = acc[2 * stride + c];
    w.s4 = acc[4 * stride + c];
    return w;
}

// A cell's update in registers: its stored state (a, b) and low parts l, its slots' layer-1
// words (s0, s2, s4) and layer-2 words (t1, t3, t5), the step dt and its Coriolis parameter;
// false if the new state is not admissible. Shared by the update of an owned cell and that of
// a neighbour's cell from the words its owner sent (peer.cu), so both give the same bits.
template <typename T>
__device__ __forceinline__ bool update_state(V4<T>& a, V4<T>& b, V2<T>& l, const V4<T>& s0, const V4<T>& s2,
                                             const V4<T>& s4, const V4<T>& t1, const V4<T>& t3, const V4<T>& t5,
                                             const Model<T>& m, T dt, T coriolis) {
    // Correctly rounded, as on the CPU, whatever --prec-div says: the update is where mass
    // changes, and the fast division's rounding is biased enough to show in the mass of a
    // 10^6-cell float32 run.
    T k = div_rn(dt, b.w);
    // Same association as the CPU: (slot 0 + slot 1) + slot 2. The thickness deviations
    // take their increment with the low parts (exactly, whatever its size), rounded as on
    // the CPU (no fused multiply-add).
    add_compensated(a.x, l.x, -mul_rn(k, s0.x + s2.x + s4.x), a.x, l.x);
    add_compensated(b.x, l.y, -mul_rn(k, t1.x + t3.x + t5.x), b.x, l.y);
    a.y = a.y - k * (s0.y + s2.y + s4.y);
    a.z = a.z - k * (s0.z + s2.z + s4.z);
    b.y = b.y - k * (t1.y + t3.y + t5.y);
    b.z = b.z - k * (t1.z + t3.z + t5.z);
    Side<T> s = load_side(a, b);
    if (has_sources(m)) source_at(m, s, dt, coriolis);
    // Vanishing layers and the admissibility check (wetdry.cuh).
    bool ok = settle(m, s, l.x, l.y);
    a.x = s.d1; a.y = s.q1x; a.z = s.q1y;
    b.x = s.d2; b.y = s.q2x; b.z = s.q2y;
    return ok;
}

// Cell c's Coriolis parameter as its update takes it: the per-cell array's on a beta-plane
// (read only where sources are on), else the model's f (also sent with a cell's ghost words,
// peer.cu).
template <typename T>
__device__ __forceinline__ T cell_coriolis(const Model<T>& m, const T* __restrict__ coriolis, int c) {
    return has_sources(m) && m.coriolis_per_cell ? coriolis[c] : m.coriolis_f;
}

// Cell c's update from its words `w` (cell_words): reads the layer-2 words, writes (o1, o2,
// olo). The host swaps the two buffer sets after each update, so the state before the last
// update stays available (the last good state of a blow-up).
template <typename T>
__device__ __forceinline__ void update_cell(CellWords<T> w, int c, V4<T>* __restrict__ o1, V4<T>* __restrict__ o2,
                                            V2<T>* __restrict__ olo, const V4<T>* __restrict__ acc, long long stride,
                                            const Model<T>& m, T dt, unsigned long long* __restrict__ scratch,
                                            const T* __restrict__ coriolis) {
    V4<T> a = w.a, b = w.b;
    V2<T> l = w.l;
    V4<T> t1 = layer2_word(acc, w.s0, stride + c), t3 = layer2_word(acc, w.s2, 3 * stride + c),
          t5 = layer2_word(acc, w.s4, 5 * stride + c);
    bool ok = update_state(a, b, l, w.s0, w.s2, w.s4, t1, t3, t5, m, dt, cell_coriolis(m, coriolis, c));
    o1[c] = a;
    o2[c] = b;
    olo[c] = l;
    if (!ok) atomicOr(&scratch[1], 1ull);
}

// Reads (v1, v2, lo) and writes (o1, o2, olo) (update_cell).
template <typename T>
__device__ __forceinline__ void update_kernel(const V4<T>* __restrict__ v1, const V4<T>* __restrict__ v2,
                                              const V2<T>* __restrict__ lo, V4<T>* __restrict__ o1,
                                              V4<T>* __restrict__ o2, V2<T>* __restrict__ olo,
                                              const V4<T>* __restrict__ acc, long long stride, int n,
                                              const Model<T>& m, T dt, unsigned long long* __restrict__ scratch,
                                              const T* __restrict__ coriolis) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c == 0) scratch[0] = ~0ull;  // reset the dt minimum for the next step
    if (c >= n) return;
    update_cell(cell_words(v1, v2, lo, acc, stride, c), c, o1, o2, olo, acc, stride, m, dt, scratch, coriolis);
}

// The per-cell extremes (kernels/extremes.cuh) of the owned cells, kept in double, one array
// per quantity (ext[k * n + c]), so that neighbouring threads read neighbouring words: start
// them from the state (start != 0) or fold the state at time t into them. Run after an
// update, on the same stream, when output.max_maps asks for them.
template <typename T>
__device__ __forceinline__ void extremes_kernel(const V4<T>* __restrict__ v1, const V4<T>* __restrict__ v2,
                                                const V2<T>* __restrict__ lo, const double* __restrict__ depth,
                                                double ref_h1, double ref_interface, double* __restrict__ ext, int n,
                                                double t, Arrival arr, int start) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    V4<T> a = v1[c], b = v2[c];
    V2<T> l = lo[c];
    // The thicknesses as the frames compute them (StoredCell::state in src/physics/state.rs):
    // in double, from the deviations, their low parts, the rest state and the depth.
    double h1 = __dadd_rn(ref_h1, __dadd_rn((double)a.x, (double)l.x));
    double h2 = __dadd_rn(__dadd_rn(depth[c], ref_interface), __dadd_rn((double)b.x, (double)l.y));
    double e[E_WIDTH];
    if (start) {
        ext_start<double>(e, h1, (double)a.y, (double)a.z, h2, (double)b.y, (double)b.z, arr);
    } else {
#pragma unroll
        for (int k = 0; k < E_WIDTH; k++) e[k] = ext[(long long)k * n + c];
        ext_fold<double>(e, h1, (double)a.y, (double)a.z, h2, (double)b.y, (double)b.z, t, arr);
    }
#pragma unroll
    for (int k = 0; k < E_WIDTH; k++) ext[(long long)k * n + c] = e[k];
}

// The mass through each open boundary edge this step (Layout::open_edges, add_to_budget in
// src/solver/layout.rs): open = (cell, slot, entry) per edge, budget = (in1, out1, in2, out2)
// per edge in double; dt is the step rounded to T and widened, as on the CPU. Each thread
// owns its edge's four words: no atomics, the same sums as the CPU's.
template <typename T>
__device__ __forceinline__ void budget_kernel(const V4<T>* __restrict__ acc, long long stride,
                                              const int* __restrict__ open, double* __restrict__ budget, int n,
                                              double dt) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    int c = open[3 * k], s = open[3 * k + 1];
    double f[2] = {(double)acc[(2 * s) * stride + c].x, (double)acc[(2 * s + 1) * stride + c].x};
    for (int layer = 0; layer < 2; ++layer) {
        double v = __dmul_rn(f[layer], dt);
        if (v < 0.0) budget[4 * k + 2 * layer] = __dsub_rn(budget[4 * k + 2 * layer], v);
        else budget[4 * k + 2 * layer + 1] = __dadd_rn(budget[4 * k + 2 * layer + 1], v);
    }
}

#define PYCNO_KERNELS(T, SUFFIX)                                                                                  \
    extern "C" __global__ void edge_##SUFFIX(Arrays<T> a, Model<T> m, int e_begin, int e_end, T t) {             \
        edge_kernel<T, false>(a.v1, a.v2, a.ecells, a.enormal, a.boundaries, a.acc, a.stride, e_begin, e_end, m, \
                              t, a.scratch, a.evisc);                                                            \
    }                                                                                                             \
    extern "C" __global__ void edge_visc_##SUFFIX(Arrays<T> a, Model<T> m, int e_begin, int e_end, T t) {        \
        edge_kernel<T, true>(a.v1, a.v2, a.ecells, a.enormal, a.boundaries, a.acc, a.stride, e_begin, e_end, m,  \
                             t, a.scratch, a.evisc);                                                             \
    }                                                                                                             \
    extern "C" __global__ void dt_##SUFFIX(Arrays<T> a, T two_gamma) {                                           \
        dt_kernel<T>(a.v2, a.acc, a.stride, a.n_owned, two_gamma, a.scratch);                           \
    }                                                                                                             \
    extern "C" __global__ void update_##SUFFIX(Arrays<T> a, Model<T> m, T dt) {                                  \
        update_kernel<T>(a.v1, a.v2, a.lo, a.o1, a.o2, a.olo, a.acc, a.stride, a.n_owned, m, dt,       \
                         a.scratch, a.coriolis);                                                                 \
    }                                                                                                             \
    extern "C" __global__ void budget_##SUFFIX(Arrays<T> a, const int* open, double* budget, int n, double dt) {  \
        budget_kernel<T>(a.acc, a.stride, open, budget, n, dt);                                                   \
    }                                                                                                             \
    extern "C" __global__ void extremes_##SUFFIX(Arrays<T> a, double* ext, const double* depth,                    \
                                                 double ref_h1, double ref_interface, double t, double threshold, \
                                                 int surface, int start) {                                        \
        Arrival arr = {threshold, surface, 0};                                                                    \
        extremes_kernel<T>(a.v1, a.v2, a.lo, depth, ref_h1, ref_interface, ext, a.n_owned, t, arr, start);       \
    }

PYCNO_KERNELS(float, f32)
PYCNO_KERNELS(double, f64)
