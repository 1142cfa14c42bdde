//! Running single physics functions on the GPU (`kernels/probe.cu`), so that the tests can
//! compare the CUDA mirror with `src/physics` function by function on many inputs.

use super::launch::{grid, CudaReal};
use crate::physics::extremes::{Arrival, WIDTH};
use crate::physics::reconstruct::{Stencil, VARS};
use crate::physics::{Boundary, EdgeFlux, Model, Side};
use anyhow::{Context, Result};
use cudarc::driver::{CudaModule, CudaStream, PushKernelArg};
use std::sync::Arc;

/// What `physics::settle` leaves: the state, its low parts, and whether it was admissible.
pub type Settled<T> = (Side<T>, [T; 2], bool);

/// One cell to reconstruct (`reconstruct::cell`): its records, what lies across each slot
/// (`Layout::across`: a cell, or a boundary ghost), the records across (read where
/// `across[k] >= 0`) and its stencil.
#[derive(Clone, Copy, Debug)]
pub struct CellInput<T> {
    pub a: [T; 4],
    pub b: [T; 4],
    pub across: [i32; 3],
    pub nb: [([T; 4], [T; 4]); 3],
    pub st: Stencil<T>,
}

/// A cell's limited gradients and its stored numbers at its three edge midpoints.
pub type Reconstruction<T> = ([[T; 2]; VARS], [[T; VARS]; 3]);
/// The cell-interior term's inputs: the cell's `d1`, `d2`, its faces' `d1` and `d2`, the
/// slots' outward normals times lengths, its depth.
pub type InteriorInput<T> = (T, T, [T; 3], [T; 3], [[T; 2]; 3], T);
/// An interior edge at second order: the edge values `fi`, `fj`, the means `ci`, `cj`, the normal.
pub type Edge2<T> = (Side<T>, Side<T>, Side<T>, Side<T>, [T; 2]);
/// A boundary edge at second order: the edge value `fi`, the mean `ci`, the normal, the time.
pub type BoundaryEdge2<T> = (Side<T>, Side<T>, [T; 2], T);

pub struct Probes<'a, T> {
    stream: &'a Arc<CudaStream>,
    module: &'a Arc<CudaModule>,
    model: Model<T>,
}

fn side_values<T: Copy>(s: &Side<T>) -> [T; 7] {
    [s.d1, s.q1[0], s.q1[1], s.d2, s.q2[0], s.q2[1], s.depth]
}

fn side_from<T: Copy>(x: &[T]) -> Side<T> {
    Side { d1: x[0], q1: [x[1], x[2]], d2: x[3], q2: [x[4], x[5]], depth: x[6] }
}

fn flux_from<T: CudaReal>(x: &[T]) -> EdgeFlux<T> {
    EdgeFlux {
        i: std::array::from_fn(|k| x[k]),
        j: std::array::from_fn(|k| x[6 + k]),
        speed: x[12],
        fallback: x[13] != T::zero(),
    }
}

impl<'a, T: CudaReal> Probes<'a, T> {
    pub fn new(stream: &'a Arc<CudaStream>, module: &'a Arc<CudaModule>, model: Model<T>) -> Self {
        Probes { stream, module, model }
    }

    /// Run `probe_{name}_{T}` over `n` samples of `input` (flattened), returning `out_per`
    /// values per sample. `extra` is pushed between the model and the arrays (a boundary).
    fn run(&self, name: &str, input: &[T], n: usize, out_per: usize, boundary: Option<&Boundary<T>>) -> Result<Vec<T>> {
        let f = self
            .module
            .load_function(&format!("probe_{name}_{}", T::SUFFIX))
            .with_context(|| format!("probe kernel {name} missing"))?;
        let dev_in = self.stream.clone_htod(input)?;
        let mut dev_out = self.stream.alloc_zeros::<T>(n * out_per)?;
        let count = n as i32;
        let mut l = self.stream.launch_builder(&f);
        l.arg(&self.model);
        if let Some(b) = boundary {
            l.arg(b);
        }
        l.arg(&dev_in).arg(&mut dev_out).arg(&count);
        // SAFETY: the arguments of probe_{name}_{T} in kernels/probe.cu, in order.
        unsafe { l.launch(grid(n)) }.with_context(|| format!("launching probe {name}"))?;
        Ok(self.stream.clone_dtoh(&dev_out)?)
    }

