//! Boundary conditions: the ghost state beyond a boundary edge, and the flux through it.
//! `kernels/boundary.cuh` mirrors this file.
//!
//! A boundary edge's fourth integer in the solver's layout holds an index into the run's
//! boundary table ([`Boundaries`]: what each entry prescribes over time, [`BoundarySpec`],
//! evaluated once a step into a list of [`Boundary`] records, kind and parameters), so a
//! boundary kind costs no memory per edge. The flux through a boundary edge is the interior flux
//! ([`numerical_flux`]) between the cell and its ghost; a wall then sets the mass fluxes to
//! exactly zero.
//!
//! Adding a kind: a [`BoundaryKind`] variant with the next number, its ghost state in
//! [`ghost`], the same in `kernels/boundary.cuh`, the scenario's words for it
//! (`scenario/boundaries.rs`), tests: the guide's "Adding physics" lists every place.

use super::edge::{EdgeFlux, Side};
use super::flux::numerical_flux;
use super::forcing::TimeFunction;
use super::{Model, Real};
use std::collections::BTreeMap;

/// What a boundary does. The numbers are the `kind` of [`Boundary`] on the GPU too.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundaryKind {
    /// No flow through the boundary: the ghost is the mirror image of the cell (normal
    /// momenta reversed) and the mass flux is exactly zero.
    Wall = 0,
    /// Radiating (Flather-type): the ghost keeps the outgoing external and internal waves of
    /// the cell and nothing incoming, so outgoing waves leave and the water beyond is at rest
    /// (see [`open_ghost`]).
    Open = 1,
    /// Prescribed free-surface (`data[0]`, given when `data[2]` is 1) and interface
    /// (`data[1]`, given when `data[3]` is 1) elevations, as deviations from the reference
    /// levels; one not given is the cell's. The ghost's normal velocities follow from the
    /// outgoing characteristics (linearized about the cell: see [`elevation_ghost`]).
    Elevation = 2,
    /// Prescribed volume flux into the domain per unit length of boundary, layer 1 in
    /// `data[0]` (when `data[2]` is 1) and layer 2 in `data[1]` (when `data[3]` is 1); a layer
    /// not given is open. The mass flux of a given layer is set to exactly that value.
    Discharge = 3,
}

impl BoundaryKind {
    pub const ALL: [BoundaryKind; 4] =
        [BoundaryKind::Wall, BoundaryKind::Open, BoundaryKind::Elevation, BoundaryKind::Discharge];

    /// The scenario's word for the kind.
    pub fn name(self) -> &'static str {
        match self {
            BoundaryKind::Wall => "wall",
            BoundaryKind::Open => "open",
            BoundaryKind::Elevation => "elevation",
            BoundaryKind::Discharge => "discharge",
        }
    }
}

/// Words of a boundary's parameters (what a kind means by each is its own business).
pub const BOUNDARY_DATA: usize = 8;

/// One entry of the boundary table, as the kernels read it (`kernels/boundary.cuh`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Boundary<T> {
    /// A [`BoundaryKind`] as its number.
    pub kind: i32,
    /// Keeps `data` aligned for f64 and the C layout free of implicit padding.
    pub reserved: i32,
    pub data: [T; BOUNDARY_DATA],
}

impl<T: Real> Boundary<T> {
    pub fn wall() -> Boundary<T> {
        Boundary { kind: BoundaryKind::Wall as i32, reserved: 0, data: [T::zero(); BOUNDARY_DATA] }
    }
}

/// What one entry of the boundary table prescribes, in float64 over time. `values` are the
/// kind's two quantities (an `elevation`: the free surface and the interface elevation; a
/// `discharge`: layer 1's and layer 2's volume flux into the domain, m³/s); `None` leaves
/// that one to the interior (open). The table holds `(value - offset) * scale`: an
/// elevation less the reference level (`offset`; so that an elevation at the reference level
/// is an exact zero in float32, as the stored state is), a discharge times one over the
/// tag's total length (`scale`; so that the table holds m²/s).
#[derive(Clone, Debug, PartialEq)]
pub struct BoundarySpec {
    pub kind: BoundaryKind,
    pub values: [Option<TimeFunction>; 2],
    pub offset: [f64; 2],
    pub scale: f64,
}

impl BoundarySpec {
    pub fn wall() -> BoundarySpec {
        BoundarySpec { kind: BoundaryKind::Wall, values: [None, None], offset: [0.0; 2], scale: 1.0 }
    }

