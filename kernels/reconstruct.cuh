// Second order in space (physics.order = 2): a line-by-line mirror of
// src/physics/reconstruct.rs (change both together; tests/gpu_probes.rs compares them). The
// module comment there says what is reconstructed and why; in short: the surface s = d1 + d2,
// the interface d2 and the velocities, least-squares gradients over the three neighbours
// (mirror ghosts at the boundary), Barth-Jespersen limiting (a wall's midpoint unbounded), a
// cell with all gradients zero hands the edges its stored numbers bit for bit (water at rest
// stays exactly at rest in any precision), and an edge whose reconstructed flux would empty
// its donor falls back to the flux of the two cells' means.
#pragma once

#define RC_VARS 6
// What lies across a slot (Layout::across): a local cell (>= 0), or a boundary ghost.
#define RC_ACROSS_WALL (-1)
#define RC_ACROSS_OPEN (-2)
#define RC_ACROSS_CORNER (-3)
// presence bits: a layer at least m.thin thick, or at most m.dry_tolerance (absent).
#define RC_THICK 1
#define RC_ABSENT 2
// reconstruct.rs: FRONT_SPAN, FRONT_INSIDE (where the interface's factor bounds the others').
#define RC_FRONT_SPAN 1e-3
#define RC_FRONT_INSIDE 0.01