    /// Eigenvalues and hyperbolicity for samples `(h1, u1, h2, u2)`.
    pub fn eigenvalues(&self, samples: &[[T; 4]]) -> Result<Vec<([T; 4], bool)>> {
        let out = self.run("eigenvalues", bytemuck::cast_slice(samples), samples.len(), 5, None)?;
        Ok(out.chunks_exact(5).map(|x| ([x[0], x[1], x[2], x[3]], x[4] != T::zero())).collect())
    }

    /// The numerical flux for each `(wi, wj, n)`.
    pub fn flux(&self, samples: &[(Side<T>, Side<T>, [T; 2])]) -> Result<Vec<EdgeFlux<T>>> {
        let input: Vec<T> =
            samples.iter().flat_map(|(a, b, n)| side_values(a).into_iter().chain(side_values(b)).chain(*n)).collect();
        let out = self.run("flux", &input, samples.len(), 14, None)?;
        Ok(out.chunks_exact(14).map(flux_from).collect())
    }

    /// Ghost state and boundary flux of boundary `b` for each `(inner, n, t)`.
    pub fn boundary(&self, b: &Boundary<T>, samples: &[(Side<T>, [T; 2], T)]) -> Result<Vec<(Side<T>, EdgeFlux<T>)>> {
        let input: Vec<T> =
            samples.iter().flat_map(|(w, n, t)| side_values(w).into_iter().chain(*n).chain([*t])).collect();
        let out = self.run("boundary", &input, samples.len(), 21, Some(b))?;
        Ok(out.chunks_exact(21).map(|x| (side_from(&x[..7]), flux_from(&x[7..]))).collect())
    }

    /// The state after the source terms, for each `(state, dt)`.
    pub fn source(&self, samples: &[(Side<T>, T)]) -> Result<Vec<Side<T>>> {
        let input: Vec<T> = samples.iter().flat_map(|(s, dt)| side_values(s).into_iter().chain([*dt])).collect();
        let out = self.run("source", &input, samples.len(), 7, None)?;
        Ok(out.chunks_exact(7).map(side_from).collect())
    }

    /// The extremes of each state `(h1, q1x, q1y, h2, q2x, q2y)`: started from it, and the
    /// given extremes with it folded in at time `t`.
    pub fn extremes(
        &self,
        states: &[[T; 6]],
        ext: &[[f64; WIDTH]],
        t: f64,
        a: Arrival,
    ) -> Result<Vec<([f64; WIDTH], [f64; WIDTH])>> {
        let f = self.module.load_function(&format!("probe_extremes_{}", T::SUFFIX))?;
        let n = states.len();
        let dev_in = self.stream.clone_htod(bytemuck::cast_slice::<[T; 6], T>(states))?;
        let dev_ext = self.stream.clone_htod(bytemuck::cast_slice::<[f64; WIDTH], f64>(ext))?;
        let mut dev_out = self.stream.alloc_zeros::<f64>(n * 2 * WIDTH)?;
        let (count, threshold, surface) = (n as i32, a.threshold, i32::from(a.surface));
        let mut l = self.stream.launch_builder(&f);
        l.arg(&dev_in).arg(&dev_ext).arg(&mut dev_out).arg(&count).arg(&t).arg(&threshold).arg(&surface);
        // SAFETY: the arguments of probe_extremes_{T} in kernels/probe.cu, in order.
        unsafe { l.launch(grid(n)) }.context("launching probe extremes")?;
        let out = self.stream.clone_dtoh(&dev_out)?;
        Ok(out
            .chunks_exact(2 * WIDTH)
            .map(|x| (std::array::from_fn(|k| x[k]), std::array::from_fn(|k| x[WIDTH + k])))
            .collect())
    }

    /// `physics::settle` for each `(state, low parts)`: the state, low parts and whether it
    /// was admissible.
    pub fn settle(&self, samples: &[(Side<T>, [T; 2])]) -> Result<Vec<Settled<T>>> {
        let input: Vec<T> = samples.iter().flat_map(|(s, lo)| side_values(s).into_iter().chain(*lo)).collect();
        let out = self.run("settle", &input, samples.len(), 10, None)?;
        Ok(out.chunks_exact(10).map(|x| (side_from(&x[..7]), [x[7], x[8]], x[9] != T::zero())).collect())
    }

