// What an edge reads of each of its cells (Side) and what it gives back to them (EdgeFlux),
// shared by flux.cuh, wetdry.cuh, boundary.cuh, reconstruct.cuh and source.cuh: a mirror of
// src/physics/edge.rs.
#pragma once

// The stored numbers: thickness deviations from the model's reference rest state.
template <typename T> struct Side { T d1, q1x, q1y, d2, q2x, q2y, depth; };

template <typename T> __device__ __forceinline__ T side_h1(const Model<T>& m, const Side<T>& s) { return s.d1 + m.ref_h1; }
template <typename T> __device__ __forceinline__ T side_h2(const Model<T>& m, const Side<T>& s) {
    return (s.d2 + m.ref_interface) + s.depth;
}
template <typename T>
__device__ __forceinline__ Side<T> side_from_thickness(const Model<T>& m, T h1, T q1x, T q1y, T h2, T q2x, T q2y, T depth) {
    Side<T> s = {h1 - m.ref_h1, q1x, q1y, (h2 - depth) - m.ref_interface, q2x, q2y, depth};
    return s;
}
template <typename T>
__device__ __forceinline__ Side<T> side_from_elevations(const Model<T>& m, T surface, T interface, T q1x, T q1y, T q2x,
                                                        T q2y, T depth) {
    T d2 = interface - m.ref_interface;
    Side<T> s = {(surface - m.ref_surface) - d2, q1x, q1y, d2, q2x, q2y, depth};
    return s;
}
// What one edge gives its two cells.
template <typename T> struct EdgeFlux { T i[6]; T j[6]; T speed; bool fallback; };
