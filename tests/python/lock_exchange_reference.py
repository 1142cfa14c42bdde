#!/usr/bin/env python3
"""Independent 1-D reference for the full-depth lock exchange (tests/lock_exchange.rs).

Two-layer shallow water with a free surface over a flat bottom, walls at both ends:

    h1_t + q1_x = 0,   q1_t + (q1 u1 + g h1^2/2)_x + g h1 (h2)_x = 0      (layer 1: upper, light)
    h2_t + q2_x = 0,   q2_t + (q2 u2 + g h2^2/2)_x + r g h2 (h1)_x = 0    (layer 2: lower, heavy)

Heavy fluid fills the full depth H at x < x0, light fluid at x > x0, both at rest, the
surface flat. A scheme unrelated to pycno's (IR-Roe where all is wet, per-layer hydrostatic
reconstruction + Rusanov at dry edges): the second-order path-conservative central-upwind
scheme of Castro Diaz, Kurganov and Morales de Luna (ESAIM: M2AN 53, 2019), the
non-conservative form of Kurganov and Petrova's two-layer central-upwind scheme (Commun.
Math. Sci. 7, 2009): minmod-limited linear reconstruction of (h1, q1, h2, q2), Kurganov and
Petrova's desingularised velocities, one-sided local speeds from max/min of the layer
velocities -/+ sqrt(g (h1 + h2)), the products g h1 (h2)_x and r g h2 (h1)_x integrated
exactly inside cells and along the straight-line path across each interface, split between
the two cells by the one-sided speeds; SSP-RK2 in time with CFL 0.4 (positivity of both
thicknesses holds for CFL <= 1/2).

Usage: lock_exchange_reference.py --cells N --length L --x0 X0 --depth H --r R --g G
       --times t1,t2,... --out FILE
Writes JSON: {"x": [...], "times": [...], "frames": [{"t", "h1", "q1", "h2", "q2"}, ...],
"steps": n} (cell centres and cell averages at each requested time).
"""

import argparse
import json
import sys

import numpy as np


def minmod(a, b, c):
    """The smallest in magnitude of three slopes where they share a sign, else 0."""
    s = np.sign(a)
    m = np.minimum(np.abs(a), np.minimum(np.abs(b), np.abs(c)))
    return np.where((np.sign(b) == s) & (np.sign(c) == s), s * m, 0.0)


