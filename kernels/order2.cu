// Second order on the GPU (physics.order = 2, issue 21): the mirror of
// CpuBackend's order-2 reconstruct, process_edges and stage_update (src/solver/cpu.rs) over
// the physics of reconstruct.cuh. A stage is three launches (four at the first stage, with the
// time step of solver.cu): reconstruct, edge2, (dt), update2. The host side is
// src/solver/cuda/order2.rs; Order2Arrays is mirrored there by Order2Device. The host drives
// these kernels step by step; the device-resident steps (resident.cu, PYCNO_RESIDENT2) call
// the same functions under the control block.
//
// Device layout, chosen for the bytes each kernel moves (float size s; per cell, with about
// 1.5 edges per cell; src/solver/layout.rs kernel_bytes counts them):
// - faces[6 * cell + 2 * slot + layer] = (d1, q1x, q1y, h1) / (d2, q2x, q2y, h2): the cell's
//   reconstructed stored numbers at the midpoint of its edge `slot`. An edge reads the two
//   records of each of its cells' slots, each with an aligned vector load: adjacent, they are
//   one 32-byte sector in float32 (two in float64), all of it used, where slot-major records
//   (like the accumulators) would put them in two sectors, each half used unless the next
//   cell's edge at the same slot comes while it is cached (the array, 96 MB at 10^6 cells,
//   does not fit the L2). The reconstruction writes a cell's six records together (a warp's
//   stores cover 3 KB contiguously). The fourth lane holds the cell's MEAN thickness
//   of that layer (side_h1, side_h2 of its state): what the positivity check of edge_flux
//   compares the mass flux with, which the edge kernel would otherwise read from v1 and v2
//   (2 x 4s per side). Only where that check fails (rare: steep fronts) are the means read.
// - interior[cell] = (layer-1 x, y, layer-2 x, y): the cell-interior term, written by the
//   reconstruction (it depends only on the stage's input state and the gradients) and added
//   by the update, which so never reads gradients (4s instead of 12s).
// - across[3 * cell + slot] (Layout::across), wr[slot * n_cells + cell] = (w_x, w_y, r_x, r_y)
//   (the stencil's least-squares weights and midpoint offset, one vector load per slot),
//   ln[slot * n_cells + cell] (outward normal times length: read only at boundary slots,
//   where the ghost needs the normal), depth[cell] (constant: the edge kernel's Side.depth,
//   s per cell instead of the 4s record of v1), recon[cell] (which reconstruction covers the
//   cell: layout::reconstruction_sets; on several ranks the receive block's first ring is
//   reconstructed here too, from the same numbers as on its owner, and the inner cells while
//   the halo travels). Every local cell has its entries.
// Bytes per cell (f32): reconstruct 12 + 48s = 204 (v1, v2 of the cell, its neighbours' from
// cache; across; wr; faces and interior written); edge2 about 1.5 (16 + 2s) + 25s + 3 x 8s =
// 232 (ecells, enormal, faces and depth read, accumulators written); update2 48s = 192 at
// stage 1 (the first order's 44s and the interior term) and 58s = 232 at stage 2 (also the
// step's start, read from the buffers it then writes).
//
// Buffer sets, as on the CPU (which keeps the stage's start in `other` and swaps): stage 1
// reads (v1, v2, lo) = W_n and writes (o1, o2, olo) = W*, then the host swaps: v = W*,
// o = W_n. Stage 2 reads v = W* and the step's start from o = W_n, and writes W_{n+1} over it
// in place (each thread reads its cell's start before writing it), then the host swaps:
// v = W_{n+1}, o = W* (previous_state, as on the CPU).

template <typename T> struct Order2Arrays {
    V4<T>* faces;                // faces[6 * cell + 2 * slot + layer]
    V4<T>* interior;             // interior[cell]
    const int* across;           // across[3 * cell + slot]
    const V4<T>* wr;             // wr[slot * n_cells + cell] = (w_x, w_y, r_x, r_y)
    const V2<T>* ln;             // ln[slot * n_cells + cell] = outward normal times length
    const T* depth;              // depth[cell]
    const unsigned char* recon;  // recon[cell]: 1 inner, 2 outer, 0 not reconstructed
    long long n_cells;
};

// The cells the device-resident steps' tiles neither sum nor finish (tile2_kernel: those with a
// boundary edge or with edges in two or three tiles, 14% of them at 10^6 cells), and their
// words in the list's order: the tiles write a listed cell's slot words and interior term at
// its index k in the list, so that the time step and the updates that take the list read them
// in order (a 16-byte word per warp lane, all of each sector used) where at the cell's own
// index each took a sector of its own. The list's areas are copied once (the state's v2.w).
template <typename T> struct RestArrays {
    const int* cells;  // cells[k]: the listed cells, ascending; null: no list
    V4<T>* acc;        // acc[(2 * slot + layer) * n + k]: as the accumulators' words
    V4<T>* interior;   // interior[k]
    const T* area;     // area[k]
    int n;
};

// Listed cell k's time step (cell_dt_bits of its words in the list's order).
template <typename T> __device__ __forceinline__ unsigned long long rest_dt_bits(const RestArrays<T>& r, int k, T two_gamma) {
    return cell_dt_from(slots_z(r.acc[k].w, r.acc[2 * (long long)r.n + k].w, r.acc[4 * (long long)r.n + k].w),
                        r.area[k], two_gamma);
}

