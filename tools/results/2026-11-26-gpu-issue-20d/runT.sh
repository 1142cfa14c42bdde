#!/usr/bin/env bash
# Issue 20, call T (two GPUs): first order on two GPUs with the GPUs' own stores, the
# receipt and communication edges beside the interior edges on the exchange's stream (fork and
# join, the default) against one chain on the main stream (PYCNO_IPC_CHAIN=1), the same
# binary, interleaved with one GPU, five runs each; the state checksums must agree.
# runT.sh speed | runT.sh check (the multi-GPU check with the chain on).
set -uo pipefail
B=${B:-gpu-bundle/t}; out="${OUT:-/tmp}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
W=$(mktemp -d)
st() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["steps"], "%.6f" % s["stepping_seconds"], s["state_checksum"])' "$1"; }
if [ "${1:-speed}" = speed ]; then
{
for n in 257620 1001898; do
  for r in 1 2 3 4 5; do
    $B/pycno run --cells $n --t-end 0.1 --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "$n 1 GPU: $(st $W/one)"
    for chain in 0 1; do
      PYCNO_IPC_CHAIN=$chain mpirun --allow-run-as-root --bind-to none -x PYCNO_IPC_CHAIN -np 2 $B/pycno run --cells $n --t-end 0.1 --backend cuda --gpu-exchange ipc --no-vtk -q \
        --out $W/two --overwrite 2>/dev/null && echo "$n 2 GPUs ipc chain=$chain: $(st $W/two)"
    done
  done
done
} 2>&1 | tee $out/speed.log
exit 0
fi
export PYCNO_IPC_CHAIN=1
MGPU_CELLS=64052 timeout 580 $B/tools/multi-gpu-check.sh $B/pycno > $out/multi-gpu.log 2>&1; echo "multi-gpu rc=$?"
grep -E "FAIL|passed" $out/multi-gpu.log | tail -15
