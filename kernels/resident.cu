// Device-resident steps (src/solver/cuda/resident.rs): the same edge, time-step and update
// kernels as solver.cu, but the global time step, its clip to the next output or end time,
// the time itself and the step count live in device memory (Control), so the host can
// enqueue many steps (a CUDA graph) and read back only when it needs to. Each step is the
// host loop's step (src/solver/stepper.rs) done by the device, with the same float64
// arithmetic, so the results are bit for bit those of the host-driven loop.
//
// A stop flag makes every later kernel of the batch a no-op: the step that reaches the
// target (an output or the end) or the batch's step limit is completed and then nothing
// moves; a cell that went unphysical in the previous update, or no positive finite time
// step, stops before the update, so the last good state is kept as on the host path.

struct Control {
    double t;        // time at the start of the next step (the end of the last one)
    double target;   // the next output time or the end time
    double dt;       // the last step's length
    double dt_min;   // smallest and largest step of the batch
    double dt_max;
    double t_step;   // the last step's start time (for the update's sources)
    double dt_min_unclipped;  // smallest step of the batch not clipped to the target
    double pad1;
    unsigned long long stop;    // 0 running, 1 target or step limit reached, 2 a cell went
                                // unphysical (in the update before), 3 no positive finite step,
                                // 4 another GPU did not answer (peer.cu)
    unsigned long long steps;   // steps completed in this batch
    unsigned long long limit;   // at most this many steps in this batch
    unsigned long long blocks;  // blocks of the time-step kernel done (the last one finalizes)
    unsigned long long hit;     // the last step reached the target
    unsigned long long clipped; // the last step was cut short of the CFL step to reach it
    // Several GPUs: this rank's smallest step as the complement of its bit pattern, and its
    // health flag, for one NCCL all-reduce (max) of both words; then finalize_resident.
    unsigned long long reduce_dt, reduce_bad;
    // Exchanges before this batch (the GPU-to-GPU stores of peer.cu number theirs from it).
    unsigned long long seq;
};

// Programmatic dependent launch (Hopper): a kernel launched with the attribute may start
// while the kernel before it on the stream finishes; it waits here, before reading anything
// that kernel wrote, so the results are those of a plain launch. A no-op otherwise.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Let the next kernel on the stream be scheduled now (its blocks then wait in pdl_wait for
// this whole kernel): on a mesh whose kernels are one wave of blocks, the next kernel's launch
// then overlaps this one instead of following it. Called after this kernel's own pdl_wait, so
// that at most two kernels are in flight (called first, every kernel of a graph would be
// scheduled at once). On larger meshes the waiting blocks take room this kernel's later waves
// need (64222 cells: 1.5% slower; BENCHMARKS.md, issue 20), so the host asks for it by size.
__device__ __forceinline__ void pdl_trigger(int early) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (early) asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

__device__ __forceinline__ double dt_from_min_bits(unsigned long long bits, float) {
    return bits > 0xffffffffull ? __longlong_as_double(0x7ff8000000000000ll) : (double)__uint_as_float((unsigned)bits);
}
__device__ __forceinline__ double dt_from_min_bits(unsigned long long bits, double) {
    return bits == ~0ull ? __longlong_as_double(0x7ff8000000000000ll) : __longlong_as_double((long long)bits);
}

// The host loop's choice of step (stepper.rs), by the last block of the time-step kernel.
// Reads the control block's words from `in` and writes them to `c`: `in` is *c itself, or
// (peer.cu) a copy loaded while the other GPUs' minima were awaited.
template <typename T>
__device__ void finalize_from(const Control& in, Control* c, unsigned long long bits, unsigned long long bad) {
    c->blocks = 0;
    if (bad != 0) { c->stop = 2; return; }
    double dt_cfl = dt_from_min_bits(bits, T(0));
    if (!(isfinite(dt_cfl) && dt_cfl > 0.0)) { c->stop = 3; return; }
    double t = in.t, target = in.target;
    double remaining = target - t;
    bool hits = dt_cfl >= remaining;
    double dt = hits ? remaining : dt_cfl;
    c->t_step = t;
    c->dt = dt;
    c->t = hits ? target : t + dt;
    bool clipped = dt_cfl > remaining;
    c->dt_min = fmin(in.dt_min, dt);
    if (!clipped) c->dt_min_unclipped = fmin(in.dt_min_unclipped, dt);
    c->dt_max = fmax(in.dt_max, dt);
    c->clipped = clipped ? 1ull : 0ull;
    unsigned long long steps = in.steps + 1;
    c->steps = steps;
    c->hit = hits ? 1ull : 0ull;
    if (hits || steps >= in.limit) c->stop = 1;
}

