#!/usr/bin/env python3
"""Read VTK XML files (.vtu, or .pvtu as one grid) with the real VTK library and print their
cell arrays as JSON, for the Rust tests to compare.

Usage: dump_vtk.py FILE...

Prints {FILE: {"cells": N, "compressed": bool, "arrays": {NAME: {"type": "Float32" | "Float64" |
"Int32" | "Int64", "components": K, "values": [...]}}}}, values flat (tuple after tuple), each
float the exact value the file holds (float32 widened to float64).
"""

import json
import sys

import numpy as np
import vtk
from vtk.util.numpy_support import vtk_to_numpy

TYPES = {np.dtype("float32"): "Float32", np.dtype("float64"): "Float64",
         np.dtype("int32"): "Int32", np.dtype("int64"): "Int64"}


def dump(path):
    r = vtk.vtkXMLPUnstructuredGridReader() if path.endswith(".pvtu") else vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(path)
    r.Update()
    grid = r.GetOutput()
    if grid is None or grid.GetNumberOfCells() == 0:
        raise SystemExit(f"{path}: VTK read no cells")
    cd = grid.GetCellData()
    arrays = {}
    for k in range(cd.GetNumberOfArrays()):
        a = vtk_to_numpy(cd.GetArray(k))
        comps = 1 if a.ndim == 1 else a.shape[1]
        arrays[cd.GetArrayName(k)] = {
            "type": TYPES.get(a.dtype, str(a.dtype)),
            "components": comps,
            "values": [float(x) if a.dtype.kind == "f" else int(x) for x in a.reshape(-1)],
        }
    with open(path, "rb") as f:
        compressed = b'compressor="vtkZLibDataCompressor"' in f.read(4096)
    return {"cells": grid.GetNumberOfCells(), "compressed": compressed, "arrays": arrays}


if __name__ == "__main__":
    json.dump({p: dump(p) for p in sys.argv[1:]}, sys.stdout)
