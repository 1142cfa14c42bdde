#!/usr/bin/env python3
"""Compare two pycno output series, read with the real VTK library, cell by cell.

Usage: compare_runs.py A.pvd B.pvd

Each .pvd may list .vtu files (one rank) or .pvtu files (several ranks, read as one grid
through vtkXMLPUnstructuredGridReader, as ParaView does). For every frame, cells are matched
by their global id (`cell_id`); every cell id must appear exactly once, and every array but
`rank` must be equal bit for bit, as must each cell's three points. The frame times must
agree. Prints one line per frame and exits 0 when all agree, 1 otherwise.
"""

import os
import sys
import xml.etree.ElementTree as ET

import numpy as np
import vtk
from vtk.util.numpy_support import vtk_to_numpy


def frames(pvd):
    root = ET.parse(pvd).getroot()
    base = os.path.dirname(pvd)
    return [(float(d.get("timestep")), os.path.join(base, d.get("file"))) for d in root.iter("DataSet")]


def read(path):
    r = vtk.vtkXMLPUnstructuredGridReader() if path.endswith(".pvtu") else vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(path)
    r.Update()
    grid = r.GetOutput()
    if grid is None or grid.GetNumberOfCells() == 0:
        raise SystemExit(f"{path}: VTK read no cells")
    cd = grid.GetCellData()
    arrays = {cd.GetArrayName(k): vtk_to_numpy(cd.GetArray(k)) for k in range(cd.GetNumberOfArrays())}
    ids = arrays["cell_id"].astype(np.int64)
    pts = vtk_to_numpy(grid.GetPoints().GetData())
    conn = vtk_to_numpy(grid.GetCells().GetConnectivityArray()).reshape(-1, 3)
    order = np.argsort(ids, kind="stable")
    if len(np.unique(ids)) != len(ids):
        raise SystemExit(f"{path}: some cell_id appears more than once")
    out = {name: a[order] for name, a in arrays.items()}
    out["points"] = pts[conn[order]]
    out["cell_id"] = ids[order]
    return out


def main():
    a_pvd, b_pvd = sys.argv[1], sys.argv[2]
    fa, fb = frames(a_pvd), frames(b_pvd)
    bad = 0
    if len(fa) != len(fb):
        print(f"{len(fa)} frames against {len(fb)}")
        return 1
    for (ta, pa), (tb, pb) in zip(fa, fb):
        a, b = read(pa), read(pb)
        problems = []
        if ta != tb:
            problems.append(f"times {ta} != {tb}")
        if not np.array_equal(a["cell_id"], b["cell_id"]):
            problems.append(f"cell ids differ ({len(a['cell_id'])} against {len(b['cell_id'])} cells)")
        else:
            for name in sorted(set(a) | set(b)):
                if name == "rank":
                    continue
                if name not in a or name not in b:
                    problems.append(f"array {name} missing on one side")
                    continue
                x, y = a[name], b[name]
                if x.shape != y.shape or x.tobytes() != y.tobytes():
                    diff = np.max(np.abs(x.astype(float) - y.astype(float))) if x.shape == y.shape else "shape"
                    problems.append(f"{name} differs (max |diff| {diff})")
        status = "equal bit for bit" if not problems else "; ".join(problems)
        print(f"t = {ta}: {os.path.basename(pa)} vs {os.path.basename(pb)}: {len(a['cell_id'])} cells, {status}")
        bad += bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