// The side of a cell at an edge midpoint from its two face records over its depth.
template <typename T> __device__ __forceinline__ Side<T> face_side(const V4<T>& f1, const V4<T>& f2, T depth) {
    Side<T> s;
    s.d1 = f1.x; s.q1x = f1.y; s.q1y = f1.z;
    s.d2 = f2.x; s.q2x = f2.y; s.q2y = f2.z;
    s.depth = depth;
    return s;
}

// Cell c's limited reconstruction (rc_cell) from its records and its neighbours' (ghosts at
// boundary slots; o[k] = across[3 * c + k], loaded by the caller), written as its three slots'
// face records (out[2 * slot + layer]) with its mean thicknesses in the fourth lanes, and its
// cell-interior term (*interior), and its area (*area, where asked for). Returns the cell's
// depth (the edges' Side.depth).
template <typename T>
__device__ __forceinline__ T reconstruct_cell(const V4<T>* __restrict__ v1, const V4<T>* __restrict__ v2,
                                              const V4<T>* __restrict__ wr, const V2<T>* __restrict__ ln,
                                              long long n, int c, const int* o, const Model<T>& m, V4<T>* out,
                                              V4<T>* interior, T* area = nullptr) {
    V4<T> a = v1[c], b = v2[c];
    if (area != nullptr) *area = b.w;
    V4<T> na[3], nb[3];
    V2<T> l[3];
    T w[3][2], r[3][2];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        na[k] = a; nb[k] = b;
        l[k].x = T(0); l[k].y = T(0);
        if (o[k] >= 0) {
            na[k] = v1[o[k]];
            nb[k] = v2[o[k]];
        } else {
            l[k] = ln[(long long)k * n + c];
        }
    }
    // A quiet cell (rc_quiet: rc_cell returns at once) reads no stencil: most of a basin before
    // the waves arrive (3% off the step at 10^6 cells on an H200, also when most cells move;
    // BENCHMARKS.md, issue 21). The others ask for it after their neighbours' states.
    const bool quiet = rc_quiet(a, b, o, na, nb);
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        V4<T> s = {T(0), T(0), T(0), T(0)};
        if (!quiet) {
            s = wr[(long long)k * n + c];
            // Every slot's normal times length: the interior term's (boundary slots' already).
            if (o[k] >= 0) l[k] = ln[(long long)k * n + c];
        }
        w[k][0] = s.x; w[k][1] = s.y; r[k][0] = s.z; r[k][1] = s.w;
    }
    T g[RC_VARS][2], f[3][RC_VARS];
    rc_cell(m, a, b, o, na, nb, w, r, l, g, f);
    // The mean thicknesses, as side_h1 and side_h2 compute them (the positivity check).
    T h1 = a.x + m.ref_h1, h2 = (b.x + m.ref_interface) + a.w;
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        V4<T> f1 = {f[k][0], f[k][1], f[k][2], h1};
        V4<T> f2 = {f[k][3], f[k][4], f[k][5], h2};
        out[2 * k] = f1;
        out[2 * k + 1] = f2;
    }
    // The interior term from the faces, as the CPU's update takes it (a quiet cell's is zero:
    // its faces are its stored numbers, whatever l holds).
    T fd1[3] = {f[0][0], f[1][0], f[2][0]}, fd2[3] = {f[0][3], f[1][3], f[2][3]};
    T e[RC_VARS];
    rc_interior(m, a.x, b.x, fd1, fd2, l, a.w, e);
    V4<T> in = {e[1], e[2], e[4], e[5]};
    *interior = in;
    return a.w;
}

// One thread per cell of begin..end whose recon bits meet `want` (reconstruct_cell).
template <typename T>
__device__ __forceinline__ void reconstruct_kernel(const V4<T>* __restrict__ v1, const V4<T>* __restrict__ v2,
                                                   const int* __restrict__ across, const V4<T>* __restrict__ wr,
                                                   const V2<T>* __restrict__ ln, const unsigned char* __restrict__ recon,
                                                   V4<T>* __restrict__ faces, V4<T>* __restrict__ interior,
                                                   long long n, int begin, int end, int want, const Model<T>& m) {
    int c = begin + blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= end || (recon[c] & want) == 0) return;
    int o[3] = {across[3 * c], across[3 * c + 1], across[3 * c + 2]};
    reconstruct_cell(v1, v2, wr, ln, n, c, o, m, faces + 6 * (long long)c, interior + c);
}