template <typename T>
__device__ void finalize_step(Control* c, unsigned long long bits, unsigned long long bad) {
    finalize_from<T>(*c, c, bits, bad);
}

// The time step's minimum over the owned cells with few blocks (each thread takes cells
// c, c + stride, ...): the last block to finish then finds the step, and there are few
// blocks to count (one counter per block on 10^7 cells cost 20% of a step). The minimum of
// bit patterns does not depend on the order, so this equals dt_kernel's result.
//
// With several GPUs (`finalize` 0) the last block leaves this rank's minimum and health flag
// in the control block: one NCCL all-reduce (max of both words) follows on the stream, then
// finalize_resident takes the step from the reduced words, the same on every rank. With
// `finalize` 2 (peer.cu) it leaves them in `out` only, and the caller resets c->blocks: the
// caller trades them with the other GPUs at once, without a store and a load of its own.
// `check_stop` false: the caller read the stop flag already. With `rest` the minimum is over
// the cells listed there only, their words in the list's order (order2.cu, RestArrays): at
// order 2 the first stage's tiles took the others' (TILE_SUMS) into the same word before this
// kernel.
// Whether this block was the last (every thread gets it).
template <typename T>
__device__ __forceinline__ bool dt_resident(const Arrays<T>& a, T two_gamma, Control* c, int finalize,
                                            bool check_stop = true, unsigned long long* out = nullptr,
                                            const RestArrays<T>* rest = nullptr) {
    if (check_stop && *(volatile unsigned long long*)&c->stop != 0) return false;
    unsigned long long bits = ~0ull;
    long long stride = (long long)gridDim.x * blockDim.x;
    long long n = rest != nullptr ? rest->n : a.n_owned;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
        unsigned long long b = rest != nullptr ? rest_dt_bits(*rest, (int)k, two_gamma)
                                               : cell_dt_bits(a.v2, a.acc, a.stride, k, two_gamma);
        bits = b < bits ? b : bits;
    }
    bits = block_min_bits(bits);
    __shared__ bool last;
    if (threadIdx.x == 0) {
        atomicMin(&a.scratch[0], bits);
        // The last block to finish sees every block's minimum.
        __threadfence();
        last = atomicAdd(&c->blocks, 1ull) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        __threadfence();
        unsigned long long min_bits = atomicAdd(&a.scratch[0], 0ull);
        unsigned long long bad = atomicAdd(&a.scratch[1], 0ull);
        if (finalize == 1) {
            finalize_step<T>(c, min_bits, bad);
        } else if (finalize == 0) {
            c->blocks = 0;
            c->reduce_dt = ~min_bits;
            c->reduce_bad = bad;
        } else {
            out[0] = min_bits;
            out[1] = bad;
        }
    }
    return last;
}

// Step k of the batch (from 0) updates cell `cell` only if the step was taken (its time step
// was chosen); whether it was (the same in every thread). The control block's words and the
// cell's are loaded together (one memory latency, not two).
template <typename T>
__device__ __forceinline__ bool update_step(const Arrays<T>& a, const Model<T>& m, const Control* c,
                                            unsigned long long k, int cell) {
    unsigned long long steps = *(const volatile unsigned long long*)&c->steps;
    T dt = (T)c->dt;
    bool mine = cell < a.n_owned;
    CellWords<T> w = cell_words<T>(a.v1, a.v2, a.lo, a.acc, a.stride, mine ? cell : 0);
    if (steps != k + 1) return false;
    if (cell == 0) a.scratch[0] = ~0ull;  // the dt minimum, reset for the next step
    if (mine) update_cell<T>(w, cell, a.o1, a.o2, a.olo, a.acc, a.stride, m, dt, a.scratch, a.coriolis);
    return true;
}