// Rust's f32::max / f32::min (a NaN argument loses), which the limiter's bounds use.
__device__ __forceinline__ float rc_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double rc_max(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ float rc_min(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double rc_min(double a, double b) { return fmin(a, b); }

// The reconstruction's divisions: float32's fast division (a reciprocal and a multiply, within
// 2 ulp like the division the other kernels take, for divisors in [2^-126, 2^126]), 2.5% off
// the tile kernel at 10^6 cells on an H200 (BENCHMARKS.md). rc_div's divisors are thicknesses
// above the dry tolerance (at least 1e-12 m, Physics::validate); the limiter's are midpoint
// offsets, which can be subnormal (a velocity that is a rounding residue: seen in float32 and
// float64 on the lock exchange), so rc_div_any divides those as the other kernels do.
__device__ __forceinline__ float rc_div(float a, float b) { return __fdividef(a, b); }
__device__ __forceinline__ double rc_div(double a, double b) { return a / b; }
__device__ __forceinline__ float rc_div_any(float a, float b) {
    return fabsf(b) >= 1.17549435e-38f ? __fdividef(a, b) : a / b;
}
__device__ __forceinline__ double rc_div_any(double a, double b) { return a / b; }

// vars: (s, u1x, u1y, d2, u2x, u2y) from the records (d1, q1x, q1y, H), (d2, q2x, q2y, area);
// velocities zero where a layer is not above the dry tolerance.
template <typename T> __device__ __forceinline__ T rc_velocity(const Model<T>& m, T q, T h) {
    return h > m.dry_tolerance ? rc_div(q, h) : T(0);
}
template <typename T>
__device__ __forceinline__ void rc_vars(const Model<T>& m, const V4<T>& a, const V4<T>& b, T* u) {
    T h1 = a.x + m.ref_h1, h2 = (b.x + m.ref_interface) + a.w;
    u[0] = a.x + b.x;
    u[1] = rc_velocity(m, a.y, h1);
    u[2] = rc_velocity(m, a.z, h1);
    u[3] = b.x;
    u[4] = rc_velocity(m, b.y, h2);
    u[5] = rc_velocity(m, b.z, h2);
}

// ghost_vars: the mirror ghost across a boundary slot with outward unit normal n: the cell's
// own numbers, with the normal velocities reversed at a wall.
template <typename T> __device__ __forceinline__ void rc_ghost_vars(const T* u, T nx, T ny, bool wall, T* g) {
#pragma unroll
    for (int v = 0; v < RC_VARS; ++v) g[v] = u[v];
    if (wall) {
#pragma unroll
        for (int k = 1; k <= 4; k += 3) {
            T qn = u[k] * nx + u[k + 1] * ny;
            T two = T(2);
            g[k] = u[k] - two * qn * nx;
            g[k + 1] = u[k + 1] - two * qn * ny;
        }
    }
}

// presence: RC_THICK, RC_ABSENT or 0 (a film in between) per layer.
template <typename T> __device__ __forceinline__ int rc_presence_of(const Model<T>& m, T h) {
    if (h >= m.thin) return RC_THICK;
    if (h <= m.dry_tolerance) return RC_ABSENT;
    return 0;
}
template <typename T>
__device__ __forceinline__ void rc_presence(const Model<T>& m, const V4<T>& a, const V4<T>& b, int* layers) {
    layers[0] = rc_presence_of(m, a.x + m.ref_h1);
    layers[1] = rc_presence_of(m, (b.x + m.ref_interface) + a.w);
}

// at: the linear function with centre value u and gradient g at offset r.
template <typename T> __device__ __forceinline__ T rc_at(T u, const T* g, const T* r) {
    return u + (g[0] * r[0] + g[1] * r[1]);
}

// face: the stored numbers (d1, q1x, q1y, d2, q2x, q2y) at the midpoint at offset r: the
// cell's own where every gradient is zero (bit for bit), else the reconstruction.
template <typename T>
__device__ __forceinline__ void rc_face(const Model<T>& m, const T* stored, const T* u, const T (*g)[2], const T* r,
                                        T depth, T* out) {
    bool flat = true;
#pragma unroll
    for (int v = 0; v < RC_VARS; ++v) flat = flat && g[v][0] == T(0) && g[v][1] == T(0);
    if (flat) {
#pragma unroll
        for (int v = 0; v < RC_VARS; ++v) out[v] = stored[v];
        return;
    }
    T d2 = rc_at(u[3], g[3], r);
    // The same gradient for the surface and the interface: layer 1's thickness is flat in the
    // cell and keeps its stored number.
    T d1 = (g[0][0] == g[3][0] && g[0][1] == g[3][1]) ? stored[0] : rc_at(u[0], g[0], r) - d2;
    T h1 = d1 + m.ref_h1, h2 = (d2 + m.ref_interface) + depth;
    out[0] = d1;
    out[1] = h1 * rc_at(u[1], g[1], r);
    out[2] = h1 * rc_at(u[2], g[2], r);
    out[3] = d2;
    out[4] = h2 * rc_at(u[4], g[4], r);
    out[5] = h2 * rc_at(u[5], g[5], r);
}

// rc_limit: variable v's unlimited least-squares gradient (gx, gy) and its Barth-Jespersen
// factor: the largest phi <= 1 keeping every midpoint within [lo, hi], but a wall's; one
// division for the midpoints above the centre (the largest delta) and one for those below
// (reconstruct.rs says why that is the same bits).
template <typename T>
__device__ __forceinline__ T rc_limit(const T* u, const T (*nb)[RC_VARS], const T (*w)[2], const T (*r)[2],
                                      const bool* walls, int v, T& gx, T& gy, T& above, T& below) {
    gx = T(0);
    gy = T(0);
    T hi = u[v], lo = u[v];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        T du = nb[k][v] - u[v];
        gx = gx + w[k][0] * du;
        gy = gy + w[k][1] * du;
        hi = rc_max(hi, nb[k][v]);
        lo = rc_min(lo, nb[k][v]);
    }
    T up = T(0), down = T(0);
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        if (walls[k]) continue;
        T delta = gx * r[k][0] + gy * r[k][1];
        up = rc_max(up, delta);
        down = rc_min(down, delta);
    }
    T phi = T(1);
    if (up > T(0)) phi = rc_min(phi, rc_div_any(hi - u[v], up));
    if (down < T(0)) phi = rc_min(phi, rc_div_any(lo - u[v], down));
    above = hi - u[v];
    below = u[v] - lo;
    return phi;
}

