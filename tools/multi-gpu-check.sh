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
for prec in f32 f64; do
    for cells in ${MGPU_CELLS:-64052 1001898}; do
        one="$W/one_${prec}_$cells"
        "$PYCNO" run --cells "$cells" --t-end 0.1 --backend cuda --precision "$prec" --no-vtk -q --out "$one" ||
            { echo "FAIL  one GPU $prec $cells cells: run failed"; fail=$((fail + 1)); continue; }
        check "1 GPU: mass per layer conserved ($prec, $cells cells)" mass_ok "$one"
        for np in "${ranks[@]}"; do
            for ex in overlap blocking; do
                for gx in host nccl ipc; do
                    d="$W/n${np}_${prec}_${cells}_${ex}_$gx"
                    if mpirun --allow-run-as-root --bind-to none -np "$np" "$PYCNO" run --cells "$cells" --t-end 0.1 --backend cuda \
                        --precision "$prec" --exchange "$ex" --gpu-exchange "$gx" --no-vtk -q --out "$d"; then
                        check "$np GPUs = 1 GPU bit for bit ($prec, $cells cells, $ex, $gx): checksum $(field "$d" state_checksum)" same "$one" "$d"
                        check "$np GPUs: mass per layer conserved ($prec, $cells cells, $ex, $gx)" mass_ok "$d"
                        check "$np GPUs: mass per layer = 1 GPU's ($prec, $cells cells, $ex, $gx)" same_mass "$one" "$d"
                        check "$np GPUs: backend cuda on every rank" [ "$(field "$d" backend)" = cuda ]
                        check "$np GPUs: the halo went through $gx ($(field "$d" gpu_exchange))" grep -q "\"gpu_exchange\": \"$gx" "$d/stats.json"
                    else
                        echo "FAIL  $np GPUs $prec $cells $ex $gx: run failed"
                        fail=$((fail + 1))
                    fi
                done
            done
        done
    done
done
# The GPU-to-GPU exchange in its other modes, against the same one-GPU run: NCCL queued step
# by step instead of inside CUDA graphs, the host driving every step (device steps off), and
# NCCL missing (a library name that does not exist): the host-staged exchange, with a note.
one="$W/one_f32_64052"
nccl_mode() { # name, env assignments (space-separated), expected gpu_exchange prefix[, engine asked for]
    local name=$1 env=$2 want=$3 gx=${4:-nccl} d="$W/mode_$1" e xs=()
    for e in $env; do xs+=(-x "${e%%=*}"); done
    # shellcheck disable=SC2086 # one word per assignment
    if env $env mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" "$PYCNO" run --cells 64052 --t-end 0.1 \
        --backend cuda --gpu-exchange "$gx" --no-vtk -q --out "$d" 2>"$d.err"; then
        check "2 GPUs, $name = 1 GPU bit for bit: checksum $(field "$d" state_checksum)" same "$one" "$d"
        check "2 GPUs, $name: the halo went through $want" grep -q "\"gpu_exchange\": \"$want" "$d/stats.json"
    else
        cat "$d.err"
        echo "FAIL  2 GPUs $name: run failed"
        fail=$((fail + 1))
    fi
}
nccl_mode "NCCL outside CUDA graphs" PYCNO_NCCL_GRAPH=0 nccl
nccl_mode "NCCL, host-driven steps" PYCNO_DEVICE_STEPS=1 nccl
nccl_mode "NCCL missing" PYCNO_NCCL_LIB=libpycno-no-such-nccl.so.2 host
nccl_mode "GPU stores, host-driven steps" PYCNO_DEVICE_STEPS=1 ipc ipc
nccl_mode "GPU stores without programmatic launch" PYCNO_PDL=0 ipc ipc
nccl_mode "auto takes the GPU stores" PYCNO_PDL=1 ipc auto
nccl_mode "GPU stores, the halo without ghost updates (the update sends it)" PYCNO_IPC_GHOSTS=0 ipc ipc
nccl_mode "GPU stores, ranks above the ghost updates' limit (the update sends the halo)" PYCNO_IPC_GHOSTS_CELLS=1000 ipc ipc
nccl_mode "GPU stores, a send kernel per step (the update does not send)" "PYCNO_IPC_GHOSTS=0 PYCNO_IPC_UPDATE_SENDS=0" ipc ipc
nccl_mode "GPU stores, ranks above the update's send limit (a send kernel)" "PYCNO_IPC_GHOSTS=0 PYCNO_IPC_UPDATE_SENDS_CELLS=1000" ipc ipc
nccl_mode "GPU stores, every kernel lets the next start early" PYCNO_PDL_EARLY_CELLS=1000000000 ipc ipc
# Ghost updates (the GPU stores' default at first order: each rank updates its receive block
# from what the owners' updates read) with every cell source, on a beta-plane, and layers that
# vanish: two GPUs equal one bit for bit, with ghost updates and without.
cat >"$W/o1_sources.json" <<'JSON'
{ "name": "sources1", "domain": { "outer": [[0, 0], [10, 0], [10, 2], [0, 2]] }, "resolution": { "cells": 20000 },
  "bathymetry": { "type": "constant", "depth": 0.5 },
  "initial": { "type": "dam_break_x", "x0": 5, "interface_left": 1, "interface_right": -1, "surface": 0 },
  "physics": { "r": 0.98, "dry_tolerance": 1e-4, "manning": 0.03, "interlayer_friction": 0.002, "wind_stress": [0.01, 0.005],
               "coriolis": { "f0": 0.5, "beta": 0.05, "y0": 1 } },
  "time": { "end": 0.5 } }