// Edge ec (normal times length nl): edge_flux (or edge_boundary_flux) between the face
// records fi of its cell i and fj of its cell j (each a cell's six records; fj and dj unused at
// a boundary) over their depths di and dj, written to the accumulators as the first-order edge kernel writes them; whether
// the flux fell back to hyperbolicity's. An interior edge whose face records hold no water on
// either side writes the two quiet words of solver.cu: the CPU's edge_flux then takes
// numerical_flux of those records, dry_flux's first return (all zeros, speed 0), which the
// positivity check passes, so the zeros the quiet words stand for are the CPU's words bit for
// bit (+0 for cell i, -0 = -(len * 0) for cell j, Z = 0). The words go to put(ec, side, quiet,
// w1, w2): cell i's (side 0) and cell j's (side 1, none at a boundary) slot words, w2 the
// layer-2 word (a quiet edge's: the zeros its quiet w1 stands for); acc_put stores them. The
// stores take the edge's entry from again() (ec once more): the tile kernel reads it from
// shared memory again rather than keep it through the flux, where the register cap would spill
// it.
template <typename T, typename Visc, typename Again, typename Put>
__device__ __forceinline__ bool edge2_at(const V4<T>* __restrict__ v1, const V4<T>* __restrict__ v2, int4 ec,
                                         V2<T> nl, const Boundary<T>* __restrict__ boundaries, const V4<T>* fi_rec,
                                         const V4<T>* fj_rec, T di, T dj, const Model<T>& m, T t, Visc visc,
                                         Again again, Put put) {
    T len = rt_sqrt(nl.x * nl.x + nl.y * nl.y);
    T nx = nl.x / len, ny = nl.y / len;
    V4<T> a1 = fi_rec[2 * ec.z], a2 = fi_rec[2 * ec.z + 1];
    Side<T> fi = face_side(a1, a2, di);
    // The means, read only where the positivity check fails.
    auto ci = [&]() { return load_side(v1[ec.x], v2[ec.x]); };
    EdgeFlux<T> f;
    bool quiet = false;
    if (ec.y < 0) {
        f = rc_edge_boundary_flux(m, boundaries[ec.w], fi, a1.w, a2.w, ci, nx, ny, t);
    } else {
        V4<T> b1 = fj_rec[2 * ec.w], b2 = fj_rec[2 * ec.w + 1];
        Side<T> fj = face_side(b1, b2, dj);
        auto cj = [&]() { return load_side(v1[ec.y], v2[ec.y]); };
        quiet = dry_edge(m, fi, fj);
        if (!quiet) f = rc_edge_flux(m, fi, fj, a1.w, a2.w, b1.w, b2.w, ci, cj, nx, ny);
    }
    ec = again();
    if (quiet) {
        V4<T> qa = {T(0), T(0), T(0), T(-1)}, qb = {T(0), T(0), T(0), T(0)};
        V4<T> qc = {-T(0), -T(0), -T(0), T(-1)}, qd = {-T(0), -T(0), -T(0), T(0)};
        put(ec, 0, true, qa, qb);
        put(ec, 1, true, qc, qd);
        return false;
    }
    T z = len * f.speed;
    V4<T> wa = {len * f.i[0], len * f.i[1], len * f.i[2], z};
    V4<T> wb = {len * f.i[3], len * f.i[4], len * f.i[5], T(0)};
    // The viscous stress between the cells' means (viscosity.cuh): visc() is the edge's
    // coupling, 0 without viscosity and on a boundary edge, read only now (not held through
    // the flux under the tile kernel's register cap); in a branch of its own, as in solver.cu's
    // edge kernel.
    T kv = visc();
    if (kv > T(0)) {
        V4<T> wc = {-(len * f.j[0]), -(len * f.j[1]), -(len * f.j[2]), z};
        V4<T> wd = {-(len * f.j[3]), -(len * f.j[4]), -(len * f.j[5]), T(0)};
        add_viscosity(m, ci(), load_side(v1[ec.y], v2[ec.y]), kv, wa, wb, wc, wd);
        put(ec, 0, false, wa, wb);
        put(ec, 1, false, wc, wd);
        return f.fallback;
    }
    put(ec, 0, false, wa, wb);
    if (ec.y >= 0) {
        V4<T> wc = {-(len * f.j[0]), -(len * f.j[1]), -(len * f.j[2]), z};
        V4<T> wd = {-(len * f.j[3]), -(len * f.j[4]), -(len * f.j[5]), T(0)};
        put(ec, 1, false, wc, wd);
    }
    return f.fallback;
}

// A slot's words in accumulators of stride `stride` at index `at` (slot_put: a cell's, or a
// listed cell's in RestArrays), and edge ec's for its side `side` (acc_put: 0, cell ec.x at
// slot ec.z; 1, ec.y at ec.w): the layer-1 word, and the layer-2 word unless the slot is quiet
// (its Z = -1 stands for it, solver.cu).
template <typename T>
__device__ __forceinline__ void slot_put(V4<T>* __restrict__ acc, long long stride, long long at, int slot, bool quiet,
                                         const V4<T>& w1, const V4<T>& w2) {
    acc[(2 * slot) * stride + at] = w1;
    if (!quiet) acc[(2 * slot + 1) * stride + at] = w2;
}
template <typename T>
__device__ __forceinline__ void acc_put(V4<T>* __restrict__ acc, long long stride, int4 ec, int side, bool quiet,
                                        const V4<T>& w1, const V4<T>& w2) {
    slot_put(acc, stride, side == 0 ? ec.x : ec.y, side == 0 ? ec.z : ec.w, quiet, w1, w2);
}

