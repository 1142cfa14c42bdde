#!/usr/bin/env python3
"""Check a run's gauges.csv against its VTK output, read with the real VTK library.

Usage: check_gauges.py DIR

For every frame of DIR/<name>.pvd, the gauges.csv row at the same time must hold exactly the
values of each gauge's cell (named in the '# gauge NAME at (x, y): cell ID' comments) in
that frame: h1, h2, both velocities, interface and free-surface elevation (read at the
arrays' float type: an f32 run prints its gauges with float32's digits). Exits 0 when
every frame matches, 1 otherwise, printing one line per frame.
"""

import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

import numpy as np
import vtk
from vtk.util.numpy_support import vtk_to_numpy


def read(path):
    r = vtk.vtkXMLPUnstructuredGridReader() if path.endswith(".pvtu") else vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(path)
    r.Update()
    cd = r.GetOutput().GetCellData()
    a = {cd.GetArrayName(k): vtk_to_numpy(cd.GetArray(k)) for k in range(cd.GetNumberOfArrays())}
    return {int(i): k for k, i in enumerate(a["cell_id"])}, a


def main():
    d = sys.argv[1]
    pvd = glob.glob(os.path.join(d, "*.pvd"))[0]
    cells, rows, header = {}, {}, None
    for line in open(os.path.join(d, "gauges.csv")):
        line = line.rstrip("\n")
        m = re.match(r"# gauge (\S+) at .*: cell (\d+) ", line)
        if m:
            cells[m.group(1)] = int(m.group(2))
        elif line.startswith("time,"):
            header = line.split(",")
        elif line and not line.startswith("#"):
            v = line.split(",")
            rows[float(v[0])] = dict(zip(header, v))
    bad = 0
    frames = [(float(x.get("timestep")), os.path.join(d, x.get("file"))) for x in ET.parse(pvd).getroot().iter("DataSet")]
    for t, f in frames:
        index, a = read(f)
        if t not in rows:
            print(f"t = {t}: no gauges.csv row")
            bad += 1
            continue
        row, problems = rows[t], []
        for g, c in cells.items():
            k = index[c]
            want = {
                "h1": a["h1"][k], "h2": a["h2"][k],
                "u1": a["velocity1"][k][0], "v1": a["velocity1"][k][1],
                "u2": a["velocity2"][k][0], "v2": a["velocity2"][k][1],
                "interface": a["interface_elevation"][k], "surface": a["free_surface_elevation"][k],
            }
            for q, w in want.items():
                # The row is printed with the run's precision: read it back as the array's type.
                got = float(np.asarray(row[f"{g}_{q}"]).astype(np.float64).astype(w.dtype))
                if got != float(w):
                    problems.append(f"{g}_{q} = {got!r}, cell {c} in {os.path.basename(f)} has {float(w)!r}")
        print(f"t = {t}: {len(cells)} gauges: " + ("equal to the VTK cell values" if not problems else "; ".join(problems)))
        bad += bool(problems)
    if len(frames) < 2:
        print("fewer than two frames to compare")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
