//! Second order in space (`physics.order = 2`): the limited piecewise-linear reconstruction
//! of a cell's state and the cell-interior term of the path-conservative high-order
//! extension of Roe schemes (Castro, Fernández-Nieto, Ferreiro, García-Rodríguez and Parés,
//! J. Sci. Comput. 2009). `kernels/reconstruct.cuh` mirrors this file line by line.
//!
//! **What is reconstructed.** `(s, u1x, u1y, d2, u2x, u2y)` ([`vars`]): `s = d1 + d2` the
//! free surface's and `d2` the interface's elevation above the reference levels (`d1` is
//! layer 1's thickness less the reference one, `physics/state.rs`): the reconstruction is
//! one of the surface and interface elevations and of the velocities, and it never touches
//! the depth (a cell's bottom stays flat, its jumps live on the edges as at first order).
//! Velocities, not momenta: limited momenta over a steep thickness give edge velocities far
//! outside the neighbours' (a thin layer's `q/h`), which broke the hyperbolicity of the
//! internal dam break at the paper's set-up; limited velocities stay within them. The edge
//! momentum is `h_mid u_mid`. The surface, not `d1`: at an internal front `d1` and `d2` jump
//! by opposite amounts over a nearly flat surface, and limiting them apart (each with its
//! own factor) made a surface slope of the size of the front, a spurious external-mode force
//! `g h1 ∇η1` that broke the hyperbolicity; the surface limited as itself stays flat. Water at rest has every difference `u_k - u_c` exactly zero, so
//! every gradient is exactly zero, and a cell whose gradients are all zero hands the edges
//! its own stored numbers bit for bit ([`face`]): the C-property of the first-order scheme
//! carries over in any precision.
//!
//! **Gradients.** Least squares over the three neighbours across the cell's edges,
//! `∇u = Σ_k w_k (u_k - u_c)` with `w_k = M⁻¹ d_k`, `M = Σ d_k d_kᵀ`, `d_k` the offset of the
//! neighbour's centroid (exact for linear data). Across a boundary edge the neighbour is the
//! cell's mirror image (offset `2 ((m_k - x_c)·n) n`): the same values, and at a wall the
//! normal velocities reversed, which fits a normal velocity vanishing at the wall, as beside
//! a straight wall. Not at a wall edge that ends at a re-entrant corner of the domain
//! ([`ACROSS_CORNER`], `Topology::edge_corner`): there the water beyond is round the corner,
//! and a cell whose water leaves the wall there (the lee of a strait's mouth) would see its
//! normal velocity doubled at its other faces and drain. The ghost there repeats the cell's
//! velocities. On the strait study at order 2 (CPU, f32, 72 h, a frame every hour) the cell
//! in the lee of the Atlantic mouth's northern corner fell to -1.66 m under neighbours near
//! -0.3 m; with the corners' ghosts repeating it stays at -0.64 m, and the rest of the run
//! is unchanged within its chaos (surface -1.07 .. 0.96 m). Repeating the velocities at every
//! wall removed the dip too, but piled water up where flow runs into the basin's concave
//! corners (+2.15 m) and put the one-cell slope current out of its bound (issue 43,
//! docs/src/validation.md). The weights come from the global mesh in float64 (`Stencil`),
//! so every partition computes the same gradients.
//!
//! **Limiter.** Barth–Jespersen per variable: the gradient is scaled so that the values at
//! the edge midpoints stay within the minimum and maximum over the cell and its
//! neighbours. So `h1` at a midpoint stays within its neighbours' `h1` (non-negative). A
//! wall's midpoint is not bounded: across a wall the edge meets the mirror of its own value
//! (the same surface, interface and tangential velocity), so no new extremum can arise
//! there, while its bound cost the most. The least-squares gradient of a cell beside a wall
//! takes a spurious normal component from the curvature along the wall (its two real
//! neighbours lie on one side, the mirror on the other), and bounding the wall's midpoint
//! against it clipped the whole gradient, along the wall too: on the internal dam break in a
//! channel two cells wide, order 2 was 1.16 times more accurate than order 1 with the wall
//! bounded and 2.3 times without; on channels four and eight cells wide, 3.1 to 3.4 times
//! (BENCHMARKS.md). Thicknesses at a wall's midpoint are still checked (below).
//!
//! **One factor at a steep interface.** Where the interface's limiter acts (`phi < 1`) across
//! a front (the cell's interface well inside its neighbours' span, not an extremum), every
//! other variable's factor is at most the interface's: the whole state is reconstructed along
//! the interface's limited slope, never steeper. Why: a path-conservative scheme's jump
//! condition at an internal bore follows the states its faces visit, and velocities limited
//! on their own (less than the interface) moved the bore's plateau. On the paper's dam break in
//! a channel one cell wide, order 2's plateau h1 was 2.4% low at 500 columns (7% with
//! columns four times taller than wide, 47% with the velocities first order), against the
//! reference's 2.128; with one factor it is 0.6% high at 500 columns and 0.4% at 1000 (within
//! 0.7% with columns four times taller or flatter), and its L1 error a third of order 1's (it
//! was larger than order 1's).
//! Every variable still keeps its own bound (no new extremum). Only across a front
//! ([`FRONT_SPAN`], [`FRONT_INSIDE`]): at an extremum of the interface (a smooth wave's crest,
//! where Barth–Jespersen clips to zero) the others keep their own factors, or the smooth
//! internal wave's order falls to 1.1; over a flat interface its factor is rounding's.
//!
//! **One layer absent.** Where a layer is absent (at most `Model::dry_tolerance`) in the cell
//! and all its neighbours, and the other at least `Model::thin` thick in all of them, the
//! present layer alone is reconstructed: layer 1 absent (one layer of heavy fluid: Ritter's
//! dam break, the lower layer of a lock exchange), the interface and layer 2's velocity, the
//! surface taking the interface's gradient exactly (so the absent layer's thickness keeps its
//! stored number at every midpoint: [`face`]); layer 2 absent (the upper layer over a bottom
//! above the interface), the surface and layer 1's velocity, the interface keeping its stored
//! number (the bottom is flat inside a cell). The absent layer's velocity gradients are zero
//! and its cell-interior term is zero.
//!
//! **The lower layer over a stepped bottom.** The bottom is flat inside a cell and steps
//! between cells, so where it steps a steady lower layer's velocity jumps with its thickness
//! while its transport does not. A gradient of the velocities across such a step put the step
//! into the face transports (a face at velocity `u2` carries `u2 Δb` more or less than its
//! neighbour's), and the surface wave's dissipation (`√(g H)`, 89 m/s on the strait study)
//! made a surface gradient of the mismatch. On the strait study's 644-cell mesh at order 2,
//! without the tide, that was a steady low of 0.3 m in the sill's lee and grid-scale noise of
//! 4 cm rms in the surface (order 1: 2 mm); with the tide the surface reached -1.15 m (order
//! 1: -0.53 m). So each neighbour's velocities enter the gradient raised by the same
//! `δ = s u2 / (D - s)` ([`over_bed`]; `s` the neighbour's depth less the cell's, `D` its
//! column's thickness): its column above the cell's bottom then carries its own total
//! transport. The shear `u1 - u2` is left as it was (the guard below reads the neighbours' own
//! velocities), and over a level bottom everything is bit for bit as before (the one-cell
//! channel, the lock exchanges). Now (72 h, f32): 644 cells -0.74 .. 0.88 m and 3.80 m/s
//! (order 1: 3.78 m/s); the slope current at 500 columns against 2000 cells 1.7% behind (was
//! 4.0%). Tried and dropped: reconstructing layer 2's transport instead of its velocity (the
//! low went too, but the slope current's front ran 11% ahead of its reference: at a thinning
//! front the velocity, not the transport, is the smooth variable); the barotropic velocity
//! taken from the cell's mean (the smooth internal wave's order fell to 1.5 and 1.2, and the
//! viscous decay at order 2 ran 24% fast).
//!
//! **Where the cell stays first order.** Where a layer is thinner than `Model::thin` in the
//! cell or a neighbour and not absent from all of them (shorelines and vanishing layers: the
//! dry-aware flux's domain, `physics/wetdry.rs`), where both are absent, and where a
//! reconstructed thickness of a present layer at a midpoint would fall below `Model::thin`
//! (a steep interface over a bottom step): the gradients are zero. Also ([`guarded`]):
//! - where the lower layer anywhere in the stencil is thinner than the bed's largest step from
//!   the cell to a neighbour: its interface then follows the bed, and with the bed flat inside
//!   the cell the reconstructed interface puts the bed's step into the face thicknesses (a
//!   5 m overflow down a sill read as 0 m on one face and 40 m on the other);
//! - where the shear anywhere in the stencil comes within `1/√2` of the loss of
//!   hyperbolicity, `|u1 - u2|² ≥ g'(h1 + h2)/2` with both layers present: there the
//!   equations are near ill-posed and only the first order's dissipation holds the shear.
//!
//! Without these two, order 2 ran the shipped strait study's dense overflow to 100 m/s within
//! 6 hours (first order: 3.6 m/s).
//!
//! **Positivity.** The first-order scheme keeps a layer non-negative because no edge takes
//! more of it out than `speed/2` times the donor's thickness (`physics/wetdry.rs`); with
//! `dt Σ L speed ≤ 2γ V` a cell then loses at most `γ h`. With reconstructed edge values the
//! flux bounds the outflow by the midpoint's thickness, which can be up to three times the
//! cell's mean. So [`edge_flux`] checks the bound against the donor's mean thickness and,
//! where it fails, takes the first-order flux of the two cells' means for that edge (which
//! keeps it): every edge keeps `mass ≤ speed/2 · h_mean`, and each stage keeps each layer
//! non-negative under the first order's CFL condition (`physics.gamma`, unchanged).
//!
//! **The cell-interior term.** With the edge words of `flux.rs` (each leaving out its own
//! cell's hydrostatic pressure), the path-conservative semi-discrete scheme adds, per cell,
//! the pressure and coupling forces inside the cell ([`interior`]): per slot `k`,
//! `L_k n_k g (h_f + h_c)/2` times the jump of the layer's head from the centre to the face
//! (`Δη1` for layer 1, `Δη2 + r Δh1` for layer 2). For a single layer over a flat bottom that
//! is `g/2 (h_f² - h_c²) L n`, exactly the pressure the words left out, by the same midpoint
//! rule: the scheme is then in flux form, and momentum is conserved across any jump. A layer
//! under a flat head feels no force inside its cell, whatever the jump of its thickness. (The
//! exact integral of the linear reconstruction, `A g h_c ∇η`, taken before, differs from the
//! words' midpoint rule by `g/24 Σ L³ (∇h·t)² n` per cell, which does not cancel between
//! cells at a front: on the paper's dam break in a channel one cell wide, 500 columns, the
//! plateau's h1 at x = -1.4 was 2.052 with it and is 2.074 now, against 2.127 for a fine
//! reference; the rest of that gap, and the plateau's wiggles there, are still open. The
//! midpoint rule applied to the pressure alone, before that, put that quadratic part under a
//! flat surface and blew up the paper's set-up.) Where an edge falls back to the
//! means' flux (positivity, below), [`face_pressure`] moves its words to the face's pressure,
//! so that the cell's words and its interior term still complete each other. It is zero
//! where the faces are the stored numbers, so at rest and in first-order cells.