// One thread per edge of e_begin..e_end between the face records of the reconstruction
// kernel (edge2_at).
template <typename T>
__device__ __forceinline__ void edge2_kernel(const V4<T>* __restrict__ v1, const V4<T>* __restrict__ v2,
                                             const int4* __restrict__ ecells, const V2<T>* __restrict__ enormal,
                                             const Boundary<T>* __restrict__ boundaries,
                                             const V4<T>* __restrict__ faces, const T* __restrict__ depth,
                                             V4<T>* __restrict__ acc, long long stride, int e_begin, int e_end,
                                             const Model<T>& m, T t, unsigned long long* __restrict__ scratch,
                                             const T* __restrict__ evisc) {
    int e = e_begin + blockIdx.x * blockDim.x + threadIdx.x;
    bool fallback = false;
    if (e < e_end) {
        int4 ec = ecells[e];
        const V4<T>* fj = faces + 6 * (long long)(ec.y < 0 ? ec.x : ec.y);
        T dj = ec.y < 0 ? T(0) : depth[ec.y];
        fallback = edge2_at(
            v1, v2, ec, enormal[e], boundaries, faces + 6 * (long long)ec.x, fj, depth[ec.x], dj, m, t,
            [&]() { return evisc != nullptr ? evisc[e] : T(0); }, [&]() { return ec; },
            [&](int4 at, int side, bool quiet, const V4<T>& w1, const V4<T>& w2) {
                acc_put(acc, stride, at, side, quiet, w1, w2);
            });
    }
    unsigned int k = __popc(__ballot_sync(0xffffffffu, fallback));
    if ((threadIdx.x & 31) == 0 && k != 0) atomicAdd(&scratch[2], (unsigned long long)k);
}

// The three slots' words of a cell summed as the CPU and update_state sum them, (slot 0 +
// slot 1) + slot 2 (the fourth lane, which the update does not read, left 0).
template <typename T> __device__ __forceinline__ V4<T> slot_sum(const V4<T>& x, const V4<T>& y, const V4<T>& z) {
    V4<T> s = {x.x + y.x + z.x, x.y + y.y + z.y, x.z + y.z + z.z, T(0)};
    return s;
}

// What a stage's update subtracts (times dt over the area) from a cell's layer-1 and layer-2
// numbers (f1, f2): its slots' words summed (s1, s2: slot_sum), the momenta with the
// cell-interior term e added. Rounded explicitly, as update2_cell (which takes these): the
// tiles that sum a cell's slots at the first stage (tile2_kernel) store f1 and f2 for the
// update, which then computes the same bits the update of an unsummed cell does.
template <typename T>
__device__ __forceinline__ void fold_sums(const V4<T>& s1, const V4<T>& s2, const V4<T>& e, V4<T>& f1, V4<T>& f2) {
    f1.x = s1.x; f1.y = add_rn(s1.y, e.x); f1.z = add_rn(s1.z, e.y); f1.w = T(0);
    f2.x = s2.x; f2.y = add_rn(s2.y, e.z); f2.z = add_rn(s2.z, e.w); f2.w = T(0);
}

// A stage's update of cell c (CpuBackend::stage_update at order 2) from its stored state (a,
// b), low parts l, and its slots' layer-1 and layer-2 words summed with its cell-interior term
// added to the momenta (f1, f2: fold_sums): the first order's update, then the sources
// (SOURCES: only where the model has some; without, in the tiles, the shear limit alone where
// it is the model's only term: Model::has_sources_besides_shear_limit); at the second stage
// (second != 0), Heun's average with the step's start (W_n + W**)/2 as W_n plus half the
// difference, the thickness deviations with their low parts by add_compensated, so that a cell
// at rest keeps its numbers bit for bit; then settle. The step's start is read from (o1, o2,
// olo) at c, and the new state written there; false if it is not admissible.
//
// Every product and sum is explicitly rounded (no fused multiply-add): both the update kernel
// and the tile kernel that finishes a cell (tile2_kernel) run this, and where a cell is
// finished depends on the tiles, which change with the rank count; contracted, the compiler
// fuses differently in the two kernels and N ranks would no longer equal 1 rank bit for bit.
// The CPU rounds each operation too, so the bits are the CPU's (tests/kernels_host.rs).
template <typename T, bool SOURCES>
__device__ __forceinline__ bool update2_cell(V4<T> a, V4<T> b, V2<T> l, const V4<T>& f1, const V4<T>& f2,
                                             const Model<T>& m, T dt, T coriolis, int second,
                                             V4<T>* __restrict__ o1, V4<T>* __restrict__ o2,
                                             V2<T>* __restrict__ olo, int c) {
    T k = div_rn(dt, b.w);
    // The thicknesses exactly as in the first-order update (no interior term: it has no mass
    // rows), the momenta with the interior term.
    add_compensated(a.x, l.x, -mul_rn(k, f1.x), a.x, l.x);
    add_compensated(b.x, l.y, -mul_rn(k, f2.x), b.x, l.y);
    a.y = sub_rn(a.y, mul_rn(k, f1.y));
    a.z = sub_rn(a.z, mul_rn(k, f1.z));
    b.y = sub_rn(b.y, mul_rn(k, f2.y));
    b.z = sub_rn(b.z, mul_rn(k, f2.z));
    Side<T> s = load_side(a, b);
    if (SOURCES && has_sources(m)) source_at(m, s, dt, coriolis);
    else if (!SOURCES && m.shear_bound > T(0)) shear_source(m, s);
    if (second) {
        // The step's start W_n (these buffers), and Heun's average with it.
        V4<T> sa = o1[c], sb = o2[c];
        V2<T> sl = olo[c];
        Side<T> st = load_side(sa, sb);
        const T half = T(0.5);
        T inc1 = mul_rn(half, add_rn(sub_rn(s.d1, st.d1), sub_rn(l.x, sl.x)));
        T inc2 = mul_rn(half, add_rn(sub_rn(s.d2, st.d2), sub_rn(l.y, sl.y)));
        add_compensated(st.d1, sl.x, inc1, s.d1, l.x);
        add_compensated(st.d2, sl.y, inc2, s.d2, l.y);
        s.q1x = add_rn(st.q1x, mul_rn(half, sub_rn(s.q1x, st.q1x)));
        s.q1y = add_rn(st.q1y, mul_rn(half, sub_rn(s.q1y, st.q1y)));
        s.q2x = add_rn(st.q2x, mul_rn(half, sub_rn(s.q2x, st.q2x)));
        s.q2y = add_rn(st.q2y, mul_rn(half, sub_rn(s.q2y, st.q2y)));
    }
    // Vanishing layers and the admissibility check (wetdry.cuh).
    bool ok = settle(m, s, l.x, l.y);
    a.x = s.d1; a.y = s.q1x; a.z = s.q1y;
    b.x = s.d2; b.y = s.q2x; b.z = s.q2y;
    o1[c] = a;
    o2[c] = b;
    olo[c] = l;
    return ok;
}

