#!/usr/bin/env python3
"""Read pycno's VTK XML output back with the real VTK library and compare it with expected.json.

Usage: check_vtk.py DIR

DIR/expected.json (written by tests/vtk_output.rs) has the form
  {"datasets": {REL_PATH: {"kind": "vtu"|"pvtu", "points": [[x, y, z], ...],
                           "cells": [[a, b, c], ...],
                           "arrays": [{"name", "type", "components", "values": [...]}, ...]}},
   "pvd": {"file": REL_PATH, "entries": [{"time": t, "file": REL_PATH_FROM_PVD}, ...]}}
Array values are flat (tuple after tuple).  Exits 0 when everything matches, 1 otherwise,
printing one line per problem.
"""

import json
import os
import re
import sys
import xml.etree.ElementTree as ET

try:
    import vtk
except ImportError:
    print("the VTK Python package is missing: pip install vtk", file=sys.stderr)
    sys.exit(2)

# VTK data type names as the XML `type` attribute spells them.
VTK_TYPES = {
    vtk.VTK_FLOAT: "Float32",
    vtk.VTK_DOUBLE: "Float64",
    vtk.VTK_INT: "Int32",
    vtk.VTK_LONG_LONG: "Int64",
    vtk.VTK_ID_TYPE: "Int64",
    vtk.VTK_TYPE_INT64: "Int64",
    vtk.VTK_TYPE_INT32: "Int32",
}
# VTK_LONG is 64-bit on LP64 Linux (used when reading Int64 there).
if vtk.VTK_SIZEOF_LONG == 8:
    VTK_TYPES[vtk.VTK_LONG] = "Int64"
else:
    VTK_TYPES[vtk.VTK_LONG] = "Int32"

problems = []


def problem(msg):
    problems.append(msg)
    print("FAIL: " + msg)


def as_type(value, type_name):
    """The value the file should hold, after the cast to the array's element type."""
    if type_name == "Float32":
        import struct

        return struct.unpack("<f", struct.pack("<f", float(value)))[0]
    if type_name == "Float64":
        return float(value)
    return int(value)


def check_xml_encoding(path):
    """Every DataArray must be binary: inline base64 ("binary") or "appended", never "ascii".

    Raw appended data is not well-formed XML, so only the text before <AppendedData> is parsed.
    Returns the VTKFile element and the number of DataArray elements.
    """
    with open(path, "rb") as f:
        data = f.read()
    head, sep, _ = data.partition(b"<AppendedData")
    text = head.decode("utf-8")
    appended_encoding = None
    if sep:
        m = re.match(rb'\s+encoding="(\w+)"', data[len(head) + len(sep):])
        appended_encoding = m.group(1).decode() if m else None
        if appended_encoding not in ("raw", "base64"):
            problem(f"{path}: AppendedData encoding {appended_encoding!r}")
        # Close the elements the appended block interrupted, so the header parses as XML.
        for e in ("UnstructuredGrid", "VTKFile"):
            if len(re.findall(rf"<{e}\b", text)) > text.count(f"</{e}>"):
                text += f"</{e}>"
    root = ET.fromstring(text)
    n = 0
    for da in root.iter("DataArray"):
        n += 1
        fmt = da.get("format")
        if fmt not in ("binary", "appended"):
            problem(f"{path}: DataArray {da.get('Name')!r} has format={fmt!r}, want binary")
        if fmt == "appended" and appended_encoding is None:
            problem(f"{path}: DataArray {da.get('Name')!r} is appended but there is no AppendedData")
    return root, n


def read_with(reader_cls, path):
    errors = vtk.vtkStringOutputWindow()
    vtk.vtkOutputWindow.SetInstance(errors)
    reader = reader_cls()
    reader.SetFileName(path)
    reader.Update()
    text = errors.GetOutput()
    if text.strip():
        problem(f"{path}: VTK reported: {text.strip()}")
    if reader.GetErrorCode() != 0:
        problem(f"{path}: reader error code {reader.GetErrorCode()}")
    return reader.GetOutput()


