#!/usr/bin/env bash
# Issue 20, call R (two GPUs): tuning knobs at 257620 cells on two GPUs (ipc), where the 1.3x
# target is missed by 2%: the early dependent launch for every kernel (PYCNO_PDL_EARLY_CELLS,
# 16384 owned cells by default), blocks of 64 and 256 threads (PYCNO_CUDA_BLOCK, 128), batches
# of 128 steps; interleaved, five runs each; one GPU as the baseline.
set -uo pipefail
out="${OUT:-/tmp}"; B=gpu-bundle/c3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
W=$(mktemp -d)
st() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["steps"], "%.6f" % s["stepping_seconds"], s["state_checksum"])' "$1"; }
n=257620
{
for r in 1 2 3 4 5; do
  $B/pycno run --cells $n --t-end 0.1 --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "base 1 GPU: $(st $W/one)"
  for v in PYCNO_NONE=0 PYCNO_PDL_EARLY_CELLS=1000000000 PYCNO_CUDA_BLOCK=256 PYCNO_CUDA_BLOCK=64 PYCNO_DEVICE_STEPS=128; do
    env $v mpirun --allow-run-as-root --bind-to none -np 2 -x ${v%%=*} $B/pycno run --cells $n --t-end 0.1 --backend cuda --gpu-exchange ipc --no-vtk -q \
      --out $W/two --overwrite 2>/dev/null && echo "$v 2 GPUs ipc: $(st $W/two)"
  done
done
} 2>&1 | tee $out/knobs.log
