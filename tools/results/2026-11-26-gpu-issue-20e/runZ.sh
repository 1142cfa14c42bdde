#!/usr/bin/env bash
# Issue 20, call Z (two GPUs): the edge pass with one numerical_flux per edge (the bundle's
# kernels, "new") against main at 1c55087 ("base": PYCNO_KERNEL_DIR=var/base of
# make-variants.sh), the same binary; first the multi-GPU check with the new kernels, then one
# GPU and two (--gpu-exchange ipc) interleaved, five runs each while time is left; the
# checksums of one and two GPUs must agree.
set -uo pipefail
B=${B:-gpu-bundle/z}; out="${OUT:-/tmp}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
MGPU_CELLS=64052 timeout 300 $B/tools/multi-gpu-check.sh $B/pycno > $out/multi-gpu.log 2>&1; echo "multi-gpu rc=$?"
grep -E "FAIL|passed" $out/multi-gpu.log | tail -15
W=$(mktemp -d)
st() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["steps"], "%.6f" % s["stepping_seconds"], s["state_checksum"])' "$1"; }
{
for n in 257620 1001898; do
  for r in 1 2 3 4 5; do
    for v in new base; do
      [ $SECONDS -lt 540 ] || break 3
      env=(); [ $v = base ] && env=(PYCNO_KERNEL_DIR=$PWD/$B/var/base)
      xs=(); [ $v = base ] && xs=(-x PYCNO_KERNEL_DIR=$PWD/$B/var/base)
      env "${env[@]}" $B/pycno run --cells $n --t-end 0.1 --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "$n $v 1 GPU: $(st $W/one)"
      mpirun --allow-run-as-root --bind-to none "${xs[@]}" -np 2 $B/pycno run --cells $n --t-end 0.1 --backend cuda --gpu-exchange ipc --no-vtk -q \
        --out $W/two --overwrite 2>/dev/null && echo "$n $v 2 GPUs ipc: $(st $W/two)"
    done
  done
done
} 2>&1 | tee $out/speed.log