class Lock:
    def __init__(self, cells, length, x0, depth, r, g):
        self.n, self.dx, self.r, self.g = cells, length / cells, r, g
        self.x = (np.arange(cells) + 0.5) * self.dx
        heavy = self.x < x0
        self.U = np.zeros((4, cells))
        self.U[0] = np.where(heavy, 0.0, depth)  # h1
        self.U[2] = np.where(heavy, depth, 0.0)  # h2
        # Velocities below this thickness are desingularised (Kurganov and Petrova).
        self.eps = self.dx**4

    def velocity(self, h, q):
        h4 = h**4
        return np.sqrt(2.0) * h * q / np.sqrt(h4 + np.maximum(h4, self.eps))

    def rhs(self, U):
        g, r, dx = self.g, self.r, self.dx
        # Two ghost cells a side, mirrored: walls (thickness even, momentum odd).
        P = np.concatenate([U[:, 1::-1], U, U[:, :-3:-1]], axis=1)
        P[1, :2] *= -1.0
        P[3, :2] *= -1.0
        P[1, -2:] *= -1.0
        P[3, -2:] *= -1.0
        theta = 1.3
        d = np.zeros_like(P)
        d[:, 1:-1] = minmod(theta * (P[:, 1:-1] - P[:, :-2]), 0.5 * (P[:, 2:] - P[:, :-2]), theta * (P[:, 2:] - P[:, 1:-1]))
        east = P + 0.5 * d  # value at each cell's right face
        west = P - 0.5 * d
        # Faces of the real cells: between padded cells k and k+1 for k = 1 .. n+1.
        L = east[:, 1:-2]
        R = west[:, 2:-1]
        hL1, hL2, hR1, hR2 = L[0], L[2], R[0], R[2]
        uL1, uL2 = self.velocity(hL1, L[1]), self.velocity(hL2, L[3])
        uR1, uR2 = self.velocity(hR1, R[1]), self.velocity(hR2, R[3])
        qL1, qL2, qR1, qR2 = hL1 * uL1, hL2 * uL2, hR1 * uR1, hR2 * uR2
        cL, cR = np.sqrt(g * (hL1 + hL2)), np.sqrt(g * (hR1 + hR2))
        ap = np.maximum.reduce([np.maximum(uL1, uL2) + cL, np.maximum(uR1, uR2) + cR, np.zeros_like(cL)])
        am = np.minimum.reduce([np.minimum(uL1, uL2) - cL, np.minimum(uR1, uR2) - cR, np.zeros_like(cL)])
        span = ap - am
        wet = span > 1e-14
        inv = np.where(wet, 1.0 / np.where(wet, span, 1.0), 0.0)
        FL = np.array([qL1, qL1 * uL1 + 0.5 * g * hL1**2, qL2, qL2 * uL2 + 0.5 * g * hL2**2])
        FR = np.array([qR1, qR1 * uR1 + 0.5 * g * hR1**2, qR2, qR2 * uR2 + 0.5 * g * hR2**2])
        UL = np.array([hL1, qL1, hL2, qL2])
        UR = np.array([hR1, qR1, hR2, qR2])
        H = (ap * FL - am * FR) * inv + ap * am * inv * (UR - UL)
        # The non-conservative products along the straight path across each face ...
        BP = np.zeros_like(H)
        BP[1] = g * 0.5 * (hL1 + hR1) * (hR2 - hL2)
        BP[3] = r * g * 0.5 * (hL2 + hR2) * (hR1 - hL1)
        # ... and inside each cell (exact for the linear reconstruction: the mean times the jump).
        Bc = np.zeros_like(U)
        e, w = east[:, 2:-2], west[:, 2:-2]
        Bc[1] = g * U[0] * (e[2] - w[2])
        Bc[3] = r * g * U[2] * (e[0] - w[0])
        # Face k + 1/2 (k = 0 .. n) lies between real cells k-1 and k (face 0 and n: the walls).
        left_share = -am * inv  # the part of the face's jump that cell k-1 (left) takes
        right_share = ap * inv
        dU = -(H[:, 1:] - H[:, :-1] + Bc + left_share[1:] * BP[:, 1:] + right_share[:-1] * BP[:, :-1]) / dx
        return dU, max(ap.max(), (-am).max())

    def clean(self, U):
        # Rounding may leave a thickness a hair below zero; an empty layer carries no momentum.
        for k in (0, 2):
            U[k] = np.maximum(U[k], 0.0)
            U[k + 1] = np.where(U[k] > 1e-12, U[k + 1], 0.0)
        return U

    def run(self, times, cfl=0.4):
        t, steps, frames = 0.0, 0, []
        for target in times:
            while t < target:
                k1, a = self.rhs(self.U)
                dt = min(cfl * self.dx / a, target - t)
                U1 = self.clean(self.U + dt * k1)
                k2, _ = self.rhs(U1)
                self.U = self.clean(0.5 * (self.U + U1 + dt * k2))
                t += dt
                steps += 1
                if not np.all(np.isfinite(self.U)):
                    sys.exit(f"lock_exchange_reference: not finite at t = {t}")
            frames.append({"t": target, "h1": self.U[0].tolist(), "q1": self.U[1].tolist(), "h2": self.U[2].tolist(), "q2": self.U[3].tolist()})
        return frames, steps


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", type=int, required=True)
    p.add_argument("--length", type=float, required=True)
    p.add_argument("--x0", type=float, required=True)
    p.add_argument("--depth", type=float, required=True)
    p.add_argument("--r", type=float, required=True)
    p.add_argument("--g", type=float, default=9.81)
    p.add_argument("--times", required=True, help="comma-separated output times, increasing")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    times = [float(t) for t in a.times.split(",")]
    lock = Lock(a.cells, a.length, a.x0, a.depth, a.r, a.g)
    frames, steps = lock.run(times)
    with open(a.out, "w") as f:
        json.dump({"x": lock.x.tolist(), "times": times, "frames": frames, "steps": steps}, f)


if __name__ == "__main__":
    main()
