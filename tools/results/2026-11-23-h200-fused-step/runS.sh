#!/usr/bin/env bash
# Fused time step + update for one-wave meshes: bits and speed on one GPU.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-$here}"; export PYCNO_ROOT=$here/root
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 NCCL_NVLS_ENABLE=0
B=$here/bsmall
sum() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["state_checksum"], d["steps"], d["stepping_seconds"])' "$1/stats.json" 2>/dev/null || echo "missing: $(tail -3 $1.err | tr '\n' ' ' | cut -c1-600)"; }
echo "=== checksums: fused (default), PYCNO_FUSED_STEP=0, host-driven, 3 ranks on one GPU"
for cells in 4032 16040; do for p in f32 f64; do line="$cells $p"; for mode in fused split host np3; do d=/tmp/c_$mode; rm -rf $d
  case $mode in
    fused) timeout 60 $B/pycno run --cells $cells --precision $p --backend cuda --no-vtk -q --out $d 2>$d.err;;
    split) PYCNO_FUSED_STEP=0 timeout 60 $B/pycno run --cells $cells --precision $p --backend cuda --no-vtk -q --out $d 2>$d.err;;
    host) PYCNO_DEVICE_STEPS=1 timeout 60 $B/pycno run --cells $cells --precision $p --backend cuda --no-vtk -q --out $d 2>$d.err;;
    np3) timeout 60 mpirun -np 3 $B/pycno run --cells $cells --precision $p --backend cuda --no-vtk -q --out $d 2>$d.err;;
  esac; line="$line | $mode $(sum $d)"; done; echo "$line"; done; done 2>&1 | tee $out/checksums.log
echo "=== bench fused / split"
for v in PYCNO_FUSED_STEP=1 PYCNO_FUSED_STEP=0; do echo "--- $v"; env $v timeout 60 $B/pycno bench --backend cuda --cells 4032,16040,64052 --repeat 5 2>&1 | tail -4; env $v timeout 60 $B/pycno bench --backend cuda --cells 4032,16040 --t-end 1 --repeat 5 2>&1 | tail -3; done 2>&1 | tee $out/bench.log
for t in gpu examples; do echo "=== $t"; timeout 200 $B/tests/$t --nocapture --test-threads 1 > $out/gpu-tests-$t.log 2>&1; echo "rc=$?"; grep -E "^test result|FAILED|panicked" $out/gpu-tests-$t.log | head -8; done