// A cell's slots' words at index `at` of accumulators of stride `ws` (slot 0's two words s0,
// x1 loaded by the caller), summed with its cell-interior term e added (fold_sums): every slot's
// two words in one round of loads (a quiet slot's layer-2 word is read and not used:
// quiet_layer2's zeros stand for it), not the layer-2 words after the layer-1 words that say
// whether to read them (layer2_word).
template <typename T>
__device__ __forceinline__ void fold_slots(const V4<T>* __restrict__ w, long long ws, long long at, const V4<T>& s0,
                                           const V4<T>& x1, const V4<T>& e, V4<T>& f1, V4<T>& f2) {
    V4<T> s2 = w[2 * ws + at], x3 = w[3 * ws + at], s4 = w[4 * ws + at], x5 = w[5 * ws + at];
    V4<T> t1 = s0.w < T(0) ? quiet_layer2(s0) : x1;
    V4<T> t3 = s2.w < T(0) ? quiet_layer2(s2) : x3;
    V4<T> t5 = s4.w < T(0) ? quiet_layer2(s4) : x5;
    fold_sums(slot_sum(s0, s2, s4), slot_sum(t1, t3, t5), e, f1, f2);
}

// A stage's update, one thread per cell (update2_cell): reads (v1, v2, lo), writes (o1, o2,
// olo); at the second stage it first reads the step's start from (o1, o2, olo), each thread its
// own cell's words (so o1, o2, olo are one pointer each, read and written). The cells:
// - without a list (`rest.cells` null), the n_owned owned ones, their words at their own index;
// - with one, the listed cells, their words in the list's order (RestArrays), after the owned
//   cells whose tiles stored their sums where `summed` (null: none) is given. The
//   device-resident steps pass the list at the second stage, where the tiles finish the other
//   cells (tile2_kernel), so that no thread of the sweep waits on a cell that is done; and at
//   the first with `summed`, a bit per owned cell: the cells whose tile stored their folded
//   sums (fold_sums) in their slot 0's two words (TILE_SUMS), which the update reads instead
//   of six and the interior term. A thread of that sweep whose cell is listed leaves it to the
//   list's thread.
// The two cases are separate code (the list is the same for every thread): with one body for
// both, the update without a list was 2% slower at 64222 cells on an H200 (BENCHMARKS.md,
// issue 21).
template <typename T>
__device__ __forceinline__ void update2_kernel(const V4<T>* __restrict__ v1, const V4<T>* __restrict__ v2,
                                               const V2<T>* __restrict__ lo, V4<T>* __restrict__ o1,
                                               V4<T>* __restrict__ o2, V2<T>* __restrict__ olo,
                                               const V4<T>* __restrict__ acc, const V4<T>* __restrict__ interior,
                                               long long stride, int n_owned, const Model<T>& m, T dt,
                                               unsigned long long* __restrict__ scratch,
                                               const T* __restrict__ coriolis, int second, const RestArrays<T>& rest,
                                               const unsigned* __restrict__ summed) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) scratch[0] = ~0ull;  // reset the dt minimum for the next step
    int c = i;
    V4<T> f1, f2;
    if (rest.cells == nullptr) {
        if (i >= n_owned) return;
        V4<T> s0 = acc[i], x1 = acc[stride + i];
        fold_slots(acc, stride, i, s0, x1, interior[i], f1, f2);
    } else {
        const int n_lead = summed != nullptr ? n_owned : 0;
        if (i >= n_lead + rest.n) return;
        // Slot 0's two words, a summed cell's sums or a listed cell's first slot, loaded before
        // the branch so that the owned sweep's come with the bits (loaded in the branch, the
        // compiler moved them after the bits' test, a second round of loads).
        const bool lead = i < n_lead;
        const V4<T>* w = lead ? acc : rest.acc;
        const long long ws = lead ? stride : (long long)rest.n, at = lead ? i : i - n_lead;
        V4<T> s0 = w[at], x1 = w[ws + at];
        if (lead) {
            if (((summed[i >> 5] >> (i & 31)) & 1u) == 0) return;
            f1 = s0;
            f2 = x1;
        } else {
            c = rest.cells[at];
            fold_slots(rest.acc, ws, at, s0, x1, rest.interior[at], f1, f2);
        }
    }
    bool ok = update2_cell<T, true>(v1[c], v2[c], lo[c], f1, f2, m, dt, cell_coriolis(m, coriolis, c), second, o1,
                                    o2, olo, c);
    if (!ok) atomicOr(&scratch[1], 1ull);
}