    /// Whether the table entry changes with time (it is then evaluated every step).
    pub fn time_dependent(&self) -> bool {
        self.values.iter().flatten().any(|f| !f.is_constant())
    }

    /// The table entry at time `t`: `data[0..2]` the two values (as above), `data[2..4]` 1 where
    /// the value is given and 0 where it is left open.
    pub fn entry<T: Real>(&self, t: f64) -> Boundary<T> {
        let mut data = [T::zero(); BOUNDARY_DATA];
        for (k, v) in self.values.iter().enumerate() {
            if let Some(f) = v {
                data[k] = T::c((f.at(t) - self.offset[k]) * self.scale);
                data[2 + k] = T::one();
            }
        }
        Boundary { kind: self.kind as i32, reserved: 0, data }
    }
}

/// The run's boundary table: what each entry prescribes over time (`specs`, float64) and
/// its name (the scenario's tag), and the entry each boundary tag uses. Tags with no entry,
/// and untagged boundary edges (tag 0), use entry 0: a wall.
#[derive(Clone, Debug)]
pub struct Boundaries {
    pub specs: Vec<BoundarySpec>,
    pub names: Vec<String>,
    pub index_of_tag: BTreeMap<u32, i32>,
}

impl Default for Boundaries {
    fn default() -> Self {
        Boundaries { specs: vec![BoundarySpec::wall()], names: vec!["walls".into()], index_of_tag: BTreeMap::new() }
    }
}

impl Boundaries {
    pub fn index(&self, tag: u32) -> i32 {
        self.index_of_tag.get(&tag).copied().unwrap_or(0)
    }

    /// Whether every boundary is a wall (no mass crosses any).
    pub fn all_walls(&self) -> bool {
        self.specs.iter().all(|s| s.kind == BoundaryKind::Wall)
    }
}

/// The mirror image of `w` across an edge with unit normal `n`: normal momenta reversed,
/// the same stored thicknesses (so every thickness and elevation jump is exactly zero).
#[inline(always)]
pub fn mirror<T: Real>(w: &Side<T>, n: [T; 2]) -> Side<T> {
    let two = T::c(2.0);
    let reflect = |q: [T; 2]| {
        let qn = q[0] * n[0] + q[1] * n[1];
        [q[0] - two * qn * n[0], q[1] - two * qn * n[1]]
    };
    Side { d1: w.d1, q1: reflect(w.q1), d2: w.d2, q2: reflect(w.q2), depth: w.depth }
}

