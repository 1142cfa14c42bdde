//! An independent 1-D two-layer shallow-water solver for reference solutions (the lock
//! exchange of `tests/lock_exchange.rs`): the scheme of `tests/python/lock_exchange_reference.py`
//! (its documentation says which and why), ported line by line so that a grid fine enough
//! for a reference runs in seconds; that test checks the two implementations agree.
//! Nothing here comes from pycno: a different scheme (path-conservative central-upwind,
//! second order), written from the equations
//!
//! ```text
//! h1_t + q1_x = 0,   q1_t + (q1 u1 + g h1²/2)_x + g h1 (h2)_x = 0      (upper, light)
//! h2_t + q2_x = 0,   q2_t + (q2 u2 + g h2²/2)_x + r g h2 (h1)_x = 0    (lower, heavy)
//! ```
//!
//! over a flat bottom with walls at both ends.
//!
//! **Over a bottom** (`Channel::over_bottom`, the dense current down a slope of
//! `tests/slope_current.rs`), at bottom elevation b(x), the products grow by the bottom's
//! slope, `g h1 (h2 + b)_x` and `g h2 (r h1 + b)_x`, and the reconstruction is of the levels
//! (the interface `h2 + b` and the surface `h1 + h2 + b`) instead of the thicknesses, as in
//! Kurganov and Petrova's well-balanced scheme (Commun. Math. Sci. 5, 2007): water at rest has
//! flat levels, which the limiter reconstructs exactly, so each cell's flux difference cancels
//! its bottom term and it stays at rest. b is continuous and linear in each cell (its face
//! values given), so it adds nothing across a face and exactly `g h Δb` inside a cell. A face
//! thickness that the levels would make negative is set to zero and the cell's other face takes
//! what keeps the mean (Kurganov and Petrova's correction); a layer absent from a cell is absent
//! at both its faces. Over a flat bottom the thicknesses are reconstructed as before, so the
//! Python twin still agrees.

/// Cell averages `[h1, q1, h2, q2]` of a channel of equal cells.
#[derive(Clone, Debug)]
pub struct Channel {
    pub dx: f64,
    pub g: f64,
    pub r: f64,
    pub u: Vec<[f64; 4]>,
    /// The bottom's elevation at the faces (cells + 1 of them; zeros over a flat bottom).
    b: Vec<f64>,
    /// Reconstruct the levels rather than the thicknesses (over a bottom).
    levels: bool,
    /// Velocities below about this thickness are desingularised (Kurganov and Petrova).
    eps: f64,
}

fn minmod(a: f64, b: f64, c: f64) -> f64 {
    if a > 0.0 && b > 0.0 && c > 0.0 {
        a.min(b).min(c)
    } else if a < 0.0 && b < 0.0 && c < 0.0 {
        a.max(b).max(c)
    } else {
        0.0
    }
}

/// A face's two thicknesses from a cell's `mean` thickness and its reconstructed `east` and
/// `west` values: none where the layer is absent, and a negative one set to zero with the
/// other face taking what keeps the mean.
fn faces(mean: f64, east: f64, west: f64) -> (f64, f64) {
    if mean <= 0.0 {
        (0.0, 0.0)
    } else if east < 0.0 {
        (0.0, 2.0 * mean)
    } else if west < 0.0 {
        (2.0 * mean, 0.0)
    } else {
        (east, west)
    }
}

impl Channel {
    fn flat(dx: f64, g: f64, r: f64, u: Vec<[f64; 4]>) -> Channel {
        let b = vec![0.0; u.len() + 1];
        Channel { dx, g, r, u, b, levels: false, eps: dx.powi(4) }
    }

    /// Water at rest over a bottom at elevation `bottom(x)` (m, up) with walls at x = 0 and
    /// `length`: the surface at `surface`, the interface at `interface(x)` in each cell (a
    /// level below the bottom leaves no lower layer there). Velocities are desingularised
    /// below `thin` (m): Kurganov and Petrova's `dx⁴` assumes thicknesses of order one, and
    /// at lab scale (dx = 5 mm) it would slow all of a current's front thinner than 5 mm.
    #[allow(dead_code)]
    #[allow(clippy::too_many_arguments)]
    pub fn over_bottom(
        cells: usize,
        length: f64,
        bottom: impl Fn(f64) -> f64,
        surface: f64,
        interface: impl Fn(f64) -> f64,
        thin: f64,
        r: f64,
        g: f64,
    ) -> Channel {
        let dx = length / cells as f64;
        let b: Vec<f64> = (0..=cells).map(|f| bottom(f as f64 * dx)).collect();
        let u = (0..cells)
            .map(|i| {
                let floor = 0.5 * (b[i] + b[i + 1]);
                let level = interface((i as f64 + 0.5) * dx).clamp(floor, surface);
                [surface - level, 0.0, level - floor, 0.0]
            })
            .collect();
        Channel { dx, g, r, u, b, levels: true, eps: thin.powi(4) }
    }