    /// One cell's reconstruction (`reconstruct::cell`, the reconstruction kernel's `rc_cell`)
    /// for each input.
    pub fn reconstruct(&self, samples: &[CellInput<T>]) -> Result<Vec<Reconstruction<T>>> {
        let code = |o: i32| T::c(if o >= 0 { 0.0 } else { o as f64 });
        let input: Vec<T> = samples
            .iter()
            .flat_map(|c| {
                let mut x = Vec::with_capacity(53);
                x.extend(c.a.into_iter().chain(c.b));
                x.extend(c.across.map(code));
                x.extend(c.nb.iter().flat_map(|n| n.0));
                x.extend(c.nb.iter().flat_map(|n| n.1));
                x.extend(c.st.w.iter().flatten().chain(c.st.r.iter().flatten()).chain(c.st.ln.iter().flatten()));
                x
            })
            .collect();
        let out = self.run("reconstruct", &input, samples.len(), 30, None)?;
        Ok(out
            .chunks_exact(30)
            .map(|y| {
                let g = std::array::from_fn(|v| [y[2 * v], y[2 * v + 1]]);
                let f = std::array::from_fn(|k| std::array::from_fn(|v| y[12 + VARS * k + v]));
                (g, f)
            })
            .collect())
    }

    /// The cell-interior term (`reconstruct::interior`) for each input.
    pub fn interior(&self, samples: &[InteriorInput<T>]) -> Result<Vec<[T; VARS]>> {
        let input: Vec<T> = samples
            .iter()
            .flat_map(|(d1, d2, f1, f2, ln, depth)| {
                [*d1, *d2].into_iter().chain(*f1).chain(*f2).chain(ln.iter().flatten().copied()).chain([*depth])
            })
            .collect();
        let out = self.run("interior", &input, samples.len(), VARS, None)?;
        Ok(out.chunks_exact(VARS).map(|y| std::array::from_fn(|v| y[v])).collect())
    }

    /// The second-order flux (`reconstruct::edge_flux`) for each `(fi, fj, ci, cj, n)`.
    pub fn edge_flux(&self, samples: &[Edge2<T>]) -> Result<Vec<EdgeFlux<T>>> {
        let input: Vec<T> = samples
            .iter()
            .flat_map(|(fi, fj, ci, cj, n)| {
                side_values(fi)
                    .into_iter()
                    .chain(side_values(fj))
                    .chain(side_values(ci))
                    .chain(side_values(cj))
                    .chain(*n)
            })
            .collect();
        let out = self.run("edge_flux", &input, samples.len(), 14, None)?;
        Ok(out.chunks_exact(14).map(flux_from).collect())
    }

    /// The second-order boundary flux (`reconstruct::edge_boundary_flux`) of boundary `b` for
    /// each `(fi, ci, n, t)`.
    pub fn edge_boundary_flux(&self, b: &Boundary<T>, samples: &[BoundaryEdge2<T>]) -> Result<Vec<EdgeFlux<T>>> {
        let input: Vec<T> = samples
            .iter()
            .flat_map(|(fi, ci, n, t)| side_values(fi).into_iter().chain(side_values(ci)).chain(*n).chain([*t]))
            .collect();
        let out = self.run("edge_boundary_flux", &input, samples.len(), 14, Some(b))?;
        Ok(out.chunks_exact(14).map(flux_from).collect())
    }

    /// `sizeof` of `Model<T>`, `Boundary<T>`, `Arrays<T>` and `Order2Arrays<T>` as the CUDA
    /// compiler sees them.
    pub fn struct_sizes(&self) -> Result<[i64; 4]> {
        let f = self.module.load_function(&format!("probe_sizes_{}", T::SUFFIX))?;
        let mut out = self.stream.alloc_zeros::<i64>(4)?;
        let mut l = self.stream.launch_builder(&f);
        l.arg(&mut out);
        // SAFETY: probe_sizes_{T} takes one long long pointer and writes four.
        unsafe { l.launch(grid(1)) }?;
        let v = self.stream.clone_dtoh(&out)?;
        Ok([v[0], v[1], v[2], v[3]])
    }
}
