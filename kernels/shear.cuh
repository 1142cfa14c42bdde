// The interlayer stress that keeps the two-layer system hyperbolic: mirrors
// src/physics/shear.rs (change both together; tests/gpu_probes.rs compares them), whose
// module comment has the why (Castro, Fernández-Nieto, González-Vida and Parés 2011).
//
// Every operation is explicitly rounded (no fused multiply-add, IEEE division and square
// root): at order 2 a cell is limited either by the update kernel or by the tile that
// finishes it (order2.cu), which depends on the tiles and so on the rank count, and both
// must give the CPU's bits (tests/kernels_host.rs) for N ranks to equal 1 rank.
#pragma once

// Bring the shear of a cell with both layers present back within m.shear_bound (h1 + h2),
// keeping r q1 + q2.
// In products only (shear.rs): a cell within the bound costs no division.
template <typename T> __device__ __forceinline__ void limit_shear(const Model<T>& m, Side<T>& s, T h1, T h2) {
    T ex = sub_rn(mul_rn(s.q1x, h2), mul_rn(s.q2x, h1));
    T ey = sub_rn(mul_rn(s.q1y, h2), mul_rn(s.q2y, h1));
    T e2 = add_rn(mul_rn(ex, ex), mul_rn(ey, ey));
    T hh = mul_rn(h1, h2);
    T bound = mul_rn(m.shear_bound, add_rn(h1, h2));
    if (e2 > mul_rn(bound, mul_rn(hh, hh))) {
        T change = sub_rn(mul_rn(hh, sqrt_rn(div_rn(bound, e2))), T(1));
        T k = div_rn(change, add_rn(mul_rn(m.r, h1), h2));
        T rk = mul_rn(m.r, k);
        s.q1x = add_rn(s.q1x, mul_rn(k, ex));
        s.q1y = add_rn(s.q1y, mul_rn(k, ey));
        s.q2x = sub_rn(s.q2x, mul_rn(rk, ex));
        s.q2y = sub_rn(s.q2y, mul_rn(rk, ey));
    }
}

// The shear limit where it is the model's only source term (Model::has_sources_besides_shear_limit false): what
// source_at does then, for the tile kernel that finishes cells (order2.cu).
template <typename T> __device__ __forceinline__ void shear_source(const Model<T>& m, Side<T>& s) {
    T h1 = side_h1(m, s), h2 = side_h2(m, s);
    if (h1 > m.dry_tolerance && h2 > m.dry_tolerance) limit_shear(m, s, h1, h2);
}