// Index loops, as in the CUDA mirror (`kernels/reconstruct.cuh`), line by line.
#![allow(clippy::needless_range_loop)]

use super::boundary::{boundary_flux, Boundary};
use super::edge::{EdgeFlux, Side};
use super::flux::numerical_flux;
use super::{Model, Real};

/// The reconstructed numbers of a cell, in [`vars`] order.
pub const VARS: usize = 6;

/// What lies across a slot of a cell, for the gradient: a cell (its local index, `>= 0`), or
/// a boundary mirror ghost.
pub const ACROSS_WALL: i32 = -1;
/// A boundary edge that is not a wall (open, inflow...): the ghost repeats the cell.
pub const ACROSS_OPEN: i32 = -2;
/// A wall at a re-entrant corner of the domain (`Topology::edge_corner`): a wall to the
/// limiter, but its ghost repeats the cell's velocities (module comment: gradients).
pub const ACROSS_CORNER: i32 = -3;

/// One cell's stencil geometry, from the global mesh in float64 (`solver/layout.rs`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stencil<T> {
    /// Least-squares weights per slot: `∇u = Σ_k w[k] (u_k - u_c)`.
    pub w: [[T; 2]; 3],
    /// Edge midpoint less the cell's centroid, per slot.
    pub r: [[T; 2]; 3],
    /// Outward normal times the edge length, per slot.
    pub ln: [[T; 2]; 3],
}