/// The ghost of an elevation boundary. The elevations' jumps from the cell to the ghost,
/// `de1` (free surface) and `de2` (interface), are differences of stored deviations (exactly
/// zero when the prescribed levels are the cell's, as at rest). The normal velocities then
/// keep the Riemann invariants that the outgoing characteristics carry from the cell to
/// the boundary, linearized about the cell (n points out of the domain):
/// - external: `u + (g / c) eta1` with `c = sqrt(g (h1 + h2))`, the same in both layers, so
///   `du = -(g / c) de1`;
/// - internal: the rigid-lid internal mode (interface displacement `z`, shear `s = u1 - u2`,
///   speed `ci = sqrt(g (1 - r) h1 h2 / H)`, `k = h1 h2 / (ci H)`) is not held at the given
///   interface but radiated: the given interface is that of the water beyond, at rest. The
///   cell's displacement from it, `zc = -de2 + h2 / H de1`, and its shear `sc` hold an
///   outgoing amplitude `(zc - k sc) / 2` and an incoming one; the ghost keeps the outgoing
///   (its interface is the given one plus that amplitude, its shear `-amplitude / k`) and
///   drops the incoming. The shear's change `ds` is shared so that it moves no net volume:
///   `du1 = h2 / H ds`, `du2 = -h1 / H ds`. Holding the interface itself, as before, reflected
///   every internal wave: on the strait study the Mediterranean water that Coriolis turns
///   along the north coast reached the Atlantic end after a day and a half, met an interface
///   held 500 m lower and blew up (at order 1 on a 2672-cell mesh, at order 2 on the shipped
///   one). The surface is still held (the tide), with the external invariant.
///
/// The tangential velocities are the cell's.
///
/// **A layer absent.** A prescribed level outside the water column (an interface below the
/// bed, or above the surface: a one-layer sea) puts the interface on the bed (layer 2 absent
/// in the ghost) or on the surface (layer 1 absent). Where a layer is absent in the cell there
/// is no internal mode (`ds = 0`) and that layer's ghost has no momentum; a cell with no water
/// at all sees a wall. Before, `h1 h2 = 0` made `0/0` of the internal mode: NaN at step 1.
#[inline(always)]
pub fn elevation_ghost<T: Real>(m: &Model<T>, b: &Boundary<T>, inner: &Side<T>, n: [T; 2]) -> Side<T> {
    let one = T::one();
    let tol = m.dry_tolerance;
    let surface_in = inner.d1 + inner.d2;
    let mut d2 = if b.data[3] == one { b.data[1] } else { inner.d2 };
    let surface = if b.data[2] == one { b.data[0] } else { surface_in };
    // The interface within the water column: not below the bed (h2 >= 0), not above the
    // surface (h1 = (surface - d2) + ref_h1 >= 0). Levels within it pass unchanged.
    let bed = (-inner.depth) - m.ref_interface;
    let top = surface + m.ref_h1;
    if d2 < bed {
        d2 = bed;
    }
    if d2 > top {
        d2 = top;
    }
    let (de1, de2) = (surface - surface_in, d2 - inner.d2);
    let (h1, h2) = (inner.h1(m), inner.h2(m));
    let h = h1 + h2;
    let water = h > tol;
    if !water {
        return mirror(inner, n);
    }
    let (wet1, wet2) = (h1 > tol, h2 > tol);
    let ce = (m.g * h).sqrt();
    let du = -(m.g / ce) * de1;
    let (ds, d2) = if wet1 && wet2 {
        // The internal mode: the cell's displacement `zc` from the water beyond (at rest at
        // the given levels) and its shear `sc` hold an outgoing amplitude `(zc - k sc)/2`
        // (`k = h1 h2 / (ci H)`), which the ghost keeps, and an incoming one, which it drops.
        let ci = (m.g * (one - m.r) * h1 * h2 / h).sqrt();
        let k = h1 * h2 / (ci * h);
        let un = |q: [T; 2], hk: T| (q[0] * n[0] + q[1] * n[1]) / hk;
        let sc = un(inner.q1, h1) - un(inner.q2, h2);
        let zc = (-de2) + h2 / h * de1;
        let out = T::c(0.5) * (zc - k * sc);
        let mut d2 = d2 + out;
        if d2 < bed {
            d2 = bed;
        }
        if d2 > top {
            d2 = top;
        }
        (-(out / k) - sc, d2)
    } else {
        (T::zero(), d2)
    };
    let ghost = Side { d1: surface - d2, q1: inner.q1, d2, q2: inner.q2, depth: inner.depth };
    let (g1, g2) = (ghost.h1(m), ghost.h2(m));
    // Normal and tangential velocities of the cell, then the ghost's momenta (none for a
    // layer absent in the cell).
    let turn = |q: [T; 2], hin: T, hg: T, dun: T, wet: bool| {
        if !wet {
            return [T::zero(); 2];
        }
        let (un, ut) = ((q[0] * n[0] + q[1] * n[1]) / hin, (q[1] * n[0] - q[0] * n[1]) / hin);
        let un = un + dun;
        [hg * (un * n[0] - ut * n[1]), hg * (un * n[1] + ut * n[0])]
    };
    Side {
        q1: turn(inner.q1, h1, g1, du + h2 / h * ds, wet1),
        q2: turn(inner.q2, h2, g2, du - h1 / h * ds, wet2),
        ..ghost
    }
}

