#!/usr/bin/env bash
# Second order on one GPU (physics.order = 2, issue 21; kernels/order2.cu): 3 MPI ranks
# sharing GPU 0 (host-driven steps) equal 1 rank (device-resident steps) bit for bit (the
# order-independent state checksum of stats.json, and the step count), and the reconstruction
# and edge pass as two kernels equal the tile kernel (PYCNO_ORDER2_TILES; both compiled without
# fused multiply-adds), in float32 and float64, on the paper's dam break and on a
# lock exchange with dry cells (the quiet edges and the positivity fallback across the halo:
# the states of the receive block's two rings go through the host, and each rank reconstructs
# its first ring itself); a run killed (SIGKILL)
# restarts from its checkpoint to the uninterrupted result bit for bit, on 1 rank and on 3;
# each layer's mass is conserved.
#
#   tools/order2-gpu-check.sh [PYCNO]      (default: target/release/pycno)
#
# PYCNO_CHECK_BACKEND=cpu runs the same checks on the CPU backend (the script's own test).
# Prints "ok    ..." or "FAILED ..." per check and a closing "order2-gpu: N passed, N failed";
# exits non-zero on any failure.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYCNO="${1:-$ROOT/target/release/pycno}"
BACKEND="${PYCNO_CHECK_BACKEND:-cuda}"
W="$(mktemp -d "${TMPDIR:-/tmp}/pycno-o2gpu.XXXXXX")"
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# The device-resident steps' second-stage tiles finish their cells (src/solver/cuda/order2.rs),
# by default only on larger meshes than these: asked for, so that 1 rank (resident, finishing)
# = 3 ranks (host-driven, not) checks them too.
export PYCNO_TILE_FINISH=1
if [ "$BACKEND" = cuda ] && ! nvidia-smi -L >/dev/null 2>&1; then
    echo "order2-gpu: no GPU here (nvidia-smi): skipped"
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
        echo "FAILED $name"
        fail=$((fail + 1))
    fi
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1/stats.json" "$2"; }
same() { [ "$(field "$1" state_checksum)" = "$(field "$2" state_checksum)" ] && [ "$(field "$1" steps)" = "$(field "$2" steps)" ]; }
# float32 stores the thicknesses: a layer's mass moves by rounding only (BENCHMARKS.md).
mass_ok() { python3 -c 'import json,sys
s = json.load(open(sys.argv[1]))
tol = 5e-6 if s["precision"] == "f32" else 1e-12
drift = [abs(s[f"mass_layer{l}_end"] / s[f"mass_layer{l}_start"] - 1) for l in "12"]
print(f"      relative mass change: layer 1 {drift[0]:.2e}, layer 2 {drift[1]:.2e} (tolerance {tol:.0e})")
sys.exit(1 if max(drift) > tol else 0)' "$1/stats.json"; }
ok_run() { "$@" >"$W/last.log" 2>&1 || { cat "$W/last.log"; return 1; }; }

cat >"$W/dambreak.json" <<'JSON'
{ "name": "dambreak2", "domain": { "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] }, "resolution": { "cells": 64052 },
  "bathymetry": { "type": "constant", "depth": 5.0 }, "initial": { "type": "circular_dam_break" },
  "physics": { "order": 2 }, "time": { "end": 0.1, "output_interval": 0.05 } }
JSON
cat >"$W/lock.json" <<'JSON'
{ "name": "lock2", "domain": { "outer": [[0, 0], [10, 0], [10, 0.25], [0, 0.25]] }, "resolution": { "cells": 20000 },
  "bathymetry": { "type": "constant", "depth": 0.5 },
  "initial": { "type": "dam_break_x", "x0": 5, "interface_left": 1, "interface_right": -1, "surface": 0 },
  "physics": { "r": 0.98, "dry_tolerance": 1e-4, "order": 2 }, "time": { "end": 0.5, "output_interval": 0.25 } }
JSON

for scen in dambreak lock; do
    for prec in f32 f64; do
        one="$W/one_${scen}_$prec"
        if ! ok_run "$PYCNO" run "$W/$scen.json" --backend "$BACKEND" --precision "$prec" --no-vtk -q --out "$one"; then
            echo "FAILED 1 rank, order 2, $scen $prec: run failed"
            fail=$((fail + 1))
            continue
        fi
        check "1 rank, order 2 ($scen, $prec): mass per layer conserved, $(field "$one" steps) steps" mass_ok "$one"
        check "1 rank, order 2 ($scen, $prec): backend $BACKEND" [ "$(field "$one" backend)" = "$BACKEND" ]
        three="$W/three_${scen}_$prec"
        if ok_run mpirun --allow-run-as-root --oversubscribe --bind-to none -np 3 "$PYCNO" run "$W/$scen.json" --backend "$BACKEND" \
            --precision "$prec" --no-vtk -q --out "$three"; then
            check "3 ranks on one GPU = 1 rank bit for bit, order 2 ($scen, $prec): checksums $(field "$one" state_checksum) $(field "$three" state_checksum)" same "$one" "$three"
        else
            echo "FAILED 3 ranks, order 2, $scen $prec: run failed"
            fail=$((fail + 1))
        fi
        # The reconstruction and edge pass as two kernels (the edge values through device
        # memory) against the tile kernel, both without fused multiply-adds: with them, where
        # the compiler fuses a multiply into an add depends on the code around it, which
        # differs between the kernels (it moved the last bits apart once the tile kernel's
        # loads changed, BENCHMARKS.md); without, the two must be the same arithmetic.
        tk="$W/tk_${scen}_$prec"
        two="$W/two_${scen}_$prec"
        if PYCNO_NVRTC_FLAGS="--fmad=false" PYCNO_ORDER2_TILES=1 ok_run "$PYCNO" run "$W/$scen.json" --backend "$BACKEND" \
            --precision "$prec" --no-vtk -q --out "$tk" &&
            PYCNO_NVRTC_FLAGS="--fmad=false" PYCNO_ORDER2_TILES=0 ok_run "$PYCNO" run "$W/$scen.json" --backend "$BACKEND" \
                --precision "$prec" --no-vtk -q --out "$two"; then
            check "1 rank, order 2 ($scen, $prec), no fused multiply-adds: two kernels = the tile kernel bit for bit" same "$tk" "$two"
        else
            echo "FAILED 1 rank, order 2, two kernels or tiles without fused multiply-adds, $scen $prec: run failed"
            fail=$((fail + 1))
        fi
    done
done

# A GPU-to-GPU exchange asked for at order 2 by ranks that share a GPU: the halo goes through
# the host, with a note (two GPUs at order 2 are tools/multi-gpu-check.sh's).
d="$W/nccl_asked"
if mpirun --allow-run-as-root --oversubscribe --bind-to none -np 3 "$PYCNO" run "$W/dambreak.json" --backend "$BACKEND" \
    --precision f32 --gpu-exchange nccl --no-vtk -q --out "$d" 2>"$d.err"; then
    check "3 ranks, --gpu-exchange nccl at order 2 = 1 rank bit for bit (the host exchange)" same "$W/one_dambreak_f32" "$d"
    [ "$BACKEND" = cuda ] && check "3 ranks, --gpu-exchange nccl at order 2: a note says the halo goes through the host" grep -q "halo goes through the host" "$d.err"
else
    cat "$d.err"
    echo "FAILED 3 ranks with --gpu-exchange nccl at order 2: run failed"
    fail=$((fail + 1))
fi

# Restarts: killed after step 27 with a checkpoint every 10 steps, resumed from step 20.
for prec in f32 f64; do
    ref="$W/one_dambreak_$prec"
    [ -f "$ref/stats.json" ] || continue
    base=(run "$W/dambreak.json" --backend "$BACKEND" --precision "$prec" -q --no-vtk)
    PYCNO_KILL=0:27 "$PYCNO" "${base[@]}" --out "$W/ck1_$prec" --checkpoint-every 10 >/dev/null 2>&1
    check "1 rank, order 2 ($prec): killed (SIGKILL) after step 27, left no stats.json" [ ! -f "$W/ck1_$prec/stats.json" ]
    # The restart as the runs it continues: the same precision, no VTK output (whose output
    # times would clip steps the uninterrupted run did not clip), stats.json in the same place.
    if ok_run "$PYCNO" run --restart "$W/ck1_$prec/checkpoints" --backend "$BACKEND" --precision "$prec" --no-vtk -q \
        --out "$W/ck1_$prec"; then
        check "1 rank, order 2 ($prec): restart from step 20 = uninterrupted bit for bit: checksums $(field "$ref" state_checksum) $(field "$W/ck1_$prec" state_checksum)" same "$ref" "$W/ck1_$prec"
    else
        echo "FAILED 1 rank, order 2 ($prec): restart failed"
        fail=$((fail + 1))
    fi
    PYCNO_KILL=1:27 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 3 "$PYCNO" "${base[@]}" --out "$W/ck3_$prec" \
        --checkpoint-every 10 --checkpoint-keep 5 >/dev/null 2>&1
    check "3 ranks, order 2 ($prec): rank 1 killed after step 27, job ended" [ ! -f "$W/ck3_$prec/stats.json" ]
    if ok_run mpirun --allow-run-as-root --oversubscribe --bind-to none -np 3 "$PYCNO" run --restart "$W/ck3_$prec/checkpoints" \
        --backend "$BACKEND" --precision "$prec" --no-vtk -q --out "$W/ck3_$prec"; then
        check "3 ranks, order 2 ($prec): restart from step 20 = uninterrupted 1 rank bit for bit: checksum $(field "$W/ck3_$prec" state_checksum)" same "$ref" "$W/ck3_$prec"
    else
        echo "FAILED 3 ranks, order 2 ($prec): restart failed"
        fail=$((fail + 1))
    fi
done

echo "order2-gpu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