def compare_grid(label, grid, exp):
    if grid is None:
        problem(f"{label}: no output")
        return
    npts, ncells = grid.GetNumberOfPoints(), grid.GetNumberOfCells()
    if npts != len(exp["points"]):
        problem(f"{label}: {npts} points, want {len(exp['points'])}")
    if ncells != len(exp["cells"]):
        problem(f"{label}: {ncells} cells, want {len(exp['cells'])}")
    if npts != len(exp["points"]) or ncells != len(exp["cells"]):
        return

    pts = grid.GetPoints()
    if pts.GetDataType() != vtk.VTK_DOUBLE:
        problem(f"{label}: points are {pts.GetData().GetDataTypeAsString()}, want double")
    for i, want in enumerate(exp["points"]):
        got = pts.GetPoint(i)
        if list(got) != [float(w) for w in want]:
            problem(f"{label}: point {i} is {got}, want {want}")
            break

    for c, want in enumerate(exp["cells"]):
        if grid.GetCellType(c) != vtk.VTK_TRIANGLE:
            problem(f"{label}: cell {c} has type {grid.GetCellType(c)}, want VTK_TRIANGLE (5)")
            break
        ids = vtk.vtkIdList()
        grid.GetCellPoints(c, ids)
        got = [ids.GetId(k) for k in range(ids.GetNumberOfIds())]
        if got != want:
            problem(f"{label}: cell {c} has points {got}, want {want}")
            break

    if grid.GetPointData().GetNumberOfArrays() != 0:
        problem(f"{label}: unexpected point data arrays")
    cd = grid.GetCellData()
    names = [cd.GetArrayName(i) for i in range(cd.GetNumberOfArrays())]
    want_names = [a["name"] for a in exp["arrays"]]
    if sorted(names) != sorted(want_names):
        problem(f"{label}: cell arrays {names}, want {want_names}")
    for a in exp["arrays"]:
        arr = cd.GetAbstractArray(a["name"])
        if arr is None:
            problem(f"{label}: cell array {a['name']!r} missing")
            continue
        got_type = VTK_TYPES.get(arr.GetDataType(), arr.GetDataTypeAsString())
        if got_type != a["type"]:
            problem(f"{label}: {a['name']!r} is {arr.GetDataTypeAsString()}, want {a['type']}")
        nc = arr.GetNumberOfComponents()
        if nc != a["components"]:
            problem(f"{label}: {a['name']!r} has {nc} components, want {a['components']}")
            continue
        if arr.GetNumberOfTuples() != ncells:
            problem(f"{label}: {a['name']!r} has {arr.GetNumberOfTuples()} tuples, want {ncells}")
            continue
        values = a["values"]
        if len(values) != ncells * nc:
            problem(f"{label}: expected.json lists {len(values)} values for {a['name']!r}")
            continue
        for k, v in enumerate(values):
            got = arr.GetComponent(k // nc, k % nc)
            want = as_type(v, a["type"])
            if a["type"] in ("Int32", "Int64"):
                # GetComponent goes through a double; GetValue is exact for 64-bit integers.
                got = arr.GetValue(k)
                ok = got == want
            else:
                ok = got == want
            if not ok:
                problem(f"{label}: {a['name']!r}[{k // nc}][{k % nc}] = {got!r}, want {want!r}")
                break


def check_dataset(dir_, rel, exp):
    path = os.path.join(dir_, rel)
    if not os.path.isfile(path):
        problem(f"{rel}: missing")
        return
    if exp["kind"] == "vtu":
        root, n = check_xml_encoding(path)
        if root.get("type") != "UnstructuredGrid":
            problem(f"{rel}: VTKFile type {root.get('type')!r}")
        if n == 0:
            problem(f"{rel}: no DataArray elements")
        grid = read_with(vtk.vtkXMLUnstructuredGridReader, path)
    elif exp["kind"] == "pvtu":
        root = ET.parse(path).getroot()
        if root.get("type") != "PUnstructuredGrid":
            problem(f"{rel}: VTKFile type {root.get('type')!r}")
        for piece in root.iter("Piece"):
            src = os.path.join(os.path.dirname(path), piece.get("Source"))
            check_xml_encoding(src)
        grid = read_with(vtk.vtkXMLPUnstructuredGridReader, path)
    else:
        problem(f"{rel}: unknown kind {exp['kind']!r}")
        return
    compare_grid(rel, grid, exp)


def check_pvd(dir_, pvd, datasets):
    path = os.path.join(dir_, pvd["file"])
    root = ET.parse(path).getroot()
    if root.get("type") != "Collection":
        problem(f"{pvd['file']}: VTKFile type {root.get('type')!r}, want Collection")
    entries = list(root.iter("DataSet"))
    if len(entries) != len(pvd["entries"]):
        problem(f"{pvd['file']}: {len(entries)} DataSet entries, want {len(pvd['entries'])}")
        return
    for ds, want in zip(entries, pvd["entries"]):
        t = float(ds.get("timestep"))
        if t != float(want["time"]):
            problem(f"{pvd['file']}: timestep {t!r}, want {want['time']!r}")
        if ds.get("file") != want["file"]:
            problem(f"{pvd['file']}: file {ds.get('file')!r}, want {want['file']!r}")
        # Open each dataset the way ParaView does: relative to the .pvd's directory.
        target = os.path.normpath(os.path.join(os.path.dirname(pvd["file"]), ds.get("file")))
        rel = target.replace(os.sep, "/")
        if rel not in datasets:
            problem(f"{pvd['file']}: entry {ds.get('file')!r} is not an expected dataset")
            continue
        check_dataset(dir_, rel, datasets[rel])

    # And through VTK's own collection reader when this build has it.
    if hasattr(vtk, "vtkPVDReader"):
        r = vtk.vtkPVDReader()
        r.SetFileName(path)
        r.UpdateInformation()
        print(f"vtkPVDReader sees {r.GetNumberOfTimeSteps()} time steps")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    dir_ = sys.argv[1]
    with open(os.path.join(dir_, "expected.json")) as f:
        expected = json.load(f)
    datasets = expected["datasets"]
    if not datasets:
        problem("expected.json lists no datasets")
    for rel, exp in datasets.items():
        check_dataset(dir_, rel, exp)
        print(f"checked {rel}")
    if "pvd" in expected:
        check_pvd(dir_, expected["pvd"], datasets)
        print(f"checked {expected['pvd']['file']}")
    else:
        problem("expected.json has no pvd entry")
    print(f"vtk {vtk.vtkVersion.GetVTKVersion()}: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