// Copies of 4, 8 or 16 bytes from device memory to shared memory that go on while the thread
// does other work (cp.async, sm_80 on); copy_async_wait waits for the thread's copies. Plain
// copies on older GPUs and on the host (tests/kernels_host.rs).
template <typename X> __device__ __forceinline__ void copy_async(X* dst, const X* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_assert(sizeof(X) == 4 || sizeof(X) == 8 || sizeof(X) == 16, "cp.async copies 4, 8 or 16 bytes");
    unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(to), "l"(__cvta_generic_to_global(src)),
                 "n"(sizeof(X)));
#else
    *dst = *src;
#endif
}
// A hint to bring the 32-byte sector at p into the L2 cache, for a load that comes later
// (nothing on the host).
template <typename X> __device__ __forceinline__ void prefetch_l2(const X* p) {
#if defined(__CUDA_ARCH__)
    asm volatile("prefetch.global.L2 [%0];\n" ::"l"(__cvta_generic_to_global(p)));
#else
    (void)p;
#endif
}
__device__ __forceinline__ void copy_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// Reconstruction and edge pass in one kernel, a block per tile (src/solver/cuda/tiles.rs):
// the block reconstructs the tile's cells (the endpoints of its edges) into shared memory, then
// takes its edges between those records. The edge values so never reach device memory (the 96
// bytes a cell writes and the edge kernel reads back at each stage); a cell next to another
// tile's edges is reconstructed there too, from the same numbers with the same code, so its
// records are the same bits. Each tile writes the interior terms of its cells (the same bits
// wherever written). The accumulators are edge2_kernel's words.
//
// The kernel is bound by the latency of its loads (Nsight Compute, BENCHMARKS.md), so they are
// laid out for few dependent rounds: a tile's entries sit at tile * cap (no count or offset to
// load first), a cell's entry carries its neighbours (the state loads follow at once), and the
// edges' entries are copied to shared memory while the block reconstructs (cp.async), with the
// cells' depths kept there too, so the edge half loads nothing from device memory but the
// boundary conditions and the rare fallback's means.
template <typename T> struct TileArrays {
    const int4* cells;  // [tile * cap + k] = (cell, across[3 * cell + 0..3]); x = -1 past its cells
    const int4* tec;    // [tile * cap + q] = the edge's ecells entry; x = -1 past its edges
    const int2* tloc;   // its cells' places in the tile
    const V2<T>* tnl;   // its normal times length, as enormal
    const int* rest_of;  // [tile * cap + k]: its cell's index in the list of RestArrays, else -1
    int cap;            // places per tile, the block's threads on a GPU
    const T* tvisc;     // [tile * cap + q]: its edge's viscous coupling; null: no viscosity
};
// A cell the tile finishes (src/solver/cuda/tiles.rs, Tiles::finishing): an owned cell whose
// three edges are all in the tile. Marked in its entry of `cells` (x) and in the places of
// `tloc` that point at it.
#define TILE_FINISHED_CELL (1 << 30)
#define TILE_CELL_MASK (TILE_FINISHED_CELL - 1)
#define TILE_FINISHED_PLACE (1 << 16)
#define TILE_PLACE_MASK (TILE_FINISHED_PLACE - 1)
// The places of a tile a thread takes: its own on a GPU (a tile has as many places as its block
// has threads, src/solver/cuda/order2.rs), so no loop counter or sum lives across the flux
// (under the register cap they were spilled, and their reloads were 8% of the kernel's stall
// samples); every place in turn on the host, which runs a block as one thread.
template <typename F> __device__ __forceinline__ void each_place(int cap, F f) {
#ifdef PYCNO_HOST_SHARED
    for (int k = 0; k < cap; ++k) f(k);
#else
    if ((int)threadIdx.x < cap) f((int)threadIdx.x);
#endif
}