    /// The full-depth lock: heavy fluid (layer 2) at x < x0, light (layer 1) beyond, at rest.
    #[allow(dead_code)]
    pub fn lock(cells: usize, length: f64, x0: f64, depth: f64, r: f64, g: f64) -> Channel {
        let dx = length / cells as f64;
        let u = (0..cells)
            .map(|i| if (i as f64 + 0.5) * dx < x0 { [0.0, 0.0, depth, 0.0] } else { [depth, 0.0, 0.0, 0.0] })
            .collect();
        Channel::flat(dx, g, r, u)
    }

    #[allow(dead_code)]
    pub fn x(&self, i: usize) -> f64 {
        (i as f64 + 0.5) * self.dx
    }

    fn velocity(&self, h: f64, q: f64) -> f64 {
        let h4 = h.powi(4);
        std::f64::consts::SQRT_2 * h * q / (h4 + h4.max(self.eps)).sqrt()
    }

    /// The semi-discrete right-hand side and the largest one-sided speed.
    fn rhs(&self, u: &[[f64; 4]]) -> (Vec<[f64; 4]>, f64) {
        let n = u.len();
        let (g, r, dx) = (self.g, self.r, self.dx);
        // Two ghost cells a side, mirrored: walls (thickness even, momentum odd).
        let mirror = |c: [f64; 4]| [c[0], -c[1], c[2], -c[3]];
        let mut p = Vec::with_capacity(n + 4);
        p.extend([mirror(u[1]), mirror(u[0])]);
        p.extend_from_slice(u);
        p.extend([mirror(u[n - 1]), mirror(u[n - 2])]);
        // The bottom at padded cell k's west (k - 2) and east (k - 1) faces, mirrored at the walls.
        let bottom = |f: isize| {
            let m = f.unsigned_abs();
            self.b[if m > n { 2 * n - m } else { m }]
        };
        let floor = |k: usize| (bottom(k as isize - 2), bottom(k as isize - 1));
        // What is reconstructed: over a bottom the levels and the velocities (a thin layer's
        // face momentum then stays its thickness times a velocity its neighbours bound), else
        // the thicknesses and momenta (b = 0).
        let rec: Vec<[f64; 4]> = p
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let (bw, be) = floor(k);
                let xi = c[2] + 0.5 * (bw + be);
                if self.levels {
                    [c[0] + xi, self.velocity(c[0], c[1]), xi, self.velocity(c[2], c[3])]
                } else {
                    [c[0], c[1], xi, c[3]]
                }
            })
            .collect();
        let theta = 1.3;
        let mut d = vec![[0.0; 4]; n + 4];
        for k in 1..n + 3 {
            for v in 0..4 {
                d[k][v] = minmod(
                    theta * (rec[k][v] - rec[k - 1][v]),
                    0.5 * (rec[k + 1][v] - rec[k - 1][v]),
                    theta * (rec[k + 1][v] - rec[k][v]),
                );
            }
        }
        // Each padded cell's east and west face values [h1, q1, h2, q2].
        let (mut east, mut west) = (vec![[0.0; 4]; n + 4], vec![[0.0; 4]; n + 4]);
        for k in 1..n + 3 {
            let (bw, be) = floor(k);
            let half = |v: usize| (rec[k][v] + 0.5 * d[k][v], rec[k][v] - 0.5 * d[k][v]);
            let (xe, xw) = half(2);
            let (h2e, h2w) = faces(p[k][2], xe - be, xw - bw);
            let (h1e, h1w) = if self.levels {
                let (we, ww) = half(0);
                faces(p[k][0], we - (be + h2e), ww - (bw + h2w))
            } else {
                half(0)
            };
            let (q1, q2) = (half(1), half(3));
            (east[k], west[k]) = if self.levels {
                ([h1e, h1e * q1.0, h2e, h2e * q2.0], [h1w, h1w * q1.1, h2w, h2w * q2.1])
            } else {
                ([h1e, q1.0, h2e, q2.0], [h1w, q1.1, h2w, q2.1])
            };
        }
        let east = |k: usize, v: usize| east[k][v];
        let west = |k: usize, v: usize| west[k][v];
        // Face f (0 ..= n) lies between real cells f-1 and f: padded cells f+1 and f+2.
        let mut flux = vec![[0.0; 4]; n + 1];
        let mut jump = vec![[0.0; 4]; n + 1];
        let mut share = vec![(0.0, 0.0); n + 1];
        let mut amax: f64 = 0.0;
        for f in 0..=n {
            let (hl1, hl2, hr1, hr2) = (east(f + 1, 0), east(f + 1, 2), west(f + 2, 0), west(f + 2, 2));
            let (ul1, ul2) = (self.velocity(hl1, east(f + 1, 1)), self.velocity(hl2, east(f + 1, 3)));
            let (ur1, ur2) = (self.velocity(hr1, west(f + 2, 1)), self.velocity(hr2, west(f + 2, 3)));
            let (ql1, ql2, qr1, qr2) = (hl1 * ul1, hl2 * ul2, hr1 * ur1, hr2 * ur2);
            let (cl, cr) = ((g * (hl1 + hl2)).sqrt(), (g * (hr1 + hr2)).sqrt());
            let ap = (ul1.max(ul2) + cl).max(ur1.max(ur2) + cr).max(0.0);
            let am = (ul1.min(ul2) - cl).min(ur1.min(ur2) - cr).min(0.0);
            amax = amax.max(ap).max(-am);
            let span = ap - am;
            let inv = if span > 1e-14 { 1.0 / span } else { 0.0 };
            let fl = [ql1, ql1 * ul1 + 0.5 * g * hl1 * hl1, ql2, ql2 * ul2 + 0.5 * g * hl2 * hl2];
            let fr = [qr1, qr1 * ur1 + 0.5 * g * hr1 * hr1, qr2, qr2 * ur2 + 0.5 * g * hr2 * hr2];
            let (ul, ur) = ([hl1, ql1, hl2, ql2], [hr1, qr1, hr2, qr2]);
            for v in 0..4 {
                flux[f][v] = (ap * fl[v] - am * fr[v]) * inv + ap * am * inv * (ur[v] - ul[v]);
            }
            // The non-conservative products along the straight path across the face (b is
            // continuous: its part is zero).
            jump[f][1] = g * 0.5 * (hl1 + hr1) * (hr2 - hl2);
            jump[f][3] = r * g * 0.5 * (hl2 + hr2) * (hr1 - hl1);
            // The parts of the jump that the left and the right cell take.
            share[f] = (-am * inv, ap * inv);
        }
        let mut du = vec![[0.0; 4]; n];
        for j in 0..n {
            let k = j + 2;
            // Inside the cell: exact for the linear reconstruction (the mean times the jump),
            // the bottom's part apart so that over a flat one nothing changes.
            let (bw, be) = floor(k);
            let inside = [
                0.0,
                g * u[j][0] * (east(k, 2) - west(k, 2)) + g * u[j][0] * (be - bw),
                0.0,
                r * g * u[j][2] * (east(k, 0) - west(k, 0)) + g * u[j][2] * (be - bw),
            ];
            for v in 0..4 {
                du[j][v] = -(flux[j + 1][v] - flux[j][v]
                    + inside[v]
                    + share[j + 1].0 * jump[j + 1][v]
                    + share[j].1 * jump[j][v])
                    / dx;
            }
        }
        (du, amax)
    }

    /// Rounding may leave a thickness a hair below zero; an empty layer carries no momentum.
    /// Over a bottom, as Kurganov and Petrova do, each momentum is recomputed from the
    /// desingularised velocity, so that a film far thinner than `eps^(1/4)` cannot hold a fast
    /// one (over a flat bottom the Python twin's scheme, which does not, is kept).
    fn clean(&self, u: &mut [[f64; 4]]) {
        for c in u.iter_mut() {
            for k in [0, 2] {
                c[k] = c[k].max(0.0);
                if c[k] <= 1e-12 {
                    c[k + 1] = 0.0;
                } else if self.levels {
                    c[k + 1] = c[k] * self.velocity(c[k], c[k + 1]);
                }
            }
        }
    }

    /// SSP-RK2 steps with CFL 0.4 from `t` to `target`; returns the steps taken.
    pub fn advance(&mut self, t: &mut f64, target: f64) -> u64 {
        let mut steps = 0;
        while *t < target {
            let (k1, a) = self.rhs(&self.u);
            let dt = (0.4 * self.dx / a).min(target - *t);
            let mut u1: Vec<[f64; 4]> =
                self.u.iter().zip(&k1).map(|(u, k)| [0, 1, 2, 3].map(|v| u[v] + dt * k[v])).collect();
            self.clean(&mut u1);
            let (k2, _) = self.rhs(&u1);
            for ((u, u1), k) in self.u.iter_mut().zip(&u1).zip(&k2) {
                for v in 0..4 {
                    u[v] = 0.5 * (u[v] + u1[v] + dt * k[v]);
                }
            }
            let mut u = std::mem::take(&mut self.u);
            self.clean(&mut u);
            self.u = u;
            *t += dt;
            steps += 1;
            assert!(self.u.iter().all(|c| c.iter().all(|x| x.is_finite())), "reference: not finite at t = {t}");
        }
        steps
    }
}

impl Channel {
    /// An internal dam break over a flat bottom `depth` deep, flat surface at 0: the
    /// interface at `left` (elevation, m) for x < x0 and `right` beyond, at rest.
    #[allow(dead_code)]
    #[allow(clippy::too_many_arguments)]
    pub fn dam_break(cells: usize, length: f64, x0: f64, depth: f64, left: f64, right: f64, r: f64, g: f64) -> Channel {
        let dx = length / cells as f64;
        let u = (0..cells)
            .map(|i| {
                let eta = if (i as f64 + 0.5) * dx < x0 { left } else { right };
                [-eta, 0.0, depth + eta, 0.0]
            })
            .collect();
        Channel::flat(dx, g, r, u)
    }
}