/// A cell's six reconstructed numbers `(s, u1x, u1y, d2, u2x, u2y)` from its two records
/// `(d1, q1x, q1y, H)`, `(d2, q2x, q2y, area)`: velocities zero where a layer is not above
/// the dry tolerance (such a cell is first order anyway).
#[inline(always)]
pub fn vars<T: Real>(m: &Model<T>, a: [T; 4], b: [T; 4]) -> [T; VARS] {
    let (h1, h2) = (a[0] + m.ref_h1, (b[0] + m.ref_interface) + a[3]);
    let v = |q: T, h: T| if h > m.dry_tolerance { q / h } else { T::zero() };
    [a[0] + b[0], v(a[1], h1), v(a[2], h1), b[0], v(b[1], h2), v(b[2], h2)]
}

/// The mirror ghost's numbers across a boundary slot with outward unit normal `n`: the
/// cell's own, with the normal velocities reversed at a wall.
#[inline(always)]
pub fn ghost_vars<T: Real>(u: &[T; VARS], n: [T; 2], wall: bool) -> [T; VARS] {
    let mut g = *u;
    if wall {
        for k in [1, 4] {
            let qn = u[k] * n[0] + u[k + 1] * n[1];
            let two = T::c(2.0);
            g[k] = u[k] - two * qn * n[0];
            g[k + 1] = u[k + 1] - two * qn * n[1];
        }
    }
    g
}

/// Where the interface's limiter factor bounds the others' ([`limited_gradients`]): the
/// interface spans more than this fraction of the depth over the stencil...
pub const FRONT_SPAN: f64 = 1e-3;
/// ...and the cell's interface lies inside that span by more than this fraction of it.
pub const FRONT_INSIDE: f64 = 0.01;

/// A layer at least `Model::thin` thick ([`presence`]).
pub const THICK: u8 = 1;
/// A layer at most `Model::dry_tolerance` thick, absent ([`presence`]).
pub const ABSENT: u8 = 2;