// limited_gradients: from the cell's numbers u over depth `depth`, its neighbours' nb (ghosts
// formed), the presence bits and-ed over them, the stencil's weights w and midpoint offsets r,
// and which slots are walls. Zero where the cell stays first order.
template <typename T>
__device__ __forceinline__ void rc_limited_gradients(const Model<T>& m, const T* u, T depth, const T (*nb)[RC_VARS],
                                                     const int* layers, const T (*w)[2], const T (*r)[2],
                                                     const bool* walls, T (*g)[2]) {
#pragma unroll
    for (int v = 0; v < RC_VARS; ++v) g[v][0] = g[v][1] = T(0);
    bool thick[2] = {(layers[0] & RC_THICK) != 0, (layers[1] & RC_THICK) != 0};
    bool absent[2] = {(layers[0] & RC_ABSENT) != 0, (layers[1] & RC_ABSENT) != 0};
    // Both thick, or one thick and the other absent.
    if (!((thick[0] || absent[0]) && (thick[1] || absent[1]) && (thick[0] || thick[1]))) return;
    // The interface's factor bounds every other variable's (reconstruct.rs: one factor at a
    // steep interface).
    T interface = T(1);
    if (thick[1]) {
        T gx, gy, above, below;
        T phi = rc_limit(u, nb, w, r, walls, 3, gx, gy, above, below);
        g[3][0] = phi * gx;
        g[3][1] = phi * gy;
        // A front (reconstruct.rs: FRONT_SPAN, FRONT_INSIDE), not rounding nor an extremum.
        T near = rc_min(above, below), far = rc_max(above, below);
        if (far > T(RC_FRONT_SPAN) * depth && near > T(RC_FRONT_INSIDE) * far) interface = phi;
    }
#pragma unroll
    for (int v = 0; v < RC_VARS; ++v) {
        // The variables of a thick layer only.
        if (!thick[v / 3] || v == 3) continue;
        T gx, gy, above, below;
        T phi = rc_min(rc_limit(u, nb, w, r, walls, v, gx, gy, above, below), interface);
        g[v][0] = phi * gx;
        g[v][1] = phi * gy;
    }
    if (absent[0]) {
        // Layer 1 absent: the surface lies on the interface.
        g[0][0] = g[3][0];
        g[0][1] = g[3][1];
    }
    // A thick layer's thicknesses at the midpoints: at least `thin`, or first order.
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        T d2 = rc_at(u[3], g[3], r[k]);
        T h1 = (rc_at(u[0], g[0], r[k]) - d2) + m.ref_h1;
        T h2 = (d2 + m.ref_interface) + depth;
        if (!((absent[0] || h1 >= m.thin) && (absent[1] || h2 >= m.thin))) {
#pragma unroll
            for (int v = 0; v < RC_VARS; ++v) g[v][0] = g[v][1] = T(0);
            return;
        }
    }
}

// quiet: whether a cell has three neighbours (no boundary slot) holding its thicknesses and,
// like it, no momentum (reconstruct.rs says why rc_cell then returns +0 gradients and the
// stored numbers at once, the same bits).
template <typename T>
__device__ __forceinline__ bool rc_quiet(const V4<T>& a, const V4<T>& b, const int* across, const V4<T>* na,
                                         const V4<T>* nb) {
    bool q = a.y == T(0) && a.z == T(0) && b.y == T(0) && b.z == T(0);
#pragma unroll
    for (int k = 0; k < 3; ++k)
        q = q && across[k] >= 0 && na[k].x == a.x && nb[k].x == b.x && na[k].y == T(0) && na[k].z == T(0) &&
            nb[k].y == T(0) && nb[k].z == T(0);
    return q;
}

// guarded: the presence bits less what second order must not reconstruct (reconstruct.rs):
// layer 2's RC_THICK where the thinnest lower layer of the stencil is thinner than the bed's
// largest step from the cell to a neighbour, and both layers' where the shear anywhere in the
// stencil reaches |u1 - u2|^2 >= g' (h1 + h2) / 2 with both layers present.
template <typename T> __device__ __forceinline__ T rc_h2(const Model<T>& m, const V4<T>& a, const V4<T>& b) {
    return (b.x + m.ref_interface) + a.w;
}
template <typename T>
__device__ __forceinline__ bool rc_sheared(const Model<T>& m, const V4<T>& a, const V4<T>& b, const T* u, T limit) {
    T h1 = a.x + m.ref_h1, h2 = rc_h2(m, a, b);
    T sx = u[1] - u[4], sy = u[2] - u[5];
    return h1 > m.dry_tolerance && h2 > m.dry_tolerance && sx * sx + sy * sy >= limit * (h1 + h2);
}
template <typename T>
__device__ __forceinline__ void rc_guarded(const Model<T>& m, const V4<T>& a, const V4<T>& b, const int* across,
                                           const V4<T>* na, const V4<T>* nb, const T (*around)[RC_VARS],
                                           const T* u, int* layers) {
    T limit = T(0.5) * ((T(1) - m.r) * m.g);
    T bed = T(0), thinnest = rc_h2(m, a, b);
    bool shear = rc_sheared(m, a, b, u, limit);
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        if (across[k] >= 0) {
            bed = rc_max(bed, rt_abs(na[k].w - a.w));
            thinnest = rc_min(thinnest, rc_h2(m, na[k], nb[k]));
            shear = shear || rc_sheared(m, na[k], nb[k], around[k], limit);
        }
    }
    if (thinnest < bed) layers[1] &= ~RC_THICK;
    if (shear) layers[0] = layers[1] = 0;
}

