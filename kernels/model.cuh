// The model's parameters, one struct passed to every kernel: mirrors Model in
// src/physics/model.rs field for field (tests/gpu_probes.rs checks the two agree).
#pragma once

template <typename T> struct Model {
    T g;                // gravity
    T r;                // density ratio rho1 / rho2
    T linear_friction;  // linear bottom friction on the lower layer (m/s); 0 for none
    T ref_surface;      // the reference rest state's free-surface elevation
    T ref_interface;    // the reference interface elevation: h2 = (d2 + ref_interface) + H
    T ref_h1;           // layer 1's thickness in the reference rest state: h1 = d1 + ref_h1
    T dry_tolerance;    // a layer at or below this thickness is absent (wetdry.cuh)
    T thin;             // an edge with a layer thinner than this takes the dry-aware flux
    T manning;          // Manning's n of the bottom (lower layer); 0 for none
    T interlayer_friction;  // quadratic interlayer friction coefficient; 0 for none
    T coriolis_f;       // Coriolis parameter f (1/s); 0 for none; on a beta-plane, f at y0
    int coriolis_per_cell;  // 1 on a beta-plane: each cell's f from the per-cell array
    T wind_x;           // kinematic wind stress on the upper layer (m^2/s^2)
    T wind_y;
    T shear_bound;      // kappa g (1 - r): the largest |u1 - u2|^2 per metre of water (shear.cuh); 0 for none
};

// Whether any cell source term is on (Model::has_sources).
template <typename T> __device__ __forceinline__ bool has_sources(const Model<T>& m) {
    return m.linear_friction > T(0) || m.manning > T(0) || m.interlayer_friction > T(0) || m.coriolis_f != T(0) ||
           m.coriolis_per_cell != 0 ||
           m.wind_x != T(0) || m.wind_y != T(0) || m.shear_bound > T(0);
}