/// How each layer of a cell with records `a`, `b` stands: [`THICK`], [`ABSENT`] or neither
/// (a film in between). The bits of a cell and its neighbours are and-ed: a layer is then
/// thick, or absent, in all of them.
#[inline(always)]
pub fn presence<T: Real>(m: &Model<T>, a: [T; 4], b: [T; 4]) -> [u8; 2] {
    let of = |h: T| {
        if h >= m.thin {
            THICK
        } else if h <= m.dry_tolerance {
            ABSENT
        } else {
            0
        }
    };
    [of(a[0] + m.ref_h1), of((b[0] + m.ref_interface) + a[3])]
}

/// The value at offset `r` from the centroid of the linear function with centre value `u`
/// and gradient `g`.
#[inline(always)]
pub fn at<T: Real>(u: T, g: [T; 2], r: [T; 2]) -> T {
    u + (g[0] * r[0] + g[1] * r[1])
}

/// The cell's stored numbers `(d1, q1x, q1y, d2, q2x, q2y)` at the midpoint at offset `r`:
/// its own stored numbers `stored` where every gradient is zero (first order, water at rest:
/// bit for bit), else the reconstructed deviations and `h u` per layer from the
/// reconstructed variables `u` ([`vars`]) over the cell's depth.
#[inline(always)]
pub fn face<T: Real>(
    m: &Model<T>,
    stored: &[T; VARS],
    u: &[T; VARS],
    g: &[[T; 2]; VARS],
    r: [T; 2],
    depth: T,
) -> [T; VARS] {
    let mut flat = true;
    for v in 0..VARS {
        flat = flat && g[v][0] == T::zero() && g[v][1] == T::zero();
    }
    if flat {
        return *stored;
    }
    let d2 = at(u[3], g[3], r);
    // The same gradient for the surface and the interface: layer 1's thickness is flat in the
    // cell (absent, or not), and keeps its stored number, not a rounding of `s - d2`.
    let d1 = if g[0] == g[3] { stored[0] } else { at(u[0], g[0], r) - d2 };
    let (h1, h2) = (d1 + m.ref_h1, (d2 + m.ref_interface) + depth);
    [d1, h1 * at(u[1], g[1], r), h1 * at(u[2], g[2], r), d2, h2 * at(u[4], g[4], r), h2 * at(u[5], g[5], r)]
}

/// The limited gradients of a cell with numbers `u` over a bottom at depth `depth`, from the
/// numbers `nb` across its three slots (ghosts already formed); `layers`: the [`presence`]
/// bits of the cell and its neighbours and-ed; `walls`: which slots are walls, whose
/// midpoints the limiter leaves unbounded (module comment). Zero where the cell stays first
/// order.
#[inline(always)]
pub fn limited_gradients<T: Real>(
    m: &Model<T>,
    u: &[T; VARS],
    depth: T,
    nb: &[[T; VARS]; 3],
    layers: [u8; 2],
    st: &Stencil<T>,
    walls: [bool; 3],
) -> [[T; 2]; VARS] {
    let zero = [[T::zero(); 2]; VARS];
    let thick = [layers[0] & THICK != 0, layers[1] & THICK != 0];
    let absent = [layers[0] & ABSENT != 0, layers[1] & ABSENT != 0];
    // Both thick, or one thick and the other absent (module comment).
    if !((thick[0] || absent[0]) && (thick[1] || absent[1]) && (thick[0] || thick[1])) {
        return zero;
    }
    // Barth–Jespersen: the largest phi <= 1 keeping every midpoint within [lo, hi], but a
    // wall's (module comment: limiter), and the unlimited gradient. A midpoint above the centre
    // (delta > 0) bounds phi by (hi - u) / delta, the least at the largest delta, and one below
    // by (lo - u) / delta, the least at the most negative: a rounded division is monotonic in
    // its divisor, so one division each gives the bits of a division per midpoint, with fewer
    // divisions and branches (the GPU's reconstruction, kernels/reconstruct.cuh).
    let limit = |v: usize| {
        let (mut gx, mut gy) = (T::zero(), T::zero());
        let (mut hi, mut lo) = (u[v], u[v]);
        for k in 0..3 {
            let du = nb[k][v] - u[v];
            gx = gx + st.w[k][0] * du;
            gy = gy + st.w[k][1] * du;
            hi = hi.max(nb[k][v]);
            lo = lo.min(nb[k][v]);
        }
        let (mut up, mut down) = (T::zero(), T::zero());
        for k in 0..3 {
            if walls[k] {
                continue;
            }
            let delta = gx * st.r[k][0] + gy * st.r[k][1];
            up = up.max(delta);
            down = down.min(delta);
        }
        let mut phi = T::one();
        if up > T::zero() {
            phi = phi.min((hi - u[v]) / up);
        }
        if down < T::zero() {
            phi = phi.min((lo - u[v]) / down);
        }
        (phi, gx, gy, hi - u[v], u[v] - lo)
    };
    let mut g = zero;
    // The interface's factor bounds every other variable's (module comment: one factor at a
    // steep interface).
    let mut interface = T::one();
    if thick[1] {
        let (phi, gx, gy, above, below) = limit(3);
        g[3] = [phi * gx, phi * gy];
        let (near, far) = (above.min(below), above.max(below));
        // A front: the interface spans at least FRONT_SPAN of the depth over the stencil (not
        // rounding over a flat interface, which would limit a sheared flow by noise), and the
        // cell's own lies inside that span by FRONT_INSIDE of it (not an extremum, where
        // Barth–Jespersen clips to zero: the smooth internal wave's order fell to 1.1). Both
        // are thresholds away from rounding, so the CPU and the GPU take the same branch.
        if far > T::c(FRONT_SPAN) * depth && near > T::c(FRONT_INSIDE) * far {
            interface = phi;
        }
    }
    for v in 0..VARS {
        // The variables of a thick layer: layer 1's surface and velocity, layer 2's
        // interface and velocity.
        if !thick[v / 3] || v == 3 {
            continue;
        }
        let (phi, gx, gy, _, _) = limit(v);
        let phi = phi.min(interface);
        g[v] = [phi * gx, phi * gy];
    }
    if absent[0] {
        // Layer 1 absent: the surface lies on the interface.
        g[0] = g[3];
    }
    // A thick layer's thicknesses at the midpoints: at least `thin`, or the cell stays first
    // order.
    for k in 0..3 {
        let d2 = at(u[3], g[3], st.r[k]);
        let h1 = (at(u[0], g[0], st.r[k]) - d2) + m.ref_h1;
        let h2 = (d2 + m.ref_interface) + depth;
        if !((absent[0] || h1 >= m.thin) && (absent[1] || h2 >= m.thin)) {
            return zero;
        }
    }
    g
}