// The tile kernel's modes. TILE_PLAIN: reconstruction and edges, every word to the
// accumulators. The device-resident steps, where the model has no sources, also use the cells
// marked in the tile (Tiles::finishing: all three edges here): a marked cell's edges put their
// words in shared memory instead of the accumulators, its interior term stays there too, and
// after a second barrier the tile
// - TILE_SUMS (first stage): sums its slots, folds in the interior term (fold_sums) and stores
//   the two words in its slot 0 for the update (`summed` of update2_kernel: two words read
//   instead of six and the interior term), and takes its time step (cell_dt_from, the time-step
//   kernel's arithmetic; `factor` is 2 gamma) into the step's minimum, so that the time-step
//   kernel takes only the other cells (its `rest`);
// - TILE_FINISH (second stage): does its update (update2_cell, Heun's step, `factor` = dt);
//   the update kernel then takes only the other cells (its `rest`).
// That drops the accumulator words the update and the time step would read back, and at the
// second stage the update's sweep over every cell (BENCHMARKS.md, issue 21). In both modes the
// other cells' words go in the list's order (RestArrays, `rest_of`), where those kernels read
// them; a cell this rank does not own, at its own index as in TILE_PLAIN. Each mode is an
// instantiation of its own: the register cap holds for the flux in each.
#define TILE_PLAIN 0
#define TILE_SUMS 1
#define TILE_FINISH 2
template <typename T, int MODE>
__device__ __forceinline__ void tile2_kernel(const Arrays<T>& a, const Order2Arrays<T>& o, const TileArrays<T>& ta,
                                             const RestArrays<T>& rs, int tile, const Model<T>& m, T t, T factor,
                                             unsigned char* shared) {
    // Shared memory (tile_shared_bytes in src/solver/cuda/order2.rs): per place the records
    // of a cell, the edge entries, the depth of the cell; in the other modes than TILE_PLAIN a
    // marked cell's slot words and interior term, with TILE_SUMS its area, and the place's
    // index in the list (rest_of).
    constexpr bool KEEP = MODE != TILE_PLAIN;
    const int cap = ta.cap;
    V4<T>* records = reinterpret_cast<V4<T>*>(shared);
    int4* s_tec = reinterpret_cast<int4*>(records + 6 * cap);
    int2* s_tloc = reinterpret_cast<int2*>(s_tec + cap);
    V2<T>* s_tnl = reinterpret_cast<V2<T>*>(s_tloc + cap);
    T* s_depth = reinterpret_cast<T*>(s_tnl + cap);
    V4<T>* slots = reinterpret_cast<V4<T>*>(s_depth + cap);
    V4<T>* s_int = slots + 6 * cap;
    T* s_area = reinterpret_cast<T*>(s_int + cap);
    int* s_rest = reinterpret_cast<int*>(s_area + cap);
    const long long base = (long long)tile * cap;
    each_place(cap, [&](int q) {
        copy_async(&s_tec[q], &ta.tec[base + q]);
        copy_async(&s_tloc[q], &ta.tloc[base + q]);
        copy_async(&s_tnl[q], &ta.tnl[base + q]);
    });
    each_place(cap, [&](int k) {
        int4 cc = ta.cells[base + k];
        int listed = -1;
        if (KEEP) {
            listed = ta.rest_of[base + k];
            s_rest[k] = listed;
        }
        if (cc.x < 0) return;
        int around[3] = {cc.y, cc.z, cc.w};
        int c = cc.x & TILE_CELL_MASK;
        bool kept = KEEP && (cc.x & TILE_FINISHED_CELL) != 0;
        if (MODE == TILE_FINISH && kept) {
            // The words the cell's update reads after the edges, asked of the L2 now (1-2% off
            // the step at 10^6 cells on an H200, BENCHMARKS.md); the cell's state (v1, v2) the
            // reconstruction reads here.
            prefetch_l2(a.lo + c);
            prefetch_l2(a.o1 + c);
            prefetch_l2(a.o2 + c);
            prefetch_l2(a.olo + c);
        }
        V4<T>* in = kept ? s_int + k : listed >= 0 ? rs.interior + listed : o.interior + c;
        T* area = MODE == TILE_SUMS && kept ? s_area + k : nullptr;
        s_depth[k] = reconstruct_cell(a.v1, a.v2, o.wr, o.ln, o.n_cells, c, around, m, records + 6 * k, in, area);
    });
    copy_async_wait();
    __syncthreads();
    // Fallbacks are rare (steep fronts): one atomic each.
    each_place(cap, [&](int q) {
        int4 ec = s_tec[q];
        if (ec.x < 0) return;
        int2 p = s_tloc[q];
        int pi = p.x & TILE_PLACE_MASK, pj = p.y & TILE_PLACE_MASK;
        auto again = [&]() {
            const volatile int* e = reinterpret_cast<const volatile int*>(&s_tec[q]);
            int4 r = {e[0], e[1], e[2], e[3]};
            return r;
        };
        auto put = [&](int4 at, int side, bool quiet, const V4<T>& w1, const V4<T>& w2) {
            if (KEEP) {
                // The place, read again from shared memory too.
                int l = reinterpret_cast<const volatile int*>(&s_tloc[q])[side];
                if ((l & TILE_FINISHED_PLACE) != 0) {
                    V4<T>* w = slots + 6 * (l & TILE_PLACE_MASK) + 2 * (side == 0 ? at.z : at.w);
                    w[0] = w1;
                    w[1] = w2;
                    return;
                }
                int listed = s_rest[l & TILE_PLACE_MASK];
                if (listed >= 0) {
                    slot_put(rs.acc, (long long)rs.n, listed, side == 0 ? at.z : at.w, quiet, w1, w2);
                    return;
                }
            }
            acc_put(a.acc, a.stride, at, side, quiet, w1, w2);
        };
        auto visc = [&]() { return ta.tvisc != nullptr ? ta.tvisc[base + q] : T(0); };
        if (edge2_at(a.v1, a.v2, ec, s_tnl[q], a.boundaries, records + 6 * pi, records + 6 * pj, s_depth[pi],
                     s_depth[pj], m, t, visc, again, put))
            atomicAdd(&a.scratch[2], 1ull);
    });
    if (!KEEP) return;
    __syncthreads();
    // The marked cells: summed, with their time steps' minimum over the block (TILE_SUMS), or
    // finished (TILE_FINISH).
    unsigned long long bits = ~0ull;
    each_place(cap, [&](int k) {
        int x = ta.cells[base + k].x;
        if (x < 0 || (x & TILE_FINISHED_CELL) == 0) return;
        int c = x & TILE_CELL_MASK;
        const V4<T>* w = slots + 6 * k;
        V4<T> f1, f2;
        fold_sums(slot_sum(w[0], w[2], w[4]), slot_sum(w[1], w[3], w[5]), s_int[k], f1, f2);
        if (MODE == TILE_SUMS) {
            a.acc[c] = f1;
            a.acc[a.stride + c] = f2;
            unsigned long long b = cell_dt_from(slots_z(w[0].w, w[2].w, w[4].w), s_area[k], factor);
            bits = b < bits ? b : bits;
        } else if (!update2_cell<T, false>(a.v1[c], a.v2[c], a.lo[c], f1, f2, m, factor, T(0), 1, a.o1, a.o2, a.olo,
                                           c)) {
            atomicOr(&a.scratch[1], 1ull);
        }
    });
    if (MODE == TILE_SUMS) {
        bits = block_min_bits(bits);
        if (threadIdx.x == 0 && bits != ~0ull) atomicMin(&a.scratch[0], bits);
    }
}