/// The ghost of an open boundary: the cell's state, linearized about the reference rest
/// state, split into the two-layer system's four waves normal to the edge (external and
/// internal, outgoing and incoming), with the incoming ones dropped. So the edge's Riemann
/// problem sends back in exactly what the water beyond, at rest, would send: nothing, and
/// an incoming part that the cell holds (left there by the waves' cross-coupling on
/// triangles, or by nonlinearity) is let out instead of kept, as a copy of the cell would.
///
/// The waves' speeds and shapes are those of the cell's thicknesses `h1, h2`; their
/// amplitudes are the deviations from the reference rest state (`physics.reference`: the
/// water beyond the boundary is at rest at the reference levels). With `a = d1` (layer 1's
/// thickness deviation), `b = d2` (the interface's) and normal velocities `u1, u2`, a wave
/// of speed `c` (`c_e`, `c_i`:
/// the roots of `c^4 - g H c^2 + g^2 (1 - r) h1 h2 = 0`) has `b = alpha a` with
/// `alpha = c^2 / (g h1) - 1` and `h1 u1 = ±c a`, `h2 u2 = ±c b` (+ outgoing). Sums `S` and
/// differences `D` of each mode's outgoing and incoming amplitudes follow from two 2x2
/// solves; the outgoing amplitude is `(S + D) / 2`. Tangential velocities are the cell's.
/// Where a layer, at rest or now, is not thicker than the dry tolerance (no internal wave to
/// speak of), the ghost is the cell itself; water at rest at the reference levels has an
/// exact zero for every amplitude, so its ghost is the cell to the bit.
#[inline(always)]
pub fn open_ghost<T: Real>(m: &Model<T>, inner: &Side<T>, n: [T; 2]) -> Side<T> {
    let (one, half) = (T::one(), T::c(0.5));
    let (r1, r2) = (m.ref_h1, m.ref_interface + inner.depth);
    let (h1, h2) = (inner.h1(m), inner.h2(m));
    if !(r1 > m.dry_tolerance && r2 > m.dry_tolerance && h1 > m.dry_tolerance && h2 > m.dry_tolerance) {
        return *inner;
    }
    let h = h1 + h2;
    let disc = (one - T::c(4.0) * (one - m.r) * h1 * h2 / (h * h)).sqrt();
    let ce2 = half * m.g * h * (one + disc);
    // The product of the roots, not their difference: no cancellation for r near 1.
    let ci2 = m.g * m.g * (one - m.r) * h1 * h2 / ce2;
    let (ce, ci) = (ce2.sqrt(), ci2.sqrt());
    let (ae, ai) = (ce2 / (m.g * h1) - one, ci2 / (m.g * h1) - one);
    let un = |q: [T; 2], hk: T| (q[0] * n[0] + q[1] * n[1]) / hk;
    let (u1, u2) = (un(inner.q1, h1), un(inner.q2, h2));
    // [1 1; ae ai] [x; y] = [p; q]
    let det = ai - ae;
    let solve = |p: T, q: T| ((ai * p - q) / det, (q - ae * p) / det);
    let (se, si) = solve(inner.d1, inner.d2);
    let (ve, vi) = solve(h1 * u1, h2 * u2);
    let (oe, oi) = (half * (se + ve / ce), half * (si + vi / ci));
    let (d1, d2) = (oe + oi, ae * oe + ai * oi);
    let (fu1, fu2) = ((ce * oe + ci * oi) / h1, (ce * ae * oe + ci * ai * oi) / h2);
    let ghost = Side { d1, q1: inner.q1, d2, q2: inner.q2, depth: inner.depth };
    let (g1, g2) = (ghost.h1(m), ghost.h2(m));
    let turn = |q: [T; 2], hin: T, hg: T, un: T| {
        let ut = (q[1] * n[0] - q[0] * n[1]) / hin;
        [hg * (un * n[0] - ut * n[1]), hg * (un * n[1] + ut * n[0])]
    };
    Side { q1: turn(inner.q1, h1, g1, fu1), q2: turn(inner.q2, h2, g2, fu2), ..ghost }
}

/// The ghost of a discharge boundary: the cell's thicknesses; a layer whose discharge is
/// given flows in at that rate (normal momentum `-data[k]`, no tangential momentum), a layer
/// left open keeps the cell's momentum.
#[inline(always)]
pub fn discharge_ghost<T: Real>(b: &Boundary<T>, inner: &Side<T>, n: [T; 2]) -> Side<T> {
    let one = T::one();
    let inflow = |q: T| [-q * n[0], -q * n[1]];
    let q1 = if b.data[2] == one { inflow(b.data[0]) } else { inner.q1 };
    let q2 = if b.data[3] == one { inflow(b.data[1]) } else { inner.q2 };
    Side { q1, q2, ..*inner }
}

/// The state beyond the boundary edge with unit outward normal `n` of a cell in state
/// `inner`, at time `t` (time-dependent values are already in the table: they are evaluated
/// once per step on the host, [`BoundarySpec::entry`]).
#[inline(always)]
pub fn ghost<T: Real>(m: &Model<T>, b: &Boundary<T>, inner: &Side<T>, n: [T; 2], _t: T) -> Side<T> {
    // An unknown kind never reaches this point (the table is built from the kinds above);
    // it would be a wall.
    match b.kind {
        1 => open_ghost(m, inner, n),
        2 => elevation_ghost(m, b, inner, n),
        3 => discharge_ghost(b, inner, n),
        _ => mirror(inner, n),
    }
}