/// Whether a cell is quiet: it has three neighbours (no boundary slot), they hold its
/// thicknesses, and neither it nor they hold any momentum. Then every difference
/// [`limited_gradients`] takes is +0 or -0, so its gradients are +0 (sums of signed zeros from
/// +0; phi stays 1, and every other branch sets +0 too) and [`face`] hands the edges the stored
/// numbers: [`cell`] returns that at once, the same bits without the arithmetic. Most of a
/// basin is quiet before the waves arrive. (For finite numbers, as in every state a run keeps,
/// `state::is_admissible`, and finite stencil weights, as `Layout` makes them for a valid mesh:
/// an infinity would have made a NaN of the zeros.)
#[inline(always)]
pub fn quiet<T: Real>(a: [T; 4], b: [T; 4], across: [i32; 3], nb: &[([T; 4], [T; 4]); 3]) -> bool {
    let z = T::zero();
    let still = |a: [T; 4], b: [T; 4]| a[1] == z && a[2] == z && b[1] == z && b[2] == z;
    still(a, b) && (0..3).all(|k| across[k] >= 0 && nb[k].0[0] == a[0] && nb[k].1[0] == b[0] && still(nb[k].0, nb[k].1))
}

/// What [`cell`] returns in float64: the gradients and the three faces.
pub type Reconstruction64 = ([[f64; 2]; VARS], [[f64; VARS]; 3]);

/// One cell's reconstruction: its limited gradients and its stored numbers at its three edge
/// midpoints (one [`face`] per slot), from its records `a`, `b`, what lies across each slot
/// (`across`: a cell, [`ACROSS_WALL`] or [`ACROSS_OPEN`]) with that cell's records in `nb`
/// (read only where `across[k] >= 0`), and its stencil. The CPU backend runs it per owned
/// cell, the GPU's reconstruction kernel its mirror (`reconstruct_cell` in `reconstruct.cuh`).
#[inline(always)]
pub fn cell<T: Real>(
    m: &Model<T>,
    a: [T; 4],
    b: [T; 4],
    across: [i32; 3],
    nb: &[([T; 4], [T; 4]); 3],
    st: &Stencil<T>,
) -> ([[T; 2]; VARS], [[T; VARS]; 3]) {
    // A cell beside an open, elevation or discharge boundary stays first order: its gradient
    // sees a ghost that repeats the cell where the water beyond does not (a tide, an interface
    // held at its level), and on the strait study those faces ran the surface at the Atlantic
    // end past ±2 m from 18 h; first order there keeps it within ±1 m (issue 43).
    if quiet(a, b, across, nb) || across.contains(&ACROSS_OPEN) {
        let stored = [a[0], a[1], a[2], b[0], b[1], b[2]];
        return ([[T::zero(); 2]; VARS], [stored; 3]);
    }
    limited_cell(m, a, b, across, nb, st)
}