// The tile kernel's records: dynamic shared memory (the host program of tests/kernels_host.rs
// defines PYCNO_HOST_SHARED with a static buffer of its own).
#ifdef PYCNO_HOST_SHARED
PYCNO_HOST_SHARED
#else
extern __shared__ __align__(16) unsigned char pycno_tile_records[];
#endif

// TILE_BOUNDS: the tile kernel's register cap. In float32 at most 80 (__launch_bounds__(256,
// 3): three blocks of 256 threads a multiprocessor, 12 bytes spilled), against the 96 the
// compiler takes: 9% faster at 10^6 cells on an H200 (BENCHMARKS.md, issue 21; 64 spilled
// 228-252 bytes and was slower, twice). float64 (174 registers) is left to the compiler.
#define PYCNO_ORDER2_KERNELS(T, SUFFIX, TILE_BOUNDS)                                                               \
    extern "C" __global__ void reconstruct_##SUFFIX(Arrays<T> a, Order2Arrays<T> o, Model<T> m, int begin,         \
                                                    int end, int want) {                                          \
        reconstruct_kernel<T>(a.v1, a.v2, o.across, o.wr, o.ln, o.recon, o.faces, o.interior, o.n_cells, begin,  \
                              end, want, m);                                                                      \
    }                                                                                                             \
    extern "C" __global__ void edge2_##SUFFIX(Arrays<T> a, Order2Arrays<T> o, Model<T> m, int e_begin, int e_end, \
                                              T t) {                                                              \
        edge2_kernel<T>(a.v1, a.v2, a.ecells, a.enormal, a.boundaries, o.faces, o.depth, a.acc, a.stride,        \
                        e_begin, e_end, m, t, a.scratch, a.evisc);                                                \
    }                                                                                                             \
    /* Tiles tile_begin.. (one block each), dynamic shared memory as tile2_kernel lays it out. */             \
    extern "C" __global__ void TILE_BOUNDS tile2_##SUFFIX(Arrays<T> a, Order2Arrays<T> o, TileArrays<T> ta,     \
                                                          Model<T> m, int tile_begin, T t) {                      \
        tile2_kernel<T, TILE_PLAIN>(a, o, ta, RestArrays<T>{}, tile_begin + blockIdx.x, m, t, T(0),              \
                                    pycno_tile_records);                                                          \
    }                                                                                                             \
    /* The first stage's tiles summing their cells' slots, and their time steps (two_gamma: 2 gamma); here */    \
    /* for tests/kernels_host.rs (the device-resident steps have it in resident.cu). */                          \
    extern "C" __global__ void TILE_BOUNDS tile2_sums_##SUFFIX(Arrays<T> a, Order2Arrays<T> o, TileArrays<T> ta,\
                                                               RestArrays<T> r, Model<T> m, int tile_begin, T t,  \
                                                               T two_gamma) {                                     \
        tile2_kernel<T, TILE_SUMS>(a, o, ta, r, tile_begin + blockIdx.x, m, t, two_gamma, pycno_tile_records);    \
    }                                                                                                             \
    /* Tiles finishing their cells with the step dt (the device-resident steps' second stage has it in */       \
    /* resident.cu; here for tests/kernels_host.rs). */                                                          \
    extern "C" __global__ void TILE_BOUNDS tile2_finish_##SUFFIX(Arrays<T> a, Order2Arrays<T> o,                \
                                                                 TileArrays<T> ta, RestArrays<T> r, Model<T> m,   \
                                                                 int tile_begin, T t, T dt) {                     \
        tile2_kernel<T, TILE_FINISH>(a, o, ta, r, tile_begin + blockIdx.x, m, t, dt, pycno_tile_records);         \
    }                                                                                                             \
    /* rest: the listed cells to update (cells null: every owned cell); summed: the cells whose sums the */      \
    /* tiles stored (null: none). */                                                                             \
    extern "C" __global__ void update2_##SUFFIX(Arrays<T> a, Order2Arrays<T> o, Model<T> m, T dt, int second,     \
                                                RestArrays<T> rest, const unsigned* summed) {                     \
        update2_kernel<T>(a.v1, a.v2, a.lo, a.o1, a.o2, a.olo, a.acc, o.interior, a.stride, a.n_owned, m, dt,     \
                          a.scratch, a.coriolis, second, rest, summed);                                           \
    }                                                                                                             \
    /* The time step's minimum over the listed cells (rest_dt_bits; tests/kernels_host.rs). */                   \
    extern "C" __global__ void dt_rest_##SUFFIX(Arrays<T> a, T two_gamma, RestArrays<T> r) {                     \
        dt_min_kernel(r.n, a.scratch, [&](int k) { return rest_dt_bits(r, k, two_gamma); });                     \
    }

PYCNO_ORDER2_KERNELS(float, f32, __launch_bounds__(256, 3))
PYCNO_ORDER2_KERNELS(double, f64, )
