#!/usr/bin/env python3
"""Accuracy against cost at first and second order (issue 21): the quasi-1D internal dam
break of the paper's set-up (a channel 10 m long and --width cells wide, 4 by default, bottom 5 m deep, flat
surface, h1 = 0.5 for x < 0 and 4 beyond, r = 0.998, walls) run by `pycno run` at several
resolutions and orders 1 and 2 to t = 5; the L1 error in h1 over strips one cell long,
against a fine reference of the independent 1-D solver of
tests/python/lock_exchange_reference.py (path-conservative central-upwind), against the
run's stepping time (stats.json). Prints a Markdown table.

Usage: tools/accuracy-cost.py [--backend cpu|cuda] [--precision f32|f64] [--dx 0.1,0.05,...]
       [--width 4] [--ref-cells 4000] [--work DIR] [--prepare OUT_ROOT | --collect]
Run it with tools/env.sh's venv python (it needs numpy and vtk).

A GPU machine without numpy and vtk: --prepare OUT_ROOT writes only the scenarios (their
output directories under OUT_ROOT) and a runs.sh that runs them (`PYCNO=... sh runs.sh`);
copy OUT_ROOT's directories back into --work and --collect reads them without running.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import vtk
from vtk.util.numpy_support import vtk_to_numpy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
from lock_exchange_reference import Lock  # noqa: E402

LENGTH, DEPTH, H1, R, END = 10.0, 5.0, (0.5, 4.0), 0.998, 5.0


def reference(cells, work):
    path = os.path.join(work, f"reference_{cells}.npy")
    if os.path.exists(path):
        return np.load(path)
    ref = Lock(cells, LENGTH, LENGTH / 2, DEPTH, R, 9.81)
    left = ref.x < LENGTH / 2
    ref.U[:] = 0.0
    ref.U[0] = np.where(left, H1[0], H1[1])
    ref.U[2] = DEPTH - ref.U[0]
    frames, _ = ref.run([END])
    h1 = np.array(frames[0]["h1"])
    np.save(path, h1)
    return h1


def scenario(dx, order, out, width=4):
    return {
        "name": "dam_break_1d",
        "domain": {"outer": [[-5, 0], [5, 0], [5, width * dx], [-5, width * dx]]},
        "resolution": {"max_area": dx * dx / 2, "min_angle": 28},
        "bathymetry": {"type": "constant", "depth": DEPTH},
        "initial": {"type": "dam_break_x", "x0": 0.0, "interface_left": -H1[0], "interface_right": -H1[1]},
        "physics": {"r": R, "gamma": 0.9, "order": order},
        "time": {"end": END, "output_interval": END},
        "output": {"dir": out},
    }


def strips(vtu, bins):
    r = vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(vtu)
    r.Update()
    grid = r.GetOutput()
    centres = vtk.vtkCellCenters()
    centres.SetInputData(grid)
    centres.Update()
    x = vtk_to_numpy(centres.GetOutput().GetPoints().GetData())[:, 0]
    h1 = vtk_to_numpy(grid.GetCellData().GetArray("h1")).astype(float)
    q = vtk.vtkMeshQuality()
    q.SetInputData(grid)
    q.SetTriangleQualityMeasureToArea()
    q.Update()
    area = vtk_to_numpy(q.GetOutput().GetCellData().GetArray("Quality")).astype(float)
    b = np.minimum(((x + LENGTH / 2) / LENGTH * bins).astype(int), bins - 1)
    return np.bincount(b, h1 * area, bins) / np.bincount(b, area, bins)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--precision", default="f32", choices=["f32", "f64"])
    p.add_argument("--dx", default="0.1,0.05,0.025", help="cell sizes along the channel, m")
    p.add_argument("--width", type=int, default=4, help="cells across the channel")
    p.add_argument("--ref-cells", type=int, default=4000)
    p.add_argument("--work", default=os.path.join(ROOT, "out", "accuracy-cost"))
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "pycno"))
    p.add_argument("--prepare", metavar="OUT_ROOT", help="write the scenarios and runs.sh only")
    p.add_argument("--collect", action="store_true", help="read the runs' outputs, run nothing")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    if a.prepare:
        runs = []
        for dx in [float(v) for v in a.dx.split(",")]:
            for order in (1, 2):
                name = f"{a.backend}_{a.precision}_w{a.width}_dx{dx}_order{order}"
                os.makedirs(os.path.join(a.work, name), exist_ok=True)
                with open(os.path.join(a.work, name, "scenario_in.json"), "w") as fh:
                    json.dump(scenario(dx, order, os.path.join(a.prepare, name), a.width), fh)
                runs.append(f'"$PYCNO" run {name}/scenario_in.json --backend {a.backend} '
                            f'--precision {a.precision} --overwrite -q || echo "FAILED {name}"')
        with open(os.path.join(a.work, "runs.sh"), "w") as fh:
            fh.write("#!/bin/sh\n# tools/accuracy-cost.py --prepare: run from this directory.\n")
            fh.write("\n".join(runs) + "\n")
        print(f"{len(runs)} scenarios and runs.sh in {a.work}")
        return
    ref = reference(a.ref_cells, a.work)
    rows = []
    for dx in [float(v) for v in a.dx.split(",")]:
        bins = int(round(LENGTH / dx))
        if a.ref_cells % bins:
            sys.exit(f"--ref-cells {a.ref_cells} is not a multiple of the {bins} strips of dx = {dx}")
        r1 = ref.reshape(bins, -1).mean(axis=1)
        for order in (1, 2):
            out = os.path.join(a.work, f"{a.backend}_{a.precision}_w{a.width}_dx{dx}_order{order}")
            os.makedirs(out, exist_ok=True)
            if a.collect:
                if not os.path.exists(os.path.join(out, "stats.json")):
                    rows.append((dx, order, None, None, None, None, ["no stats.json in " + out]))
                    continue
            else:
                f = os.path.join(out, "scenario_in.json")
                with open(f, "w") as fh:
                    json.dump(scenario(dx, order, out, a.width), fh)
                cmd = [a.bin, "run", f, "--backend", a.backend, "--precision", a.precision, "--overwrite", "-q"]
                run = subprocess.run(cmd, capture_output=True, text=True)
                if run.returncode != 0:
                    rows.append((dx, order, None, None, None, None, run.stderr.strip().splitlines()[-1:]))
                    continue
            stats = json.load(open(os.path.join(out, "stats.json")))
            vtus = sorted(n for n in os.listdir(out) if n.endswith(".vtu") and "blowup" not in n)
            e = float(np.abs(strips(os.path.join(out, vtus[-1]), bins) - r1).mean())
            rows.append((dx, order, stats["cells"], stats["steps"], stats["stepping_seconds"], e, None))
    print(f"Quasi-1D internal dam break, paper set-up, channel {a.width} cells wide, t = {END}, "
          f"backend {a.backend}, {a.precision}, "
          f"reference: 1-D central-upwind, {a.ref_cells} cells")
    print()
    print("| dx (m) | order | cells | steps | stepping time (s) | L1 error in h1 (m) |")
    print("|---|---|---|---|---|---|")
    for dx, order, cells, steps, secs, e, err in rows:
        if err is not None:
            print(f"| {dx} | {order} | | | failed: {' '.join(err)} | |")
        else:
            print(f"| {dx} | {order} | {cells} | {steps} | {secs:.3f} | {e:.4e} |")


if __name__ == "__main__":
    main()
