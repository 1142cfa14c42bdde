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

/// Cell averages `[h1, q1, h2, q2]` of a channel of equal cells.
#[derive(Clone, Debug)]
pub struct Channel {
    pub dx: f64,
    pub g: f64,
    pub r: f64,
    pub u: Vec<[f64; 4]>,
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

impl Channel {
    /// The full-depth lock: heavy fluid (layer 2) at x < x0, light (layer 1) beyond, at rest.
    pub fn lock(cells: usize, length: f64, x0: f64, depth: f64, r: f64, g: f64) -> Channel {
        let dx = length / cells as f64;
        let u = (0..cells)
            .map(|i| if (i as f64 + 0.5) * dx < x0 { [0.0, 0.0, depth, 0.0] } else { [depth, 0.0, 0.0, 0.0] })
            .collect();
        Channel { dx, g, r, u, eps: dx.powi(4) }
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
        let theta = 1.3;
        let mut d = vec![[0.0; 4]; n + 4];
        for k in 1..n + 3 {
            for v in 0..4 {
                d[k][v] = minmod(
                    theta * (p[k][v] - p[k - 1][v]),
                    0.5 * (p[k + 1][v] - p[k - 1][v]),
                    theta * (p[k + 1][v] - p[k][v]),
                );
            }
        }
        let east = |k: usize, v: usize| p[k][v] + 0.5 * d[k][v];
        let west = |k: usize, v: usize| p[k][v] - 0.5 * d[k][v];
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
            // The non-conservative products along the straight path across the face.
            jump[f][1] = g * 0.5 * (hl1 + hr1) * (hr2 - hl2);
            jump[f][3] = r * g * 0.5 * (hl2 + hr2) * (hr1 - hl1);
            // The parts of the jump that the left and the right cell take.
            share[f] = (-am * inv, ap * inv);
        }
        let mut du = vec![[0.0; 4]; n];
        for j in 0..n {
            let k = j + 2;
            // Inside the cell: exact for the linear reconstruction (the mean times the jump).
            let inside =
                [0.0, g * u[j][0] * (east(k, 2) - west(k, 2)), 0.0, r * g * u[j][2] * (east(k, 0) - west(k, 0))];
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
    fn clean(u: &mut [[f64; 4]]) {
        for c in u.iter_mut() {
            for k in [0, 2] {
                c[k] = c[k].max(0.0);
                if c[k] <= 1e-12 {
                    c[k + 1] = 0.0;
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
            Self::clean(&mut u1);
            let (k2, _) = self.rhs(&u1);
            for ((u, u1), k) in self.u.iter_mut().zip(&u1).zip(&k2) {
                for v in 0..4 {
                    u[v] = 0.5 * (u[v] + u1[v] + dt * k[v]);
                }
            }
            Self::clean(&mut self.u);
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
        Channel { dx, g, r, u, eps: dx.powi(4) }
    }
}