/// [`cell`] without its shortcut for quiet cells.
#[inline(always)]
fn limited_cell<T: Real>(
    m: &Model<T>,
    a: [T; 4],
    b: [T; 4],
    across: [i32; 3],
    nb: &[([T; 4], [T; 4]); 3],
    st: &Stencil<T>,
) -> ([[T; 2]; VARS], [[T; VARS]; 3]) {
    let stored = [a[0], a[1], a[2], b[0], b[1], b[2]];
    let u = vars(m, a, b);
    let depth = a[3];
    let mut layers = presence(m, a, b);
    let mut around = [u; 3];
    for k in 0..3 {
        if across[k] >= 0 {
            let (na, nb) = nb[k];
            around[k] = vars(m, na, nb);
            let p = presence(m, na, nb);
            layers = [layers[0] & p[0], layers[1] & p[1]];
        } else {
            let ln = st.ln[k];
            let len = (ln[0] * ln[0] + ln[1] * ln[1]).sqrt();
            around[k] = ghost_vars(&u, [ln[0] / len, ln[1] / len], across[k] == ACROSS_WALL);
        }
    }
    let layers = guarded(m, [a, b], across, nb, &around, u, layers);
    // The lower layer over a stepped bottom (module comment), after the guard, which reads the
    // neighbours' own velocities.
    for k in 0..3 {
        if across[k] >= 0 {
            let (na, nb) = nb[k];
            over_bed(m, na, nb, depth, &mut around[k]);
        }
    }
    let walls = across.map(|o| o == ACROSS_WALL || o == ACROSS_CORNER);
    let g = limited_gradients(m, &u, depth, &around, layers, st, walls);
    let faces = std::array::from_fn(|k| face(m, &stored, &u, &g, st.r[k], depth));
    (g, faces)
}

/// A neighbour's velocities as the cell's gradient takes them (module comment: over a stepped
/// bottom), from its records `a`, `b` and its [`vars`] `u`, for the cell's bottom at `depth`:
/// both layers' velocities raised by the same `δ = s u2 / (D - s)`, with `s` the neighbour's
/// depth less the cell's and `D` its column's thickness, so that its column above the cell's
/// bottom carries its own total transport. Exactly its own where the bottoms are level or its
/// lower layer is absent, and where its column above the cell's bottom is less than half its
/// own.
#[inline(always)]
pub fn over_bed<T: Real>(m: &Model<T>, a: [T; 4], b: [T; 4], depth: T, u: &mut [T; VARS]) {
    let (h1, h2) = (a[0] + m.ref_h1, (b[0] + m.ref_interface) + a[3]);
    let step = a[3] - depth;
    let column = h1 + h2;
    let over = column - step;
    if step != T::zero() && h2 > m.dry_tolerance && over >= T::c(0.5) * column {
        for x in 0..2 {
            let delta = step * u[4 + x] / over;
            if h1 > m.dry_tolerance {
                u[1 + x] = u[1 + x] + delta;
            }
            u[4 + x] = u[4 + x] + delta;
        }
    }
}

/// The [`presence`] bits of a cell's stencil, less what second order must not reconstruct
/// there (module comment: where the cell stays first order): layer 2's [`THICK`] where the
/// thinnest lower layer of the stencil is thinner than the bed's largest step from the cell
/// to a neighbour, and both layers' where the shear anywhere in the stencil, where both
/// layers are present, comes within `1/√2` of the loss of hyperbolicity,
/// `|u1 - u2|² ≥ g' (h1 + h2) / 2`. `recs`: the cell's records; `nb`: the neighbours' (read
/// where `across[k] >= 0`); `around`, `u`: their [`vars`].
#[inline(always)]
pub fn guarded<T: Real>(
    m: &Model<T>,
    recs: [[T; 4]; 2],
    across: [i32; 3],
    nb: &[([T; 4], [T; 4]); 3],
    around: &[[T; VARS]; 3],
    u: [T; VARS],
    mut layers: [u8; 2],
) -> [u8; 2] {
    let [a, b] = recs;
    let depth = a[3];
    let h2 = |a: [T; 4], b: [T; 4]| (b[0] + m.ref_interface) + a[3];
    let limit = T::c(0.5) * ((T::one() - m.r) * m.g);
    // Only where both layers are present: one layer alone is always hyperbolic.
    let sheared = |a: [T; 4], b: [T; 4], u: &[T; VARS]| {
        let (h1, h2) = (a[0] + m.ref_h1, h2(a, b));
        let (sx, sy) = (u[1] - u[4], u[2] - u[5]);
        h1 > m.dry_tolerance && h2 > m.dry_tolerance && sx * sx + sy * sy >= limit * (h1 + h2)
    };
    let (mut bed, mut thinnest, mut shear) = (T::zero(), h2(a, b), sheared(a, b, &u));
    for k in 0..3 {
        if across[k] >= 0 {
            let (na, nbk) = nb[k];
            bed = bed.max((na[3] - depth).abs());
            thinnest = thinnest.min(h2(na, nbk));
            shear = shear || sheared(na, nbk, &around[k]);
        }
    }
    if thinnest < bed {
        layers[1] &= !THICK;
    }
    if shear {
        layers = [0, 0];
    }
    layers
}

