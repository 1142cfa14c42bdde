// Horizontal eddy viscosity across an interior edge: mirrors src/physics/viscosity.rs
// (add_viscosity), whose module comment has the discretisation. The transfer and the words'
// sums are rounded as written (mul_rn, add_rn: no fused multiply-add), so that the amount
// taken from one cell is the amount given to the other, as on the CPU.
#pragma once

// One layer's transfer from cell j to cell i per unit time: k h_e (u_j - u_i), zero where the
// thinner side is at or below the dry tolerance.
template <typename T>
__device__ __forceinline__ void visc_transfer(T qix, T qiy, T hi, T qjx, T qjy, T hj, T k, T tol, T& tx, T& ty) {
    T he = rt_min(hi, hj);
    if (he > tol) {
        T kh = mul_rn(k, he);
        tx = mul_rn(kh, sub_rn(wd_velocity(qjx, hj, tol), wd_velocity(qix, hi, tol)));
        ty = mul_rn(kh, sub_rn(wd_velocity(qjy, hj, tol), wd_velocity(qiy, hi, tol)));
    } else {
        tx = T(0);
        ty = T(0);
    }
}

// The stress across an interior edge of coupling k between cells of mean states wi, wj, added
// to the edge's words: a, b cell i's layer-1 and layer-2 words, c, d cell j's; both Z lanes get
// 2 k, the explicit bound. Not for an edge written as quiet (solver.cu).
template <typename T>
__device__ __forceinline__ void add_viscosity(const Model<T>& m, const Side<T>& wi, const Side<T>& wj, T k, V4<T>& a,
                                              V4<T>& b, V4<T>& c, V4<T>& d) {
    const T tol = m.dry_tolerance;
    T t1x, t1y, t2x, t2y;
    visc_transfer(wi.q1x, wi.q1y, side_h1(m, wi), wj.q1x, wj.q1y, side_h1(m, wj), k, tol, t1x, t1y);
    visc_transfer(wi.q2x, wi.q2y, side_h2(m, wi), wj.q2x, wj.q2y, side_h2(m, wj), k, tol, t2x, t2y);
    a.y = sub_rn(a.y, t1x);
    a.z = sub_rn(a.z, t1y);
    b.y = sub_rn(b.y, t2x);
    b.z = sub_rn(b.z, t2y);
    c.y = add_rn(c.y, t1x);
    c.z = add_rn(c.z, t1y);
    d.y = add_rn(d.y, t2x);
    d.z = add_rn(d.z, t2y);
    T z = mul_rn(T(2), k);
    a.w = add_rn(a.w, z);
    c.w = add_rn(c.w, z);
}
