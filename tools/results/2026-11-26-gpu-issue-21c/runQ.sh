#!/usr/bin/env bash
# Issue 20/21, call Q (two GPUs): first order on two GPUs with the GPUs' own stores, before
# (gpu-bundle/b10: 0e5909e, one mailbox copy) and after (gpu-bundle/c3: two copies used in
# turn) the mailbox change, interleaved, five runs each: does the order-1 speed-up move?
set -uo pipefail
out="${OUT:-/tmp}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
W=$(mktemp -d)
st() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["steps"], "%.6f" % s["stepping_seconds"], s["state_checksum"])' "$1"; }
{
for n in 257620 1001898; do
  for r in 1 2 3 4 5; do
    for b in b10 c3; do
      B=gpu-bundle/$b
      $B/pycno run --cells $n --t-end 0.1 --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "$b $n 1 GPU: $(st $W/one)"
      mpirun --allow-run-as-root --bind-to none -np 2 $B/pycno run --cells $n --t-end 0.1 --backend cuda --gpu-exchange ipc --no-vtk -q \
        --out $W/two --overwrite 2>/dev/null && echo "$b $n 2 GPUs ipc: $(st $W/two)"
    done
  done
done
} 2>&1 | tee $out/speed1.log
