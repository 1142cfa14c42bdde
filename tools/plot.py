#!/usr/bin/env python3
"""Pictures of a pycno output directory (what `pycno run --out DIR` writes).

  plot.py DIR                     DIR/<name>_interface_last.png: interface elevation, last frame
  plot.py DIR --time 0.5          the frame whose time is closest to 0.5 s
  plot.py DIR --field h1          any cell array; a vector one (velocity1) as its magnitude
  plot.py DIR --animate           DIR/<name>_<field>.gif: every frame, one colour scale
  plot.py DIR --gauges            DIR/gauges.png: the time series in DIR/gauges.csv
  plot.py DIR --max               DIR/<name>_max_surface.png: a max map (<name>_max.vtu;
                                  --field max_speed2, arrival_time, ...)
  plot.py DIR --transect "X,Y X,Y ..."   DIR/<name>_transect_<when>.png: profile along the
                                  polyline of the surface, interface, bottom, h1, h2, the
                                  velocity along it (signed) and the speeds
  --clim LO HI, --cmap NAME, --aspect equal|auto|NUMBER (e.g. 5 stretches y five times,
  for long channels), --out FILE   write FILE instead

`pycno plot ...` runs this script with the project's venv.

Needs vtk, numpy and matplotlib (tools/setup.sh puts them in .venv).
"""
import argparse
import csv
import json
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")  # files only: must work without a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.animation import FuncAnimation, PillowWriter  # noqa: E402
from matplotlib.tri import Triangulation  # noqa: E402

DEFAULT_FIELD = "interface_elevation"
UNITS = {"h1": "m", "h2": "m", "interface_elevation": "m", "free_surface_elevation": "m",
         "bathymetry": "m", "velocity1": "m/s", "velocity2": "m/s"}
# Short names keep the file names readable (dambreak_interface_last.png).
SHORT = {"interface_elevation": "interface", "free_surface_elevation": "surface"}


class PlotError(Exception):
    """A problem worth one line to the user, not a traceback."""


