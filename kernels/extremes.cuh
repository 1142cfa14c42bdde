// Per-cell extremes over a run (output.max_maps): mirrors src/physics/extremes.rs operation
// by operation (change both together; tests/gpu_probes.rs compares them). Computed and kept
// in double whatever the run's float type; every operation rounded on its own (no fused
// multiply-add), as on the CPU.
#pragma once

#define E_WIDTH 8
#define E_SURFACE_MAX 0
#define E_INTERFACE_MAX 1
#define E_INTERFACE_MIN 2
#define E_SPEED1_MAX 3
#define E_SPEED2_MAX 4
#define E_ARRIVAL 5
#define E_REFERENCE 6

struct Arrival {
    double threshold;
    int surface;  // follow the free surface (else the interface)
    int reserved;
};

// 0 where the layer is absent (h <= 0), as the frames' velocity there (not 0/0).
__device__ __forceinline__ double ext_speed(double qx, double qy, double h) {
    if (h <= 0.0) return 0.0;
    double u = __ddiv_rn(qx, h), v = __ddiv_rn(qy, h);
    return __dsqrt_rn(__dadd_rn(__dmul_rn(u, u), __dmul_rn(v, v)));
}

// The extremes of a cell at the start of a run.
template <typename T>
__device__ __forceinline__ void ext_start(double* e, T h1_, T q1x, T q1y, T h2_, T q2x, T q2y, Arrival a) {
    double h1 = (double)h1_, h2 = (double)h2_;
    double s = __dadd_rn(h1, h2);
    e[E_SURFACE_MAX] = s;
    e[E_INTERFACE_MAX] = h2;
    e[E_INTERFACE_MIN] = h2;
    e[E_SPEED1_MAX] = ext_speed((double)q1x, (double)q1y, h1);
    e[E_SPEED2_MAX] = ext_speed((double)q2x, (double)q2y, h2);
    e[E_ARRIVAL] = -1.0;
    e[E_REFERENCE] = a.surface ? s : h2;
    e[7] = 0.0;
}

// f64::max / f64::min of Rust: a NaN operand gives the other one.
__device__ __forceinline__ double ext_max(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ double ext_min(double a, double b) { return fmin(a, b); }

// Fold the state of a cell at time t (the end of a step) into its extremes.
template <typename T>
__device__ __forceinline__ void ext_fold(double* e, T h1_, T q1x, T q1y, T h2_, T q2x, T q2y, double t, Arrival a) {
    double h1 = (double)h1_, h2 = (double)h2_;
    double s = __dadd_rn(h1, h2);
    e[E_SURFACE_MAX] = ext_max(e[E_SURFACE_MAX], s);
    e[E_INTERFACE_MAX] = ext_max(e[E_INTERFACE_MAX], h2);
    e[E_INTERFACE_MIN] = ext_min(e[E_INTERFACE_MIN], h2);
    e[E_SPEED1_MAX] = ext_max(e[E_SPEED1_MAX], ext_speed((double)q1x, (double)q1y, h1));
    e[E_SPEED2_MAX] = ext_max(e[E_SPEED2_MAX], ext_speed((double)q2x, (double)q2y, h2));
    if (e[E_ARRIVAL] < 0.0) {
        double x = a.surface ? s : h2;
        if (fabs(__dsub_rn(x, e[E_REFERENCE])) > a.threshold) e[E_ARRIVAL] = t;
    }
}