JSON
for prec in f32 f64; do
    one="$W/src_one_$prec"
    "$PYCNO" run "$W/o1_sources.json" --backend cuda --precision "$prec" --no-vtk -q --out "$one" ||
        { echo "FAIL  one GPU, sources, $prec: run failed"; fail=$((fail + 1)); continue; }
    for g in 1 0; do
        d="$W/src_two_${prec}_$g"
        if PYCNO_IPC_GHOSTS=$g mpirun --allow-run-as-root --bind-to none -np 2 -x PYCNO_IPC_GHOSTS "$PYCNO" run "$W/o1_sources.json" \
            --backend cuda --precision "$prec" --gpu-exchange ipc --no-vtk -q --out "$d"; then
            check "2 GPUs = 1 GPU bit for bit, sources on a beta-plane, vanishing layers ($prec, PYCNO_IPC_GHOSTS=$g): checksum $(field "$d" state_checksum)" same "$one" "$d"
            check "2 GPUs, sources ($prec, PYCNO_IPC_GHOSTS=$g): mass per layer = 1 GPU's" same_mass "$one" "$d"
        else
            echo "FAIL  2 GPUs, sources, $prec, PYCNO_IPC_GHOSTS=$g: run failed"
            fail=$((fail + 1))
        fi
    done
done
check "2 GPUs, NCCL missing: the fallback says why" grep -q "halo goes through the host.*NCCL not found" "$W/mode_NCCL missing.err"

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

# Parallel VTK output: one .vtu piece per rank per frame, a .pvtu tying them, all in the .pvd.
d="$W/vtk"
if mpirun --allow-run-as-root --bind-to none -np 2 "$PYCNO" run --cells 64052 --t-end 0.1 --output-interval 0.05 \
    --backend cuda -q --out "$d"; then
    check "2 GPUs: .pvtu set written (3 frames x 2 pieces)" [ "$(ls "$d"/*.pvtu | wc -l)" = 3 ] && [ "$(ls "$d"/*_p0000[01].vtu | wc -l)" = 6 ]
    check "2 GPUs: .pvd lists the .pvtu files" grep -q 'dambreak_00002.pvtu' "$d/dambreak.pvd"
else
    echo "FAIL  2 GPUs with VTK output: run failed"
    fail=$((fail + 1))