def run_name(outdir):
    try:
        with open(os.path.join(outdir, "stats.json")) as f:
            return str(json.load(f)["name"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # stats.json is a convenience; the .pvd name will do


def find_pvd(outdir):
    if not os.path.isdir(outdir):
        raise PlotError(f"{outdir}: no such directory")
    name = run_name(outdir)
    if name and os.path.isfile(os.path.join(outdir, name + ".pvd")):
        return name, os.path.join(outdir, name + ".pvd")
    pvds = sorted(f for f in os.listdir(outdir) if f.endswith(".pvd"))
    if len(pvds) != 1:
        what = "no .pvd file" if not pvds else "several .pvd files (" + ", ".join(pvds) + ")"
        raise PlotError(f"{outdir}: {what}; is this a pycno output directory?")
    return name or pvds[0][:-4], os.path.join(outdir, pvds[0])


def read_series(pvd):
    """[(time, file)] in time order."""
    try:
        root = ET.parse(pvd).getroot()
        frames = [(float(d.get("timestep")), os.path.join(os.path.dirname(pvd), d.get("file")))
                  for d in root.iter("DataSet")]
    except (ET.ParseError, TypeError, ValueError) as e:
        raise PlotError(f"{pvd}: not a readable VTK collection ({e})")
    if not frames:
        raise PlotError(f"{pvd}: lists no frames")
    return sorted(frames)


def read_grid(path):
    import vtk  # slow to import; --gauges never needs it

    vtk.vtkObject.GlobalWarningDisplayOff()  # we check the result ourselves, in one line
    if not os.path.isfile(path):
        raise PlotError(f"{path}: listed in the .pvd but missing")
    reader = (vtk.vtkXMLPUnstructuredGridReader() if path.endswith(".pvtu")
              else vtk.vtkXMLUnstructuredGridReader())
    reader.SetFileName(path)
    reader.Update()
    grid = reader.GetOutput()
    if grid is None or grid.GetNumberOfCells() == 0:
        raise PlotError(f"{path}: could not be read (or holds no cells)")
    return grid


def triangulation(grid, path):
    from vtk.util.numpy_support import vtk_to_numpy

    xy = vtk_to_numpy(grid.GetPoints().GetData())[:, :2]
    cells = grid.GetCells()
    offsets = vtk_to_numpy(cells.GetOffsetsArray())
    if np.any(np.diff(offsets) != 3):
        raise PlotError(f"{path}: has cells that are not triangles")
    tris = vtk_to_numpy(cells.GetConnectivityArray()).reshape(-1, 3)
    # A multi-rank frame (.pvtu) repeats the points its pieces share: one point per place,
    # or matplotlib's triangulation finds overlapping edges and refuses it ("Triangulation
    # is invalid").
    xy, inverse = np.unique(xy, axis=0, return_inverse=True)
    tris = inverse.reshape(-1)[tris]
    scale = length_scale(xy)
    tri = Triangulation(xy[:, 0] / scale, xy[:, 1] / scale, tris)
    tri.pycno_scale = scale  # coordinates drawn in km (1000) or m (1)
    return tri


def length_scale(xy):
    """1000 (axes in km) for a domain 10 km across or more, else 1 (metres)."""
    extent = np.ptp(xy, axis=0).max() if len(xy) else 0.0
    return 1000.0 if extent >= 10000.0 else 1.0


def length_unit(scale):
    return "km" if scale == 1000.0 else "m"


def time_unit(t):
    """(divisor, unit) to show a time of `t` seconds in: s, min, h or d."""
    t = abs(t)
    if t >= 2 * 86400:
        return 86400.0, "d"
    if t >= 2 * 3600:
        return 3600.0, "h"
    if t >= 2 * 60:
        return 60.0, "min"
    return 1.0, "s"


def fmt_time(t):
    div, unit = time_unit(t)
    return f"{t / div:.4g} {unit}"


def cell_field(grid, field, path, vector=False):
    """Per-cell values of `field`; vectors become their magnitude (with vector=True: the
    vectors' x and y components)."""
    from vtk.util.numpy_support import vtk_to_numpy

    data = grid.GetCellData()
    array = data.GetArray(field)
    if array is None:
        names = ", ".join(data.GetArrayName(i) for i in range(data.GetNumberOfArrays()))
        raise PlotError(f"{path}: no cell array '{field}' (there are: {names})")
    values = vtk_to_numpy(array).astype(float)
    if vector:
        return values[:, :2]
    return np.linalg.norm(values, axis=1) if values.ndim == 2 else values


def field_label(field, is_vector):
    unit = UNITS.get(field, "m/s" if field.startswith("velocity") else "")
    name = f"|{field}|" if is_vector else field
    return f"{name} [{unit}]" if unit else name


def atomic_save(path, write):
    """Call write(tmp) then rename tmp onto path, so nobody ever sees half a picture."""
    folder = os.path.dirname(os.path.abspath(path))
    stem, ext = os.path.splitext(os.path.basename(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{stem}.", suffix=ext)  # ext: the format
    except OSError as e:
        raise PlotError(f"{path}: cannot write there ({e.strerror})")
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give it a normal file's mode
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    print(path)


# Set by main from --cmap, --clim and --aspect.
STYLE = {"cmap": "viridis", "clim": None, "aspect": "equal"}


def map_figure(tri, values, label, dpi):
    x, y = tri.x, tri.y
    wide = (x.max() - x.min()) / max(y.max() - y.min(), 1e-30)
    stretch = 1.0 if STYLE["aspect"] in ("equal", "auto") else float(STYLE["aspect"])
    # A long channel gets a wide, short figure instead of a thin strip in a square one.
    ratio = min(max(wide / stretch, 0.5), 4.0) if STYLE["aspect"] != "auto" else 1.2
    fig, ax = plt.subplots(figsize=(min(6.2 * ratio, 16), 6.2), dpi=dpi)
    coll = ax.tripcolor(tri, facecolors=values, shading="flat", cmap=STYLE["cmap"])
    if STYLE["clim"]:
        coll.set_clim(*STYLE["clim"])
    ax.set_aspect(1.0 if STYLE["aspect"] == "equal" else STYLE["aspect"] if STYLE["aspect"] == "auto"
                  else float(STYLE["aspect"]))
    # No margin: the domain edge then lies under the axes frame, which hides the odd
    # unfilled boundary pixel that unantialiased triangles leave.
    ax.margins(0)
    unit = length_unit(getattr(tri, "pycno_scale", 1.0))
    ax.set_xlabel(f"x [{unit}]")
    ax.set_ylabel(f"y [{unit}]")
    fig.colorbar(coll, ax=ax, label=label, shrink=0.85)
    return fig, ax, coll


def title(name, t):
    return f"{name}: t = {fmt_time(t)}"


def pick_frame(args, outdir, frames):
    """The frame of --time (the closest), or the last."""
    if args.time is None:
        return frames[-1]
    times = np.array([f[0] for f in frames])
    slack = 1e-9 * max(1.0, abs(times[-1]))  # the .pvd holds 0.30000000000000004 and such
    if not times[0] - slack <= args.time <= times[-1] + slack:
        raise PlotError(f"--time {args.time:g} is outside the series in {outdir} "
                        f"({times[0]:g} to {times[-1]:g} s)")
    return frames[int(np.argmin(np.abs(times - args.time)))]


def plot_frame(args, outdir, name, frames):
    t, path = pick_frame(args, outdir, frames)
    when = "last" if args.time is None else f"t{t:g}"
    grid = read_grid(path)
    tri = triangulation(grid, path)
    values = cell_field(grid, args.field, path)
    vector = grid.GetCellData().GetArray(args.field).GetNumberOfComponents() > 1
    fig, ax, _ = map_figure(tri, values, field_label(args.field, vector), args.dpi)
    ax.set_title(title(name, t))
    out = args.out or os.path.join(outdir, f"{name}_{SHORT.get(args.field, args.field)}_{when}.png")
    atomic_save(out, lambda tmp: fig.savefig(tmp, dpi=args.dpi, bbox_inches="tight", format="png"))
    plt.close(fig)


def plot_animation(args, outdir, name, frames):
    grid = read_grid(frames[0][1])
    tri = triangulation(grid, frames[0][1])
    cell_field(grid, args.field, frames[0][1])  # fail on an unknown field before reading more
    vector = grid.GetCellData().GetArray(args.field).GetNumberOfComponents() > 1
    # Every frame is read up front: the colour scale has to span the whole series.
    series = []
    for t, path in frames:
        values = cell_field(read_grid(path), args.field, path)
        if len(values) != tri.triangles.shape[0]:
            raise PlotError(f"{path}: {len(values)} cells, but the first frame has "
                            f"{tri.triangles.shape[0]}; the mesh must not change")
        series.append((t, values))
    lo = min(v.min() for _, v in series)
    hi = max(v.max() for _, v in series)
    if STYLE["clim"]:
        lo, hi = STYLE["clim"]
    fig, ax, coll = map_figure(tri, series[0][1], field_label(args.field, vector), args.dpi)
    coll.set_clim(lo, hi)
    ax.set_title(title(name, series[0][0]))  # before tight_layout, so the title gets its room
    fig.tight_layout()

    def show(i):
        coll.set_array(series[i][1])
        ax.set_title(title(name, series[i][0]))
        return (coll,)

    anim = FuncAnimation(fig, show, frames=len(series), blit=False)
    out = args.out or os.path.join(outdir, f"{name}_{SHORT.get(args.field, args.field)}.gif")
    atomic_save(out, lambda tmp: anim.save(tmp, writer=PillowWriter(fps=args.fps), dpi=args.dpi))
    plt.close(fig)


def read_gauges(path):
    """({gauge: "(x, y)"} from the comments, point gauge names in order, boundary gauge tags
    in order, {column: values})."""
    if not os.path.isfile(path):
        raise PlotError(f"{path}: no such file (was the run given any gauges?)")
    where, bounds, header, rows = {}, [], None, []
    with open(path, newline="") as f:
        for line in f:
            line = line.strip()
            if line.startswith("#"):
                m = re.match(r"#\s*gauge\s+(\S+)\s+at\s+(\([^)]*\))", line)
                if m:
                    where[m.group(1)] = m.group(2)
                m = re.match(r"#\s*boundary\s+([^\s:]+):", line)
                if m:
                    bounds.append(m.group(1))
            elif line and header is None:
                header = next(csv.reader([line]))
            elif line:
                rows.append(next(csv.reader([line])))
    suffixes = ["h1", "h2", "u1", "v1", "u2", "v2", "interface", "surface"]
    flows = ["Q1", "Q2", "V1", "V2"]
    # Point gauges' columns first, then each boundary gauge's four (its tag in a comment).
    points_end = len(header or []) - len(flows) * len(bounds)
    if not header or header[:2] != ["time", "step"] or points_end < 2 or (points_end - 2) % len(suffixes):
        raise PlotError(f"{path}: the header is not 'time,step,<gauge>_h1,...'")
    gauges = []
    for i in range(2, points_end, len(suffixes)):
        g = header[i][: -len("_h1")]
        if [f"{g}_{s}" for s in suffixes] != header[i:i + len(suffixes)]:
            raise PlotError(f"{path}: unexpected columns {header[i:i + len(suffixes)]}")
        gauges.append(g)
    for k, b in enumerate(bounds):
        i = points_end + len(flows) * k
        if [f"{b}_{s}" for s in flows] != header[i:i + len(flows)]:
            raise PlotError(f"{path}: unexpected columns {header[i:i + len(flows)]} for boundary {b}")
    if rows and len(rows[-1]) != len(header):
        rows.pop()  # a run still going may be halfway through appending its last row
    try:
        table = np.array(rows, dtype=float).reshape(-1, len(header))
    except ValueError:
        raise PlotError(f"{path}: a data row is not {len(header)} numbers")
    if len(table) == 0:
        raise PlotError(f"{path}: holds no data rows")
    return where, gauges, bounds, dict(zip(header, table.T))


def plot_gauges(args, outdir, name):
    path = os.path.join(outdir, "gauges.csv")
    where, gauges, bounds, col = read_gauges(path)
    div, unit = time_unit(col["time"][-1])
    t = col["time"] / div
    # A fifth panel for the discharges of boundary gauges, where the run recorded any.
    rows = 5 if bounds else 4
    fig, axes = plt.subplots(rows, 1, figsize=(8, 9 + 2 * (rows - 4)), sharex=True, dpi=args.dpi)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, g in enumerate(gauges):
        c = colours[k % len(colours)]
        label = f"{g} {where[g]}" if g in where else g
        axes[0].plot(t, col[f"{g}_interface"], color=c, label=label)
        axes[1].plot(t, col[f"{g}_surface"], color=c)
        axes[2].plot(t, col[f"{g}_h1"], color=c)
        axes[3].plot(t, np.hypot(col[f"{g}_u1"], col[f"{g}_v1"]), color=c)
        axes[3].plot(t, np.hypot(col[f"{g}_u2"], col[f"{g}_v2"]), color=c, linestyle="--")
    for k, b in enumerate(bounds):
        c = colours[k % len(colours)]
        axes[4].plot(t, col[f"{b}_Q1"], color=c, label=b)
        axes[4].plot(t, col[f"{b}_Q2"], color=c, linestyle="--")
    labels = ["interface elevation [m]", "free surface [m]", "h1 [m]",
              "speed [m/s]\n(solid: layer 1, dashed: layer 2)",
              "discharge in [m³/s]\n(solid: layer 1, dashed: layer 2)"]
    for ax, label in zip(axes, labels):
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    if gauges:
        axes[0].legend(fontsize="small")
    if bounds:
        axes[4].legend(fontsize="small")
    axes[-1].set_xlabel(f"time [{unit}]")
    axes[0].set_title(f"{name or os.path.basename(os.path.abspath(outdir))}: gauges")
    fig.tight_layout()
    out = args.out or os.path.join(outdir, "gauges.png")
    atomic_save(out, lambda tmp: fig.savefig(tmp, dpi=args.dpi, format="png"))
    plt.close(fig)


def plot_max(args, outdir, name):
    field = args.field if args.field != DEFAULT_FIELD else "max_free_surface_elevation"
    path = next((os.path.join(outdir, f"{name}_max{e}") for e in (".vtu", ".pvtu")
                 if os.path.isfile(os.path.join(outdir, f"{name}_max{e}"))), None)
    if path is None:
        raise PlotError(f"{outdir}: no {name}_max.vtu (was the run given output.max_maps?)")
    grid = read_grid(path)
    tri = triangulation(grid, path)
    values = cell_field(grid, field, path)
    unit = "s" if field == "arrival_time" else "m/s" if "speed" in field else "m"
    if field == "arrival_time":
        values = np.ma.masked_less(values, 0)  # -1: never reached
    fig, ax, _ = map_figure(tri, values, f"{field} [{unit}]", args.dpi)
    ax.set_title(f"{name}: {field.replace('_', ' ')} over the run")
    short = field.replace("max_free_surface_elevation", "max_surface")
    out = args.out or os.path.join(outdir, f"{name}_{short}.png")
    atomic_save(out, lambda tmp: fig.savefig(tmp, dpi=args.dpi, bbox_inches="tight", format="png"))
    plt.close(fig)


def parse_polyline(text):
    try:
        pts = [tuple(float(v) for v in p.split(",")) for p in text.replace(";", " ").split()]
    except ValueError:
        pts = []
    if len(pts) < 2 or any(len(p) != 2 for p in pts) or not np.all(np.isfinite(pts)):
        raise PlotError(f"--transect {text!r}: expected two or more points \"X,Y X,Y ...\" (metres)")
    return np.array(pts)


def plot_transect(args, outdir, name, frames):
    pts = parse_polyline(args.transect)
    t, path = pick_frame(args, outdir, frames)
    grid = read_grid(path)
    tri = triangulation(grid, path)
    scale = tri.pycno_scale
    seg = np.hypot(*np.diff(pts, axis=0).T)
    if np.any(seg == 0):
        raise PlotError("--transect: two consecutive points are the same")
    along = np.concatenate([[0.0], np.cumsum(seg)])
    samples = 600
    s = np.linspace(0.0, along[-1], samples)
    xy = np.column_stack([np.interp(s, along, pts[:, 0]), np.interp(s, along, pts[:, 1])])
    cell = tri.get_trifinder()(xy[:, 0] / scale, xy[:, 1] / scale)
    if np.all(cell < 0):
        raise PlotError("--transect: the polyline does not cross the domain")
    inside = cell >= 0
    if inside.sum() < samples / 2:
        x0, x1, y0, y1 = (tri.x.min() * scale, tri.x.max() * scale, tri.y.min() * scale, tri.y.max() * scale)
        print(f"warning: --transect: only {inside.sum()} of its {samples} samples "
              f"({100.0 * inside.sum() / samples:.0f}%) lie inside the domain, so the profile is drawn "
              f"from few cells; the domain spans x {x0:g} to {x1:g} m, y {y0:g} to {y1:g} m "
              "(the points are in metres)", file=sys.stderr)
    # The unit vector of each sample's segment: the direction "along" the transect.
    k = np.clip(np.searchsorted(along, s, side="right") - 1, 0, len(seg) - 1)
    tangent = np.diff(pts, axis=0)[k] / seg[k][:, None]

    def at(field):
        v = cell_field(grid, field, path)
        out = np.full(len(s), np.nan)
        out[inside] = v[cell[inside]]
        return out

    def along_velocity(field):
        v = cell_field(grid, field, path, vector=True)
        out = np.full(len(s), np.nan)
        out[inside] = np.sum(v[cell[inside]] * tangent[inside], axis=1)
        return out

    dist = s / scale
    fig, axes = plt.subplots(4, 1, figsize=(9, 10), sharex=True, dpi=args.dpi)
    axes[0].plot(dist, at("free_surface_elevation"), label="free surface")
    axes[0].plot(dist, at("interface_elevation"), label="interface")
    axes[0].plot(dist, -at("bathymetry"), color="0.3", label="bottom")
    axes[0].set_ylabel("elevation [m]")
    axes[1].plot(dist, at("h1"), label="h1 (upper layer)")
    axes[1].plot(dist, at("h2"), label="h2 (lower layer)")
    axes[1].set_ylabel("thickness [m]")
    # Signed: an exchange flow's two layers run in opposite directions.
    axes[2].plot(dist, along_velocity("velocity1"), label="layer 1 (upper)")
    axes[2].plot(dist, along_velocity("velocity2"), label="layer 2 (lower)", linestyle="--")
    axes[2].axhline(0.0, color="0.5", linewidth=0.8)
    axes[2].set_ylabel("velocity along the\ntransect [m/s]\n(+: first point to last)")
    axes[3].plot(dist, at("velocity1"), label="|velocity1|")
    axes[3].plot(dist, at("velocity2"), label="|velocity2|", linestyle="--")
    axes[3].set_ylabel("speed [m/s]")
    axes[3].set_xlabel(f"distance along the transect [{length_unit(scale)}]")
    for ax in axes:
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
    where = " - ".join(f"({x / scale:g}, {y / scale:g})" for x, y in pts)
    axes[0].set_title(f"{title(name, t)}, transect {where} {length_unit(scale)}")
    fig.tight_layout()
    out = args.out or os.path.join(outdir, f"{name}_transect_{'last' if args.time is None else f't{t:g}'}.png")
    atomic_save(out, lambda tmp: fig.savefig(tmp, dpi=args.dpi, format="png"))
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(
        prog=os.environ.get("PYCNO_PLOT_PROG"),
        description="Pictures of a pycno output directory: a map of one frame (default: the "
        "interface elevation at the last output time), an animated GIF of all frames, or the "
        "gauge time series.",
        epilog="Prints the path of each file it writes.  Exit status: 1 on an error, "
        "2 on a bad command line.")
    p.add_argument("dir", metavar="DIR", help="output directory of `pycno run --out DIR`")
    p.add_argument("--field", default=DEFAULT_FIELD,
                   help="cell array to map (default %(default)s); a vector array, e.g. "
                   "velocity1, is mapped as its magnitude")
    mode = p.add_mutually_exclusive_group()
    p.add_argument("--time", type=float, metavar="T",
                      help="map the frame whose time is closest to T seconds (default: the last)")
    mode.add_argument("--animate", action="store_true",
                      help="write DIR/<name>_<field>.gif of all frames, one colour scale")
    mode.add_argument("--gauges", action="store_true",
                      help="write DIR/gauges.png from DIR/gauges.csv")
    mode.add_argument("--max", action="store_true",
                      help="map a max map of DIR/<name>_max.vtu (output.max_maps): --field "
                      "max_free_surface_elevation (default), max_interface_elevation, "
                      "min_interface_elevation, max_speed1, max_speed2 or arrival_time")
    mode.add_argument("--transect", metavar="'X,Y X,Y ...'",
                      help="profile along this polyline (metres) of the surface, interface, bottom, "
                      "h1, h2, the velocity along the transect (signed) and the speeds, at --time "
                      "(default: the last frame); warns when most of it lies outside the domain")
    p.add_argument("--clim", nargs=2, type=float, metavar=("LO", "HI"), help="colour limits of a map")
    p.add_argument("--cmap", default="viridis", help="matplotlib colour map (default %(default)s)")
    p.add_argument("--aspect", default="equal",
                   help="equal (default), auto (fill the figure), or a number: y drawn that many "
                   "times as long as x (for long, narrow channels)")
    p.add_argument("--out", metavar="FILE", help="write FILE instead of the default path")
    p.add_argument("--dpi", type=int, default=110, help="resolution (default %(default)s)")
    p.add_argument("--fps", type=float, default=4, help="GIF frames per second (default %(default)s)")
    args = p.parse_args()
    if args.gauges and args.field != DEFAULT_FIELD:
        p.error("--field has no meaning with --gauges")
    if args.time is not None and (args.max or args.gauges or args.animate):
        p.error("--time has no meaning with --max, --gauges or --animate")
    if args.clim and not args.clim[0] < args.clim[1]:
        p.error(f"--clim {args.clim[0]:g} {args.clim[1]:g}: expected LO < HI")
    if args.aspect not in ("equal", "auto"):
        try:
            if not float(args.aspect) > 0:
                raise ValueError
        except ValueError:
            p.error(f"--aspect {args.aspect!r}: expected equal, auto or a positive number")
    if args.cmap not in plt.colormaps():
        p.error(f"--cmap {args.cmap!r}: not a matplotlib colour map (e.g. viridis, RdBu_r, cividis)")
    STYLE.update(cmap=args.cmap, clim=args.clim, aspect=args.aspect)

    try:
        if args.out and not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
            raise PlotError(f"{args.out}: its directory does not exist")
        if args.gauges:
            if not os.path.isdir(args.dir):
                raise PlotError(f"{args.dir}: no such directory")
            plot_gauges(args, args.dir, run_name(args.dir))
            return 0
        name, pvd = find_pvd(args.dir)
        if args.max:
            plot_max(args, args.dir, name)
            return 0
        frames = read_series(pvd)
        if args.transect is not None:
            plot_transect(args, args.dir, name, frames)
            return 0
        (plot_animation if args.animate else plot_frame)(args, args.dir, name, frames)
    except PlotError as e:
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"{p.prog}: error: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