/// The flux out of the cell in state `inner` through its boundary edge (normal `n`, time `t`).
#[inline(always)]
pub fn boundary_flux<T: Real>(m: &Model<T>, b: &Boundary<T>, inner: &Side<T>, n: [T; 2], t: T) -> EdgeFlux<T> {
    let mut f = numerical_flux(m, inner, &ghost(m, b, inner, n, t), n);
    boundary_mass(b, &mut f);
    wall_leaving_cap(m, b, inner, n, &mut f);
    f
}

/// A wall's push on a layer that leaves it (normal velocity away from the wall): at most the
/// push of the same layer with its normal velocity stopped, which is the most the exact
/// Riemann problem gives (water leaving a wall draws its pressure down: a rarefaction).
///
/// Why: the Roe flux between a cell and its mirror is linearized about their average, whose
/// normal velocity is zero; it damps a layer's normal momentum jump `2 h u_n` with the speeds
/// of the waves that jump excites, and the pair's average adds the advective `h u_n²`. For
/// one layer that is `h u_n² - c h |u_n|` over the pressure, below it while `|u_n| < c`. A
/// thin lower layer under a thick upper one excites mostly the internal wave, about
/// `c_i + c_e h2 / H` (1.4 m/s for 6.5 m under 359 m): leaving the wall faster than that it
/// was pushed away by its own advective flux, the faster the harder. On the strait study's
/// sill slope (1 km cells, the bed 40 m lower from cell to cell) that ran a wall cell's 5 m
/// lower layer from 7 to 55 m/s within a minute, at both orders; with the cap it stays at 7.
/// Below the threshold the Roe flux is under the cap and passes unchanged; a layer at rest or
/// moving into the wall is never touched. `f.i` only: a boundary edge has no cell j.
#[inline(always)]
pub fn wall_leaving_cap<T: Real>(m: &Model<T>, b: &Boundary<T>, inner: &Side<T>, n: [T; 2], f: &mut EdgeFlux<T>) {
    if b.kind != BoundaryKind::Wall as i32 {
        return;
    }
    let qn = |q: [T; 2]| q[0] * n[0] + q[1] * n[1];
    let (a1, a2) = (qn(inner.q1), qn(inner.q2));
    let (leave1, leave2) = (a1 < T::zero(), a2 < T::zero());
    if !(leave1 || leave2) {
        return;
    }
    let stop = |q: [T; 2], a: T, leave: bool| if leave { [q[0] - a * n[0], q[1] - a * n[1]] } else { q };
    let stopped = Side { q1: stop(inner.q1, a1, leave1), q2: stop(inner.q2, a2, leave2), ..*inner };
    let cap = numerical_flux(m, &stopped, &mirror(&stopped, n), n);
    for (k, leave) in [(1, leave1), (4, leave2)] {
        let (push, most) = (f.i[k] * n[0] + f.i[k + 1] * n[1], cap.i[k] * n[0] + cap.i[k + 1] * n[1]);
        if leave && push > most {
            let d = most - push;
            f.i[k] = f.i[k] + d * n[0];
            f.i[k + 1] = f.i[k + 1] + d * n[1];
        }
    }
}

/// What boundary `b` prescribes of the flux `f` between a cell and its ghost: the mass fluxes.
/// Apart from [`boundary_flux`] because the GPU's edge kernel evaluates one `numerical_flux`
/// for boundary and interior edges alike, the ghost standing in for a boundary edge's second
/// cell, and then calls this (`kernels/boundary.cuh`).
#[inline(always)]
pub fn boundary_mass<T: Real>(b: &Boundary<T>, f: &mut EdgeFlux<T>) {
    if b.kind == BoundaryKind::Wall as i32 {
        // The mirror makes the mass fluxes zero in exact arithmetic; rounding, amplified by
        // the eigenvector solve, would otherwise leak mass through walls.
        f.i[0] = T::zero();
        f.i[3] = T::zero();
        f.j[0] = T::zero();
        f.j[3] = T::zero();
    } else if b.kind == BoundaryKind::Discharge as i32 {
        // A given discharge is exactly the mass flux (outward positive), so the mass budget
        // gets exactly what was asked for.
        let one = T::one();
        if b.data[2] == one {
            f.i[0] = -b.data[0];
            f.j[0] = -b.data[0];
        }
        if b.data[3] == one {
            f.i[3] = -b.data[1];
            f.j[3] = -b.data[1];
        }
    }
}
