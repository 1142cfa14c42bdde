#!/usr/bin/env python3
"""Check a run's NetCDF file (UGRID-1.0 + CF) with netCDF4 and xarray against its VTK frames.

Usage: check_netcdf.py DIR NAME [START]

Reads DIR/NAME.nc with netCDF4 and with xarray: the dimensions (nMesh_node, nMesh_face,
nMaxMesh_face_nodes = 3, an unlimited time with one record per frame of DIR/NAME.pvd), the
UGRID mesh topology variable and its attributes, face_node_connectivity with start_index,
CF attributes (units, standard_name where one exists), and every record's values equal to
the frame's cell values read by VTK (by cell id), and the max maps to NAME_max.vtu when
there, each with its CF cell_methods; a history attribute naming pycno; with START
(YYYY-MM-DD HH:MM:SS), the time axis's units "seconds since START", which xarray decodes
into dates from START. Prints one line per problem; exits 0 when there is none.
"""

import os
import sys
import xml.etree.ElementTree as ET

import netCDF4
import numpy as np
import vtk
import xarray as xr
from vtk.util.numpy_support import vtk_to_numpy

problems = []


def problem(msg):
    problems.append(msg)
    print("FAIL: " + msg)


def read_vtk(path):
    r = vtk.vtkXMLPUnstructuredGridReader() if path.endswith(".pvtu") else vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(path)
    r.Update()
    g = r.GetOutput()
    cd = g.GetCellData()
    a = {cd.GetArrayName(k): vtk_to_numpy(cd.GetArray(k)) for k in range(cd.GetNumberOfArrays())}
    order = np.argsort(a["cell_id"])
    return {k: v[order] for k, v in a.items()}


