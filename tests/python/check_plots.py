"""Checks the words and units of tools/plot.py's pictures of a run (issue 46, item 10).

  check_plots.py PLOT_PY OUT

OUT: a run on two ranks (frames as .pvtu pieces) of a domain 100 km long, three hours long,
with a gauge. Each figure is caught as the script closes it, and its texts are checked:
titles in hours, axes in km, a transect with the signed velocity along it, a warning for a
transect mostly outside the domain, the gauges' time axis in hours.
"""
import contextlib
import importlib.util
import io
import sys

plot_py, out = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("plot", plot_py)
plot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot)

closed = []
plot.plt.close = lambda fig=None: closed.append(fig)


def run(*args):
    """plot.py OUT ARGS: its figure, its status and what it printed to stderr."""
    sys.argv = ["plot.py", out, *args]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = plot.main()
    assert status == 0, f"plot.py {args}: status {status}: {err.getvalue()}"
    return closed[-1], err.getvalue()


fails = []


def check(ok, what):
    if not ok:
        fails.append(what)


fig, _ = run()
ax = fig.axes[0]
check(ax.get_title().endswith("t = 3 h"), f"map title in hours: {ax.get_title()!r}")
check(ax.get_xlabel() == "x [km]" and ax.get_ylabel() == "y [km]",
      f"map axes in km: {ax.get_xlabel()!r}, {ax.get_ylabel()!r}")

# Along the channel, through the two ranks' pieces (matplotlib refused their repeated
# points as an invalid triangulation).
fig, err = run("--transect", "1000,5000 99000,5000")
check("warning" not in err, f"a transect inside the domain warns: {err!r}")
titles = [a.get_ylabel() for a in fig.axes]
check(any("along" in t for t in titles), f"a panel of the velocity along the transect: {titles}")
along = next(a for a in fig.axes if "along" in a.get_ylabel())
values = [y for line in along.get_lines() for y in line.get_ydata() if y == y]
check(min(values) < 0 < max(values), f"signed along-transect velocities, both directions: "
      f"{min(values) if values else None} .. {max(values) if values else None}")
check(fig.axes[-1].get_xlabel() == "distance along the transect [km]",
      f"transect distance in km: {fig.axes[-1].get_xlabel()!r}")
check(" h," in fig.axes[0].get_title(), f"transect title in hours: {fig.axes[0].get_title()!r}")

# Mostly outside: drawn, with a warning that says so.
fig, err = run("--transect", "-300000,5000 50000,5000")
check("warning" in err and "inside the domain" in err, f"no warning for a transect mostly outside: {err!r}")

fig, _ = run("--gauges")
check(fig.axes[-1].get_xlabel() == "time [h]", f"gauge time axis in hours: {fig.axes[-1].get_xlabel()!r}")

if fails:
    print("\n".join(fails))
    sys.exit(1)
print("plots: ok")