#define PYCNO_RESIDENT(T, SUFFIX)                                                                                 \
    /* Edges begin..end (all, or the interior and the communication edges of a rank). */                     \
    extern "C" __global__ void edge_resident_##SUFFIX(Arrays<T> a, Model<T> m, int begin, int end,              \
                                                       const Control* c, int early) {                           \
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        if (*(const volatile unsigned long long*)&c->stop != 0) return;                                          \
        edge_kernel<T, false>(a.v1, a.v2, a.ecells, a.enormal, a.boundaries, a.acc, a.stride, begin, end, m,     \
                              (T)c->t, a.scratch, a.evisc);                                                      \
    }                                                                                                             \
    /* The same with the horizontal viscosity (solver.cu's edge_visc). */                                        \
    extern "C" __global__ void edge_visc_resident_##SUFFIX(Arrays<T> a, Model<T> m, int begin, int end,         \
                                                            const Control* c, int early) {                      \
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        if (*(const volatile unsigned long long*)&c->stop != 0) return;                                          \
        edge_kernel<T, true>(a.v1, a.v2, a.ecells, a.enormal, a.boundaries, a.acc, a.stride, begin, end, m,      \
                             (T)c->t, a.scratch, a.evisc);                                                       \
    }                                                                                                             \
    /* finalize: 1 one GPU, 0 NCCL's all-reduce follows (peer.cu's mode 2 is not taken here). */                \
    extern "C" __global__ void dt_resident_##SUFFIX(Arrays<T> a, T two_gamma, Control* c, int finalize,          \
                                                     int early) {                                                 \
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        dt_resident<T>(a, two_gamma, c, finalize != 0);                                                           \
    }                                                                                                             \
    /* Order 2 on one GPU: the listed cells only (order2.cu, RestArrays), the others' taken by the tiles. */     \
    extern "C" __global__ void dt_rest_resident_##SUFFIX(Arrays<T> a, T two_gamma, Control* c, RestArrays<T> r,  \
                                                          int early) {                                            \
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        dt_resident<T>(a, two_gamma, c, 1, true, nullptr, &r);                                                    \
    }                                                                                                             \
    /* One thread, after the all-reduce of the ranks' minima and health flags. */                               \
    extern "C" __global__ void finalize_resident_##SUFFIX(Arrays<T> a, Control* c) {                             \
        pdl_wait();                                                                                               \
        if (*(volatile unsigned long long*)&c->stop != 0) return;                                                \
        finalize_step<T>(c, ~c->reduce_dt, c->reduce_bad);                                                      \
    }                                                                                                             \
    /* Step k of the batch (from 0) updates only if it was taken: its time step was chosen. */                   \
    extern "C" __global__ void update_resident_##SUFFIX(Arrays<T> a, Model<T> m, const Control* c,               \
                                                         unsigned long long k, int early) {                      \
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        update_step<T>(a, m, c, k, blockIdx.x * blockDim.x + threadIdx.x);                                      \
    }

PYCNO_RESIDENT(float, f32)
PYCNO_RESIDENT(double, f64)

// Second order (physics.order = 2, order2.cu), one GPU: a step is two stages of the host
// loop's order-2 step (stepper.rs), each a reconstruction, an edge pass and an update, with
// the time step between the first stage's edge pass and its update (dt_resident above). The
// first stage's reconstruction and edges run while the batch runs (stop == 0), as the first
// order's edge pass; its update and the whole second stage only if the step was taken (its
// time step chosen: steps == k + 1), as the host takes the second stage only after the first
// stage's update. The second stage's edges are at the stage's time t + dt, in float64 as on
// the host. Each kernel calls order2.cu's function as the host-driven kernel does.
// (A second stage's halo that did not arrive, stop 4 on several GPUs, stops the rest of it.)
__device__ __forceinline__ bool stage_runs(const Control* c, unsigned long long k, int stage) {
    if (stage == 0) return *(const volatile unsigned long long*)&c->stop == 0;
    return *(const volatile unsigned long long*)&c->steps == k + 1 && *(const volatile unsigned long long*)&c->stop != 4;
}
// The time of a stage's edge pass: the step's start, or t + dt (the host loop's float64 sum).
template <typename T> __device__ __forceinline__ T stage_time(const Control* c, int stage) {
    return stage == 0 ? (T)c->t : (T)__dadd_rn(c->t_step, c->dt);
}