def main():
    d, name = sys.argv[1], sys.argv[2]
    start = sys.argv[3] if len(sys.argv) > 3 else "2000-01-01 00:00:00"
    path = os.path.join(d, name + ".nc")
    frames = [(float(x.get("timestep")), os.path.join(d, x.get("file")))
              for x in ET.parse(os.path.join(d, name + ".pvd")).getroot().iter("DataSet")]
    nc = netCDF4.Dataset(path)
    if nc.data_model != "NETCDF3_64BIT_OFFSET":
        problem(f"data model {nc.data_model}")
    if "UGRID-1.0" not in nc.Conventions or "CF-1.8" not in nc.Conventions:
        problem(f"Conventions = {nc.Conventions!r}")
    if "pycno" not in getattr(nc, "history", ""):
        problem(f"history = {getattr(nc, 'history', None)!r}")
    if nc.variables["time"].units != f"seconds since {start}":
        problem(f"time:units = {nc.variables['time'].units!r}, expected 'seconds since {start}'")
    dims = {k: len(v) for k, v in nc.dimensions.items()}
    if not nc.dimensions["time"].isunlimited():
        problem("time is not the unlimited dimension")
    if dims["time"] != len(frames):
        problem(f"{dims['time']} records, {len(frames)} frames")
    if dims["nMaxMesh_face_nodes"] != 3:
        problem(f"nMaxMesh_face_nodes = {dims['nMaxMesh_face_nodes']}")
    mesh = nc.variables["mesh"]
    want = {"cf_role": "mesh_topology", "topology_dimension": 2, "node_coordinates": "mesh_node_x mesh_node_y",
            "face_node_connectivity": "mesh_face_nodes", "face_dimension": "nMesh_face"}
    for k, v in want.items():
        if getattr(mesh, k, None) != v:
            problem(f"mesh:{k} = {getattr(mesh, k, None)!r}, expected {v!r}")
    fn = nc.variables["mesh_face_nodes"]
    if fn.cf_role != "face_node_connectivity" or fn.start_index != 0:
        problem("mesh_face_nodes: cf_role or start_index")
    if fn.dimensions != ("nMesh_face", "nMaxMesh_face_nodes"):
        problem(f"mesh_face_nodes dimensions {fn.dimensions}")
    conn = fn[:]
    if conn.min() != 0 or conn.max() != dims["nMesh_node"] - 1:
        problem(f"connectivity spans {conn.min()}..{conn.max()} of {dims['nMesh_node']} nodes")
    standard = {"u1": "sea_water_x_velocity", "v2": "sea_water_y_velocity",
                "free_surface_elevation": "sea_surface_height_above_mean_sea_level", "time": "time"}
    for v in nc.variables.values():
        if v.name == "mesh" or v.name == "mesh_face_nodes":
            continue
        if not getattr(v, "units", ""):
            problem(f"{v.name}: no units")
        if v.name in standard and getattr(v, "standard_name", None) != standard[v.name]:
            problem(f"{v.name}: standard_name {getattr(v, 'standard_name', None)!r}")
        if "nMesh_face" in v.dimensions and v.name not in ("mesh_face_x", "mesh_face_y", "mesh_face_nodes"):
            if v.mesh != "mesh" or v.location != "face":
                problem(f"{v.name}: mesh/location attributes")
    # Values, record by record, against the frames.
    times = nc.variables["time"][:]
    pairs = [("h1", "h1", None), ("h2", "h2", None), ("u1", "velocity1", 0), ("v1", "velocity1", 1),
             ("u2", "velocity2", 0), ("v2", "velocity2", 1), ("interface_elevation", "interface_elevation", None),
             ("free_surface_elevation", "free_surface_elevation", None)]
    compared = 0
    for k, (t, f) in enumerate(frames):
        if times[k] != t:
            problem(f"record {k}: time {times[k]!r}, frame at {t!r}")
        a = read_vtk(f)
        for var, arr, comp in pairs:
            if var not in nc.variables or arr not in a:
                continue
            want = a[arr] if comp is None else a[arr][:, comp]
            got = np.asarray(nc.variables[var][k, :])
            if got.dtype != want.dtype:
                problem(f"{var}: {got.dtype} in the NetCDF file, {want.dtype} in the frames")
            if not np.array_equal(got, want):
                problem(f"record {k} (t = {t}): {var} differs from {os.path.basename(f)} in {np.sum(got != want)} cells")
            compared += 1
    maxfile = next((os.path.join(d, name + "_max" + e) for e in (".vtu", ".pvtu")
                    if os.path.exists(os.path.join(d, name + "_max" + e))), None)
    if maxfile:
        m = read_vtk(maxfile)
        for var in ("max_free_surface_elevation", "min_interface_elevation", "max_speed2", "arrival_time"):
            if not np.array_equal(np.asarray(nc.variables[var][:]), m[var]):
                problem(f"{var} differs from {os.path.basename(maxfile)}")
            compared += 1
        for var in ("max_free_surface_elevation", "max_interface_elevation", "min_interface_elevation",
                    "max_speed1", "max_speed2"):
            want = "time: minimum" if var.startswith("min") else "time: maximum"
            if getattr(nc.variables[var], "cell_methods", None) != want:
                problem(f"{var}: cell_methods = {getattr(nc.variables[var], 'cell_methods', None)!r}, "
                        f"expected {want!r}")
    if compared < 2:
        problem("nothing compared")
    nc.close()
    # xarray opens it too, with the same numbers.
    ds = xr.open_dataset(path, decode_times=False)
    if ds.sizes["nMesh_face"] != dims["nMesh_face"] or ds.sizes["time"] != len(frames):
        problem(f"xarray sizes {dict(ds.sizes)}")
    last = read_vtk(frames[-1][1])
    if "h1" in ds and not np.array_equal(ds["h1"].isel(time=-1).values, last["h1"]):
        problem("xarray: h1 of the last record differs from the last frame")
    ds.close()
    # Times decode into dates from the start date.
    ds = xr.open_dataset(path)
    first = str(ds["time"].values[0])[:19].replace("T", " ")
    if first != start:
        problem(f"xarray decodes the first time as {first}, expected {start}")
    ds.close()
    print(f"{path}: {len(frames)} records, {compared} arrays compared, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
