#!/usr/bin/env bash
# Multi-GPU tests (one MPI rank per GPU): the paper benchmark on N GPUs equals one GPU bit for
# bit (the order-independent state checksum of stats.json), in float32 and float64, with the
# overlapped and the blocking exchange, each through the host (pinned copies and MPI) and from
# GPU to GPU (NCCL and the GPUs' own stores, device-resident; also with NCCL outside CUDA graphs, with the host driving
# every step, and the fallback where NCCL is missing), for N = 2 .. the GPUs present; mass per layer is
# conserved; the parallel VTK output (.pvtu + one .vtu per rank) is written. Then runs that
# cannot be lost, on GPUs: a run killed (SIGKILL) on 1 and on 2 GPUs restarts to the
# uninterrupted result bit for bit, a 2-GPU checkpoint resumes on 1 GPU bit for bit and on
# the CPU, a blow-up is caught with its report, and gauges agree between 1 and 2 GPUs. At
# second order (physics.order = 2) two GPUs equal one on every path that carries it.
#
#   tools/multi-gpu-check.sh [PYCNO]      (default: target/release/pycno)
#
# MGPU_CELLS: the mesh sizes of the bit-for-bit loop (default "64052 1001898").
#
# Exits non-zero on any failure; prints one line per check and a closing
# "N passed, N failed" line.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYCNO="${1:-$ROOT/target/release/pycno}"
W="$(mktemp -d "${TMPDIR:-/tmp}/pycno-mgpu.XXXXXX")"
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
GPUS="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')"
if [ "${GPUS:-0}" -lt 2 ]; then
    echo "multi-gpu: fewer than 2 GPUs here ($GPUS): skipped"
    exit 0
fi
pass=0
fail=0
check() { # name, then a command that must succeed
    local name=$1
    shift
    if "$@"; then
        echo "ok    $name"
        pass=$((pass + 1))
    else
        echo "FAIL  $name"
        fail=$((fail + 1))
    fi
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1/stats.json" "$2"; }
# float32 stores the thicknesses: an update below half an ulp of h is lost, so over 10^6
# nearly still cells a layer's mass drifts by about 1e-6 in 337 steps, on the CPU as on the
# GPU (BENCHMARKS.md); float64 conserves to 1e-14.
mass_ok() { python3 -c 'import json,sys
s = json.load(open(sys.argv[1]))
tol = 5e-6 if s["precision"] == "f32" else 1e-12
drift = [abs(s[f"mass_layer{l}_end"] / s[f"mass_layer{l}_start"] - 1) for l in "12"]
print(f"      relative mass change: layer 1 {drift[0]:.2e}, layer 2 {drift[1]:.2e} (tolerance {tol:.0e})")
sys.exit(1 if max(drift) > tol else 0)' "$1/stats.json"; }
same() { [ "$(field "$1" state_checksum)" = "$(field "$2" state_checksum)" ] && [ "$(field "$1" steps)" = "$(field "$2" steps)" ]; }
# The ranks together hold the one-GPU run's mass (the exchange loses nothing): to 1e-12,
# the rounding of summing the cells in another order.
same_mass() { python3 -c 'import json,sys
a, b = (json.load(open(f + "/stats.json")) for f in sys.argv[1:3])
sys.exit(0 if all(abs(b[k] / a[k] - 1) < 1e-12 for k in ("mass_layer1_end", "mass_layer2_end")) else 1)' "$1" "$2"; }

ranks=(2)
[ "$GPUS" -gt 2 ] && ranks+=("$GPUS")
# Second order (physics.order = 2) from GPU to GPU: each stage's halo (the receive block's two
# rings) by the GPUs' own stores, device-resident and host-driven, overlapped and blocking,
# equals one GPU bit for bit, as does the host exchange; NCCL asked for at order 2 falls back
# to the host with a note. The dam break, and a lock exchange with dry cells across the halo.
# The resident steps' second-stage tiles finish their cells (by default only on larger meshes
# than these, src/solver/cuda/order2.rs): asked for, on one GPU and on several.
export PYCNO_TILE_FINISH=1
cat >"$W/o2_dambreak.json" <<'JSON'
{ "name": "dambreak2", "domain": { "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] }, "resolution": { "cells": 64052 },
  "bathymetry": { "type": "constant", "depth": 5.0 }, "initial": { "type": "circular_dam_break" },
  "physics": { "order": 2 }, "time": { "end": 0.1 } }
JSON
cat >"$W/o2_lock.json" <<'JSON'
{ "name": "lock2", "domain": { "outer": [[0, 0], [10, 0], [10, 0.25], [0, 0.25]] }, "resolution": { "cells": 20000 },
  "bathymetry": { "type": "constant", "depth": 0.5 },
  "initial": { "type": "dam_break_x", "x0": 5, "interface_left": 1, "interface_right": -1, "surface": 0 },
  "physics": { "r": 0.98, "dry_tolerance": 1e-4, "order": 2 }, "time": { "end": 0.5 } }
JSON
for scen in dambreak lock; do
    for prec in f32 f64; do
        [ "$scen" = lock ] && [ "$prec" = f64 ] && continue
        one="$W/o2_one_${scen}_$prec"
        "$PYCNO" run "$W/o2_$scen.json" --backend cuda --precision "$prec" --no-vtk -q --out "$one" ||
            { echo "FAIL  one GPU, order 2, $scen $prec: run failed"; fail=$((fail + 1)); continue; }
        for mode in "overlap ipc 64" "blocking ipc 64" "overlap ipc 1" "overlap auto 64" "overlap host 64" "overlap nccl 64"; do
            for np in "${ranks[@]}"; do
                read -r ex gx steps <<<"$mode"
                d="$W/o2_${scen}_${prec}_${ex}_${gx}_${steps}_$np"
                want=$gx
                [ "$gx" = auto ] && want=ipc
                [ "$gx" = nccl ] && want=host
                if PYCNO_DEVICE_STEPS=$steps mpirun --allow-run-as-root --bind-to none -np "$np" -x PYCNO_DEVICE_STEPS -x PYCNO_TILE_FINISH "$PYCNO" run \
                    "$W/o2_$scen.json" --backend cuda --precision "$prec" --exchange "$ex" --gpu-exchange "$gx" --no-vtk -q \
                    --out "$d" 2>"$d.err"; then
                    check "$np GPUs = 1 GPU bit for bit, order 2 ($scen, $prec, $ex, --gpu-exchange $gx, device steps $steps): checksum $(field "$d" state_checksum)" same "$one" "$d"
                    check "$np GPUs, order 2 ($scen, $prec, $ex, $gx, $steps): the halo went through $want" grep -q "\"gpu_exchange\": \"$want" "$d/stats.json"
                    check "$np GPUs, order 2 ($scen, $prec, $ex, $gx, $steps): mass per layer conserved" mass_ok "$d"
                    [ "$gx" = nccl ] && check "$np GPUs, order 2, NCCL asked for: a note says why the halo goes through the host" \
                        grep -q "halo goes through the host.*not NCCL" "$d.err"
                else
                    cat "$d.err"
                    echo "FAIL  $np GPUs, order 2, $scen $prec $ex $gx $steps: run failed"
                    fail=$((fail + 1))
                fi
            done
        done
    done
done
echo "multi-gpu order 2: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