// TILE_BOUNDS: as order2.cu's tile kernel.
#define PYCNO_RESIDENT2(T, SUFFIX, TILE_BOUNDS)                                                                   \
    extern "C" __global__ void reconstruct_resident_##SUFFIX(Arrays<T> a, Order2Arrays<T> o, Model<T> m,        \
                                                              int begin, int end, int want, const Control* c,     \
                                                              unsigned long long k, int stage, int early) {       \
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        if (!stage_runs(c, k, stage)) return;                                                                     \
        reconstruct_kernel<T>(a.v1, a.v2, o.across, o.wr, o.ln, o.recon, o.faces, o.interior, o.n_cells, begin,  \
                              end, want, m);                                                                      \
    }                                                                                                             \
    extern "C" __global__ void edge2_resident_##SUFFIX(Arrays<T> a, Order2Arrays<T> o, Model<T> m, int e_begin,  \
                                                        int e_end, const Control* c, unsigned long long k,        \
                                                        int stage, int early) {                                   \
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        if (!stage_runs(c, k, stage)) return;                                                                     \
        T t = stage_time<T>(c, stage);                                                                            \
        edge2_kernel<T>(a.v1, a.v2, a.ecells, a.enormal, a.boundaries, o.faces, o.depth, a.acc, a.stride,        \
                        e_begin, e_end, m, t, a.scratch, a.evisc);                                                \
    }                                                                                                             \
    extern "C" __global__ void TILE_BOUNDS tile2_resident_##SUFFIX(Arrays<T> a, Order2Arrays<T> o,              \
                                                                    TileArrays<T> ta, Model<T> m, int tile_begin, \
                                                                    const Control* c, unsigned long long k,       \
                                                                    int stage, int early) {                       \
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        if (!stage_runs(c, k, stage)) return;                                                                     \
        T t = stage_time<T>(c, stage);                                                                            \
        tile2_kernel<T, TILE_PLAIN>(a, o, ta, RestArrays<T>{}, tile_begin + blockIdx.x, m, t, T(0),              \
                                    pycno_tile_records);                                                          \
    }                                                                                                             \
    /* The first stage's tiles summing their marked cells' slots and taking their time steps (order2.cu). */    \
    extern "C" __global__ void TILE_BOUNDS tile2_sums_resident_##SUFFIX(                                         \
        Arrays<T> a, Order2Arrays<T> o, TileArrays<T> ta, RestArrays<T> r, Model<T> m, int tile_begin,           \
        const Control* c, unsigned long long k, T two_gamma, int early) {                                         \
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        if (!stage_runs(c, k, 0)) return;                                                                         \
        T t = stage_time<T>(c, 0);                                                                                \
        tile2_kernel<T, TILE_SUMS>(a, o, ta, r, tile_begin + blockIdx.x, m, t, two_gamma, pycno_tile_records);    \
    }                                                                                                             \
    /* The second stage's tiles finishing their cells (order2.cu), with the step's dt. */                       \
    extern "C" __global__ void TILE_BOUNDS tile2_finish_resident_##SUFFIX(                                       \
        Arrays<T> a, Order2Arrays<T> o, TileArrays<T> ta, RestArrays<T> r, Model<T> m, int tile_begin,           \
        const Control* c, unsigned long long k, int early) {                                                      \
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        if (!stage_runs(c, k, 1)) return;                                                                         \
        T t = stage_time<T>(c, 1);                                                                                \
        tile2_kernel<T, TILE_FINISH>(a, o, ta, r, tile_begin + blockIdx.x, m, t, (T)c->dt, pycno_tile_records);   \
    }                                                                                                             \
    /* rest: the listed cells to update (cells null: every owned cell); summed: the cells whose sums the */      \
    /* tiles stored (null: none; order2.cu). */                                                                  \
    extern "C" __global__ void update2_resident_##SUFFIX(Arrays<T> a, Order2Arrays<T> o, Model<T> m,            \
                                                          const Control* c, unsigned long long k, int second,     \
                                                          RestArrays<T> rest, const unsigned* summed, int early) {\
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        if (!stage_runs(c, k, 1)) return;                                                                         \
        update2_kernel<T>(a.v1, a.v2, a.lo, a.o1, a.o2, a.olo, a.acc, o.interior, a.stride, a.n_owned, m,         \
                          (T)c->dt, a.scratch, a.coriolis, second, rest, summed);                                 \
    }

PYCNO_RESIDENT2(float, f32, __launch_bounds__(256, 3))
PYCNO_RESIDENT2(double, f64, )
