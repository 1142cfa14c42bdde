#!/usr/bin/env python3
"""Turn tools/scaling.sh's CSV into the scaling tables (markdown) and, with matplotlib, a plot.

Usage: scaling_table.py scaling.csv GPUS [BACKEND]   (BACKEND cpu labels the columns "ranks")

Strong scaling: speed-up and efficiency of GPUS GPUs against one at the same mesh (paper
Table 2 and Figure 4). Weak scaling: efficiency = time on one GPU with n cells over time on
GPUS GPUs with GPUS * n cells, at the same number of steps per unit of simulated time (the
step count grows with the mesh, so times are compared per step). Per-phase host times show
how much of the exchange the overlap hides. "same" says whether the multi-GPU state checksum
equals the one-GPU run's (bit for bit), where the same mesh was run on one GPU.
"""

import csv
import os
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
G = int(sys.argv[2])
U = "ranks" if len(sys.argv) > 3 and sys.argv[3] == "cpu" else "GPUs"
U1 = "rank" if U == "ranks" else "GPU"
for r in rows:
    for k in ("cells", "gpus", "steps"):
        r[k] = int(r[k])
    for k in ("seconds", "cell_updates_per_s", "pack", "exchange_wait", "unpack", "edges_interior", "edges_comm", "dt", "allreduce", "update"):
        r[k] = float(r[k])

one = {r["cells"]: r for r in rows if r["gpus"] == 1}
print(f"### Strong scaling, {G} {U} against 1 (t = 0.1, stepping seconds)\n")
print(f"| cells | steps | 1 {U1} (s) | overlap (s) | blocking (s) | speed-up (overlap) | efficiency | overlap gain | same bits |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: |")
plot = []
for r in rows:
    if r["kind"] != "strong" or r["gpus"] != 1:
        continue
    n = r["cells"]
    ov = next((x for x in rows if x["cells"] == n and x["gpus"] == G and x["exchange"] == "overlap"), None)
    bl = next((x for x in rows if x["cells"] == n and x["gpus"] == G and x["exchange"] == "blocking"), None)
    if not ov or not bl:
        continue
    sp = r["seconds"] / ov["seconds"]
    same = "yes" if ov["checksum"] == r["checksum"] == bl["checksum"] else "NO"
    print(f"| {n} | {r['steps']} | {r['seconds']:.4f} | {ov['seconds']:.4f} | {bl['seconds']:.4f} | {sp:.2f}x | {100 * sp / G:.1f}% | {100 * (bl['seconds'] / ov['seconds'] - 1):+.1f}% | {same} |")
    plot.append((n, sp))

print(f"\n### Weak scaling, {G} {U}\n")
print(f"| cells per {U1} | 1 {U1}: cells, steps, s | {G} {U}: cells, steps, s (overlap) | blocking s | efficiency (per step) |")
print("| ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    if r["gpus"] != G or r["exchange"] != "overlap" or r["kind"] != "weak":
        continue
    per = r["cells"] / G
    base = min((x for x in rows if x["gpus"] == 1), key=lambda x: abs(x["cells"] - per), default=None)
    bl = next((x for x in rows if x["kind"] == "weak" and x["cells"] == r["cells"] and x["exchange"] == "blocking"), None)
    if base is None or abs(base["cells"] - per) > 0.02 * per:
        continue
    eff = (base["seconds"] / base["steps"]) / (r["seconds"] / r["steps"])
    bls = f"{bl['seconds']:.4f}" if bl else "-"
    print(f"| {per:.3g} | {base['cells']}, {base['steps']}, {base['seconds']:.4f} | {r['cells']}, {r['steps']}, {r['seconds']:.4f} | {bls} | {100 * eff:.1f}% |")

print(f"\n### Per-phase host milliseconds per step on {G} {U} (mean over ranks)\n")
if U == "GPUs":
    print("On a GPU, kernels are queued and run asynchronously: `edges` is the time to queue them, `exchange` the host's wait")
    print("for the messages while the interior edge kernel runs, `dt` includes waiting for all queued kernels (the time")
    print("step is read back).\n")
print("| cells | loop | pack | exchange | unpack | edges | dt (+ kernels) | allreduce | update | total |")
print("| ---: | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    if r["gpus"] != G:
        continue
    k = 1e3 / r["steps"]
    ph = [r["pack"], r["exchange_wait"], r["unpack"], r["edges_interior"] + r["edges_comm"], r["dt"], r["allreduce"], r["update"]]
    print(f"| {r['cells']} | {r['exchange']} | " + " | ".join(f"{x * k:.4f}" for x in ph) + f" | {r['seconds'] * k:.4f} ms |")

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if plot:
        fig, ax = plt.subplots(figsize=(6, 4))
        xs, ys = zip(*plot)
        ax.semilogx(xs, ys, "o-", label=f"pycno, {G} {U} (overlap)")
        ax.axhline(G, color="gray", ls="--", label="linear")
        ax.set_xlabel("cells")
        ax.set_ylabel(f"speed-up over one {U1}")
        ax.set_title("Strong scaling, paper benchmark to t = 0.1")
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
        out = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), f"scaling_{G}gpus.png")
        fig.savefig(out, dpi=120, bbox_inches="tight")
        print(f"\nplot: {out}")
except ImportError:
    pass
