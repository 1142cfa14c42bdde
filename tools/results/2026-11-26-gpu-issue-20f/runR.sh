#!/usr/bin/env bash
# Issue 20, call R (two GPUs): the committed batch sizes (every fourth step count up to 64; the
# first batch sized at set-up on one GPU): the multi-GPU check, the GPU tests on one of the
# GPUs, then one GPU and two (--gpu-exchange ipc) interleaved, the committed sizes against the
# powers of 2 before (PYCNO_BATCH_SIZES=2), five runs each while time is left; the checksums
# of one and two GPUs must agree.
set -uo pipefail
B=${B:-gpu-bundle/r1}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
MGPU_CELLS=64052 timeout 250 $B/tools/multi-gpu-check.sh $B/pycno > $out/multi-gpu.log 2>&1; echo "multi-gpu rc=$?"
grep -E "FAIL|passed" $out/multi-gpu.log | tail -15
timeout 120 $B/tests/gpu --nocapture --test-threads 1 > $out/test-gpu.log 2>&1; echo "gpu tests rc=$?"
grep -E "^test result|FAILED|panicked|blew up" $out/test-gpu.log
W=$(mktemp -d)
st() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["steps"], "%.6f" % s["stepping_seconds"], s["state_checksum"])' "$1"; }
{
for n in 257620 1001898; do
  for r in 1 2 3 4 5; do
    for v in new pow2; do
      [ $SECONDS -lt 560 ] || break 3
      env=(); [ $v = pow2 ] && env=(PYCNO_BATCH_SIZES=2)
      xs=(); [ $v = pow2 ] && xs=(-x PYCNO_BATCH_SIZES=2)
      env "${env[@]}" $B/pycno run --cells $n --t-end 0.1 --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "$n $v 1 GPU: $(st $W/one)"
      mpirun --allow-run-as-root --bind-to none "${xs[@]}" -np 2 $B/pycno run --cells $n --t-end 0.1 --backend cuda --gpu-exchange ipc --no-vtk -q \
        --out $W/two --overwrite 2>/dev/null && echo "$n $v 2 GPUs ipc: $(st $W/two)"
    done
  done
done
} 2>&1 | tee $out/speed.log