/// The cell-interior term (module comment), to be added to the cell's accumulated edge words
/// `M` (so that `W -= dt/A (M + interior)`): `(0, layer-1 momentum x, y, 0, layer-2 momentum
/// x, y)`, from the cell's stored thickness deviations `d1`, `d2`, those of its three faces
/// (`face_d1[k]`, `face_d2[k]`, the reconstructed values at slot k's midpoint), the slots'
/// outward normals times their lengths `ln` and its depth. Exactly zero where the faces hold
/// the cell's own numbers (first-order cells, water at rest).
///
/// Per slot, `L n g (h_f + h_c)/2` times the jump from the centre to the face of the layer's
/// head (`Δη1` for layer 1; `Δη2 + r Δh1` for layer 2): the pressure the edge words leave out
/// (`g/2 (h_f² - h_c²) L n`, by the midpoint rule, as the words take it) plus the coupling and
/// bottom forces on the path from the centre to the face. So a single layer over a flat bottom
/// is in flux form, its momentum conserved to rounding across any jump (the exact integral
/// `A g h_c ∇η` of the linear reconstruction, used before, differs from the words' midpoint
/// rule by `g/24 Σ L³ (∇h·t)² n` per cell, which at a front does not cancel between cells),
/// and a layer under a flat head (`Δη = 0` at every face) feels no force, whatever the jump of
/// its thickness.
#[inline(always)]
pub fn interior<T: Real>(
    m: &Model<T>,
    d1: T,
    d2: T,
    face_d1: [T; 3],
    face_d2: [T; 3],
    ln: &[[T; 2]; 3],
    depth: T,
) -> [T; VARS] {
    let half = T::c(0.5);
    let (h1, h2) = (d1 + m.ref_h1, (d2 + m.ref_interface) + depth);
    // An absent layer feels no force (its thickness here would be a rounding).
    let (wet1, wet2) = (h1 > m.dry_tolerance, h2 > m.dry_tolerance);
    let mut out = [T::zero(); VARS];
    for k in 0..3 {
        let (dd1, dd2) = (face_d1[k] - d1, face_d2[k] - d2);
        let f1 = if wet1 { m.g * (half * (h1 + (face_d1[k] + m.ref_h1)) * (dd1 + dd2)) } else { T::zero() };
        let f2 = if wet2 {
            m.g * (half * (h2 + ((face_d2[k] + m.ref_interface) + depth)) * (dd2 + m.r * dd1))
        } else {
            T::zero()
        };
        for x in 0..2 {
            out[1 + x] = out[1 + x] + f1 * ln[k][x];
            out[4 + x] = out[4 + x] + f2 * ln[k][x];
        }
    }
    out
}

/// Whether a layer's mass flux `mass` (from i to j) takes more out of its donor (i if
/// positive, j if negative; mean thicknesses `hi`, `hj`) than `cap` times its mean.
#[inline(always)]
fn escapes<T: Real>(cap: T, mass: T, hi: T, hj: T) -> bool {
    mass > cap * hi || -mass > cap * hj
}

/// The flux across an interior edge at second order: `numerical_flux` between the two cells'
/// reconstructed edge values `fi`, `fj`, or between their means `ci`, `cj` where the former
/// would take more of a layer out of its donor than `speed/2` times the donor's mean
/// thickness (module comment: positivity).
#[inline(always)]
pub fn edge_flux<T: Real>(
    m: &Model<T>,
    fi: &Side<T>,
    fj: &Side<T>,
    ci: &Side<T>,
    cj: &Side<T>,
    n: [T; 2],
) -> EdgeFlux<T> {
    let f = numerical_flux(m, fi, fj, n);
    let cap = T::c(0.5) * f.speed;
    if escapes(cap, f.i[0], ci.h1(m), cj.h1(m)) || escapes(cap, f.i[3], ci.h2(m), cj.h2(m)) {
        let mut f = numerical_flux(m, ci, cj, n);
        f.i = face_pressure(m, f.i, ci, fi, n);
        f.j = face_pressure(m, f.j, cj, fj, n);
        return f;
    }
    f
}

/// A word of a flux taken between the cells' means, made to leave out the pressure of the
/// cell's reconstructed edge value `face` instead of its mean's `mean`: what the cell-interior
/// term ([`interior`]) completes. Each layer's momentum rows get `g/2 (h_mean² - h_face²) n`.
/// Without it a cell whose edges mix the two kinds of word felt the difference of the two
/// pressures, `g h Δh` per unit length, as a force: at a thin lower layer under a thick upper
/// one (a dense overflow down a sill) it accelerated the water to 100 m/s.
#[inline(always)]
pub fn face_pressure<T: Real>(m: &Model<T>, mut w: [T; 6], mean: &Side<T>, face: &Side<T>, n: [T; 2]) -> [T; 6] {
    let half_g = T::c(0.5) * m.g;
    let p1 = half_g * ((mean.d1 - face.d1) * (mean.h1(m) + face.h1(m)));
    let p2 = half_g * ((mean.d2 - face.d2) * (mean.h2(m) + face.h2(m)));
    w[1] = w[1] + p1 * n[0];
    w[2] = w[2] + p1 * n[1];
    w[4] = w[4] + p2 * n[0];
    w[5] = w[5] + p2 * n[1];
    w
}