// over_bed: a neighbour's velocities as the cell's gradient takes them (reconstruct.rs): both
// layers' raised by the same delta = s u2 / (D - s) (s: its depth less the cell's; D: its
// column's thickness), so that its column above the cell's bottom carries its own total
// transport; its own where the bottoms are level, its lower layer absent, or its column above
// the cell's bottom less than half its own. u: the neighbour's vars.
template <typename T>
__device__ __forceinline__ void rc_over_bed(const Model<T>& m, const V4<T>& a, const V4<T>& b, T depth, T* u) {
    T h1 = a.x + m.ref_h1, h2 = (b.x + m.ref_interface) + a.w;
    T step = a.w - depth;
    T column = h1 + h2;
    T over = column - step;
    if (step != T(0) && h2 > m.dry_tolerance && over >= T(0.5) * column) {
#pragma unroll
        for (int x = 0; x < 2; ++x) {
            T delta = rc_div(step * u[4 + x], over);
            if (h1 > m.dry_tolerance) u[1 + x] = u[1 + x] + delta;
            u[4 + x] = u[4 + x] + delta;
        }
    }
}

// cell: one cell's limited gradients and its stored numbers at its three edge midpoints, from
// its records a, b, what lies across each slot (across[k]) with that cell's records in
// na[k], nb[k] (read only where across[k] >= 0), its stencil (w, r; ln, the outward normal
// times the length, read only at boundary slots).
template <typename T>
__device__ __forceinline__ void rc_cell(const Model<T>& m, const V4<T>& a, const V4<T>& b, const int* across,
                                        const V4<T>* na, const V4<T>* nb, const T (*w)[2], const T (*r)[2],
                                        const V2<T>* ln, T (*g)[2], T (*faces)[RC_VARS]) {
    T stored[RC_VARS] = {a.x, a.y, a.z, b.x, b.y, b.z};
    // A cell beside an open, elevation or discharge boundary stays first order (reconstruct.rs).
    if (rc_quiet(a, b, across, na, nb) || across[0] == RC_ACROSS_OPEN || across[1] == RC_ACROSS_OPEN ||
        across[2] == RC_ACROSS_OPEN) {
#pragma unroll
        for (int v = 0; v < RC_VARS; ++v) {
            g[v][0] = g[v][1] = T(0);
#pragma unroll
            for (int k = 0; k < 3; ++k) faces[k][v] = stored[v];
        }
        return;
    }
    T u[RC_VARS];
    rc_vars(m, a, b, u);
    T depth = a.w;
    int layers[2];
    rc_presence(m, a, b, layers);
    T around[3][RC_VARS];
    bool walls[3];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        if (across[k] >= 0) {
            rc_vars(m, na[k], nb[k], around[k]);
            int p[2];
            rc_presence(m, na[k], nb[k], p);
            layers[0] &= p[0];
            layers[1] &= p[1];
        } else {
            T len = rt_sqrt(ln[k].x * ln[k].x + ln[k].y * ln[k].y);
            rc_ghost_vars(u, ln[k].x / len, ln[k].y / len, across[k] == RC_ACROSS_WALL, around[k]);
        }
        // A wall at a re-entrant corner: a wall to the limiter, its ghost the cell's own
        // velocities (reconstruct.rs: gradients).
        walls[k] = across[k] == RC_ACROSS_WALL || across[k] == RC_ACROSS_CORNER;
    }
    rc_guarded(m, a, b, across, na, nb, around, u, layers);
    // The lower layer over a stepped bottom (reconstruct.rs), after the guard, which reads the
    // neighbours' own velocities.
#pragma unroll
    for (int k = 0; k < 3; ++k)
        if (across[k] >= 0) rc_over_bed(m, na[k], nb[k], depth, around[k]);
    rc_limited_gradients(m, u, depth, around, layers, w, r, walls, g);
#pragma unroll
    for (int k = 0; k < 3; ++k) rc_face(m, stored, u, g, r[k], depth, faces[k]);
}