fi
# Checkpoints and restarts on GPUs.
base=(run --cells 64052 --t-end 0.1 --output-interval 0.05 --backend cuda -q)
ok_run() { "$@" >"$W/last.log" 2>&1 || { cat "$W/last.log"; return 1; }; }
if ok_run "$PYCNO" "${base[@]}" --out "$W/ck_ref"; then
    PYCNO_KILL=0:47 "$PYCNO" "${base[@]}" --out "$W/ck1" --checkpoint-every 20 >/dev/null 2>&1
    check "1 GPU: killed (SIGKILL) after step 47, left no stats.json" [ ! -f "$W/ck1/stats.json" ]
    ok_run "$PYCNO" run --restart "$W/ck1/checkpoints" --backend cuda -q
    check "1 GPU: restart from step 40 = uninterrupted bit for bit" same "$W/ck_ref" "$W/ck1"
    PYCNO_KILL=1:47 mpirun --allow-run-as-root --bind-to none -np 2 "$PYCNO" "${base[@]}" --out "$W/ck2" --checkpoint-every 20 --checkpoint-keep 5 >/dev/null 2>&1
    check "2 GPUs: rank 1 killed after step 47, job ended" [ ! -f "$W/ck2/stats.json" ]
    ok_run mpirun --allow-run-as-root --bind-to none -np 2 "$PYCNO" run --restart "$W/ck2/checkpoints" --backend cuda -q
    check "2 GPUs: restart from step 40 on 2 GPUs = uninterrupted bit for bit" same "$W/ck_ref" "$W/ck2"
    ok_run "$PYCNO" run --restart "$W/ck2/checkpoints/step_0000000020" --backend cuda -q --out "$W/ck2to1"
    check "2-GPU checkpoint resumed on 1 GPU = uninterrupted bit for bit" same "$W/ck_ref" "$W/ck2to1"
    check "2-GPU checkpoint resumed on the CPU (runs to the end)" ok_run "$PYCNO" run --restart "$W/ck2/checkpoints/step_0000000020" --backend cpu -q --out "$W/ck2cpu"
fi
# A blow-up every backend makes in its first step, in either precision: an upper layer whose
# momentum flux overflows in the first edge pass (a physical blow-up of the scheme takes
# thousands of steps now that thin and vanishing layers are handled, and not the same number on
# every backend; a wind stress of 1e307, used before, is now refused as out of range).
cat >"$W/blowup.json" <<'JSON'
{ "name": "blowup", "domain": { "outer": [[0, 0], [100000, 0], [100000, 10000], [0, 10000]] }, "resolution": { "cells": 800 },
  "bathymetry": { "type": "constant", "depth": 1.0 },
  "initial": { "type": "layers", "layer1": { "thickness": 0.5, "velocity": [1e160, 0] }, "layer2": { "thickness": 0.5, "velocity": [0, 0] } },
  "physics": { "r": 0.5 }, "time": { "end": 1e5 } }
JSON
for steps in 64 1; do
    for prec in f32 f64; do
        PYCNO_DEVICE_STEPS=$steps "$PYCNO" run "$W/blowup.json" --backend cuda --precision $prec -q --out "$W/bl_${steps}_$prec" 2>"$W/bl_${steps}_$prec.err"
        # In f64 the speed's square overflows before the state does: the step's time step
        # is zero and the run stops there, the state still finite (nothing to mark).
        check "1 GPU: blow-up caught in step 1 with its report ($prec, device steps $steps)" \
            grep -Eq "blew up at step 1 .*(went unphysical.*last good state|the time step became zero or not finite)" "$W/bl_${steps}_$prec.err"
    done
done
cat >"$W/gauges.json" <<'JSON'
{ "name": "dambreak", "domain": { "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] }, "resolution": { "cells": 64052 },
  "bathymetry": { "type": "constant", "depth": 5.0 }, "initial": { "type": "circular_dam_break" },
  "time": { "end": 0.1, "output_interval": 0.05 },
  "gauges": { "interval": 0.01, "points": [ { "name": "centre", "at": [0.1, 0.05] }, { "name": "ring", "at": [1.5, 0] } ] } }
JSON
"$PYCNO" run "$W/gauges.json" --backend cuda -q --no-vtk --out "$W/g1" &&
    mpirun --allow-run-as-root --bind-to none -np 2 "$PYCNO" run "$W/gauges.json" --backend cuda -q --no-vtk --out "$W/g2"
check "gauges.csv on 2 GPUs = on 1 GPU" cmp -s "$W/g1/gauges.csv" "$W/g2/gauges.csv"
# Issue 22: each rank reads only its partition files (never the global mesh), on GPUs: the
# same bits and gauges as one GPU.
"$PYCNO" partition "$W/gauges.json" --ranks 2 --no-vtk --out "$W/gp2" >/dev/null &&
    mpirun --allow-run-as-root --bind-to none -np 2 "$PYCNO" run "$W/gauges.json" --backend cuda -q --no-vtk --out "$W/gl2" \
        --partition "$W/gp2"
check "2 GPUs from rank files (--partition) = 1 GPU bit for bit" same "$W/g1" "$W/gl2"
check "gauges.csv on 2 GPUs from rank files = on 1 GPU" cmp -s "$W/g1/gauges.csv" "$W/gl2/gauges.csv"

echo "multi-gpu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