/// The same across a boundary edge: the ghost built from the reconstructed edge value, and
/// only the outflow from the cell checked.
#[inline(always)]
pub fn edge_boundary_flux<T: Real>(
    m: &Model<T>,
    b: &Boundary<T>,
    fi: &Side<T>,
    ci: &Side<T>,
    n: [T; 2],
    t: T,
) -> EdgeFlux<T> {
    let f = boundary_flux(m, b, fi, n, t);
    let cap = T::c(0.5) * f.speed;
    if f.i[0] > cap * ci.h1(m) || f.i[3] > cap * ci.h2(m) {
        let mut f = boundary_flux(m, b, ci, n, t);
        f.i = face_pressure(m, f.i, ci, fi, n);
        return f;
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::Physics;

    /// Quiet cells ([`quiet`]) of every kind: both layers thick, one thin or absent, thicknesses
    /// +0, -0 or not, momenta +0 or -0, depths that differ from cell to cell, stencils of any
    /// shape and size: the shortcut returns the limiter's bits ([`limited_cell`]); and a cell
    /// that is not quiet (a neighbour with a momentum or another thickness, a boundary slot)
    /// is not taken for one.
    fn quiet_cells_as_the_limiter<T: Real>() {
        let m = Model::<T>::new(&Physics::default()).unwrap();
        let mut seed = 12345u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let h1 = m.ref_h1.f64();
        // Layer-1 deviations: none, -0, small, to a thin film, to an absent layer.
        let d1s = [0.0, -0.0, 0.25, -0.5 * h1, -h1 + 1e-9, -h1, -2.0 * h1];
        let (mut thick, mut tested) = (0, 0);
        for case in 0..4000 {
            let d1 = T::c(d1s[case % d1s.len()]);
            let d2 = T::c(if case % 3 == 0 { 0.0 } else { next() - 0.5 });
            let zero = |x: f64| T::c(if x < 0.5 { 0.0 } else { -0.0 });
            let rec = |depth: f64, next: &mut dyn FnMut() -> f64| {
                ([d1, zero(next()), zero(next()), T::c(depth)], [d2, zero(next()), zero(next()), T::c(1e-3 + next())])
            };
            let (a, b) = rec(1.0 + 5.0 * next(), &mut next);
            let nb: [([T; 4], [T; 4]); 3] = std::array::from_fn(|_| rec(1.0 + 5.0 * next(), &mut next));
            let scale = [1e-3, 1.0, 1e3][case % 3];
            let mut v = || T::c(scale * (2.0 * next() - 1.0));
            let st = Stencil {
                w: [[v(), v()], [v(), v()], [v(), v()]],
                r: [[v(), v()], [v(), v()], [v(), v()]],
                ln: [[v(), v()]; 3],
            };
            let across = [0, 1, 2];
            assert!(quiet(a, b, across, &nb), "case {case}: a quiet cell not taken for one");
            let bits = |(g, f): ([[T; 2]; VARS], [[T; VARS]; 3])| {
                g.iter().flatten().chain(f.iter().flatten()).map(|x| x.f64().to_bits()).collect::<Vec<_>>()
            };
            let (full, short) = (limited_cell(&m, a, b, across, &nb, &st), cell(&m, a, b, across, &nb, &st));
            assert_eq!(bits(full), bits(short), "case {case}: the shortcut differs from the limiter");
            tested += 1;
            if presence(&m, a, b) == [THICK, THICK] {
                thick += 1;
            }
            // Not quiet: a neighbour's momentum, another thickness, a boundary slot.
            let k = case % 3;
            let mut moved = nb;
            moved[k].1[2] = T::c(1e-6);
            assert!(!quiet(a, b, across, &moved), "case {case}: a moving neighbour");
            let mut deeper = nb;
            deeper[k].0[0] = d1 + T::c(0.125);
            assert!(!quiet(a, b, across, &deeper), "case {case}: another thickness");
            let mut walled = across;
            walled[k] = ACROSS_WALL;
            assert!(!quiet(a, b, walled, &nb), "case {case}: a boundary slot");
        }
        assert!(thick > tested / 10, "only {thick} of {tested} cells had both layers thick");
    }

    #[test]
    fn quiet_cells_reconstruct_as_the_limiter_f32() {
        quiet_cells_as_the_limiter::<f32>();
    }

    #[test]
    fn quiet_cells_reconstruct_as_the_limiter_f64() {
        quiet_cells_as_the_limiter::<f64>();
    }
}