// interior: the cell-interior term (0, layer-1 momentum x, y, 0, layer-2 momentum x, y), from
// the cell's stored deviations d1, d2, its faces' fd1[k], fd2[k], the slots' outward normals
// times lengths ln[k] and its depth (reconstruct.rs: per slot, L n g (h_f + h_c)/2 times the
// jump of the layer's head from the centre to the face).
template <typename T> __device__ __forceinline__ T rc_present(const Model<T>& m, T h) {
    return h > m.dry_tolerance ? h : T(0);
}
template <typename T>
__device__ __forceinline__ void rc_interior(const Model<T>& m, T d1, T d2, const T* fd1, const T* fd2,
                                            const V2<T>* ln, T depth, T* out) {
    const T half = T(0.5);
    T h1 = d1 + m.ref_h1, h2 = (d2 + m.ref_interface) + depth;
    bool wet1 = h1 > m.dry_tolerance, wet2 = h2 > m.dry_tolerance;
#pragma unroll
    for (int v = 0; v < RC_VARS; ++v) out[v] = T(0);
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        T dd1 = fd1[k] - d1, dd2 = fd2[k] - d2;
        T f1 = wet1 ? m.g * (half * (h1 + (fd1[k] + m.ref_h1)) * (dd1 + dd2)) : T(0);
        T f2 = wet2 ? m.g * (half * (h2 + ((fd2[k] + m.ref_interface) + depth)) * (dd2 + m.r * dd1)) : T(0);
        out[1] = out[1] + f1 * ln[k].x;
        out[2] = out[2] + f1 * ln[k].y;
        out[4] = out[4] + f2 * ln[k].x;
        out[5] = out[5] + f2 * ln[k].y;
    }
}

// escapes: whether a layer's mass flux takes more out of its donor than cap times its mean.
template <typename T> __device__ __forceinline__ bool rc_escapes(T cap, T mass, T hi, T hj) {
    return mass > cap * hi || -mass > cap * hj;
}

// face_pressure: a word of a flux between the means made to leave out the face's pressure
// instead of the mean's (reconstruct.rs): g/2 (h_mean^2 - h_face^2) n per layer.
template <typename T>
__device__ __forceinline__ void rc_face_pressure(const Model<T>& m, T* w, const Side<T>& mean, const Side<T>& face,
                                                 T nx, T ny) {
    T half_g = T(0.5) * m.g;
    T p1 = half_g * ((mean.d1 - face.d1) * (side_h1(m, mean) + side_h1(m, face)));
    T p2 = half_g * ((mean.d2 - face.d2) * (side_h2(m, mean) + side_h2(m, face)));
    w[1] = w[1] + p1 * nx;
    w[2] = w[2] + p1 * ny;
    w[4] = w[4] + p2 * nx;
    w[5] = w[5] + p2 * ny;
}

// edge_flux: numerical_flux between the reconstructed edge values fi, fj, or between the
// cells' means where that would take more of a layer out of its donor than speed/2 times the
// donor's mean thickness. The means' thicknesses (h1i = side_h1(ci), ...) decide; the means
// themselves are asked of ci() and cj() only then, so that the edge kernel reads them from
// memory only on that rare fallback. One flux evaluation in a loop of at most two passes:
// the flux is inlined once.
template <typename T, typename Ci, typename Cj>
__device__ __forceinline__ EdgeFlux<T> rc_edge_flux(const Model<T>& m, const Side<T>& fi, const Side<T>& fj, T h1i,
                                                    T h2i, T h1j, T h2j, Ci ci, Cj cj, T nx, T ny) {
    Side<T> a = fi, b = fj;
#pragma unroll 1
    for (int pass = 0;; ++pass) {
        EdgeFlux<T> f = numerical_flux(m, a, b, nx, ny);
        T cap = T(0.5) * f.speed;
        if (pass == 1) {
            rc_face_pressure(m, f.i, a, fi, nx, ny);
            rc_face_pressure(m, f.j, b, fj, nx, ny);
            return f;
        }
        if (!(rc_escapes(cap, f.i[0], h1i, h1j) || rc_escapes(cap, f.i[3], h2i, h2j))) return f;
        a = ci();
        b = cj();
    }
}

// edge_boundary_flux: the same across a boundary edge, only the outflow from the cell checked.
template <typename T, typename Ci>
__device__ __forceinline__ EdgeFlux<T> rc_edge_boundary_flux(const Model<T>& m, const Boundary<T>& bd,
                                                             const Side<T>& fi, T h1i, T h2i, Ci ci, T nx, T ny,
                                                             T t) {
    Side<T> a = fi;
#pragma unroll 1
    for (int pass = 0;; ++pass) {
        EdgeFlux<T> f = boundary_flux(m, bd, a, nx, ny, t);
        T cap = T(0.5) * f.speed;
        if (pass == 1) {
            rc_face_pressure(m, f.i, a, fi, nx, ny);
            return f;
        }
        if (!(f.i[0] > cap * h1i || f.i[3] > cap * h2i)) return f;
        a = ci();
    }
}
