#!/usr/bin/env bash
# Speed on a mostly dry domain (issue 17): the same mesh stepped 80% dry and all wet.
#
#   tools/drybench.sh [BACKEND] [CELLS] [STEPS] [WORKDIR]
#
# BACKEND cpu (default) or cuda; CELLS the target triangle count (default 200000); STEPS the
# steps per run (default 200; both runs take the same number, so the comparison is per step
# whatever the two time steps). The domain is 50 x 10 over a bed rising from 1 m deep at
# x = 0 to 4 m above the reference level at x = 50 (slope 0.1):
# - dry: the surface at 0, so the coast is at x = 10 and 80% of the domain is dry land;
# - wet: the surface at 5 m, above all the land, so every cell holds both layers.
# Both have a 0.2 m interface step at x = 5 (a moving internal front in the wet part) and
# the same mesh (the domain and bed decide it, not the water). Prints each run's stepping
# seconds and seconds per step, and the dry/wet ratio; the runs' stats.json stay in WORKDIR.
# Environment: PYCNO (default target/release/pycno), THREADS (CPU threads; default all).
set -euo pipefail
BACKEND="${1:-cpu}"
CELLS="${2:-200000}"
STEPS="${3:-200}"
W="${4:-/tmp/pycno-drybench}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYCNO="${PYCNO:-$ROOT/target/release/pycno}"
mkdir -p "$W"
for kind in dry wet; do
    if [ "$kind" = dry ]; then surface=0; else surface=5; fi
    cat >"$W/$kind.json" <<JSON
{
    "name": "$kind",
    "domain": { "outer": [[0, 0], [50, 0], [50, 10], [0, 10]] },
    "resolution": { "cells": $CELLS },
    "bathymetry": { "type": "slope", "depth": 1.0, "gradient": [-0.1, 0.0] },
    "initial": { "type": "dam_break_x", "x0": 5.0, "interface_left": -0.3, "interface_right": -0.5, "surface": $surface },
    "physics": { "g": 9.81, "r": 0.98, "gamma": 0.9 },
    "time": { "end": 100.0 }
}
JSON
done
threads=()
[ -n "${THREADS:-}" ] && threads=(--threads "$THREADS")
for prec in f32 f64; do
    for kind in dry wet; do
        "$PYCNO" "${threads[@]}" run "$W/$kind.json" --backend "$BACKEND" --precision "$prec" --max-steps "$STEPS" \
            --no-vtk -q --out "$W/$kind-$prec" >/dev/null
    done
    python3 - "$W" "$prec" <<'PY'
import json, sys
w, prec = sys.argv[1], sys.argv[2]
s = {k: json.load(open(f"{w}/{k}-{prec}/stats.json")) for k in ("dry", "wet")}
for k, v in s.items():
    print(f"{prec} {k}: {v['cells']} cells, {v['steps']} steps, {v['stepping_seconds']:.3f} s stepping, "
          f"{1e3 * v['stepping_seconds'] / v['steps']:.3f} ms/step, edges {v['phases']['edges_interior']:.3f} s ({v['device']})")
print(f"{prec} dry/wet time per step: {(s['dry']['stepping_seconds'] / s['dry']['steps']) / (s['wet']['stepping_seconds'] / s['wet']['steps']):.3f}")
PY
done
