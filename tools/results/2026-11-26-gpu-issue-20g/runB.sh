#!/usr/bin/env bash
# Issue 20, call B (two GPUs): a first-order device-resident step's edge pass as one kernel
# (edge_peer: blocks that wait for the halo and take the communication edges from the mailbox,
# first in the grid, or last with PYCNO_IPC_COMM_LAST=1, as in call A) against the receipt and
# the communication edges on the exchange's stream beside the interior edges
# (PYCNO_IPC_ONE_EDGE_KERNEL=0). The multi-GPU check first (its ipc cases run
# the new kernel), then one GPU and two (--gpu-exchange ipc) interleaved, five runs each while
# time is left; the checksums of one and two GPUs must agree.
set -uo pipefail
B=${B:-gpu-bundle/g2}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
MGPU_CELLS=64052 timeout 250 $B/tools/multi-gpu-check.sh $B/pycno > $out/multi-gpu.log 2>&1; echo "multi-gpu rc=$?"
grep -E "FAIL|passed" $out/multi-gpu.log | tail -15
W=$(mktemp -d)
st() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["steps"], "%.6f" % s["stepping_seconds"], s["state_checksum"])' "$1"; }
{
for n in 257620 1001898; do
  for r in 1 2 3 4 5; do
    [ $SECONDS -lt 560 ] || break 2
    $B/pycno run --cells $n --t-end 0.1 --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "$n 1 GPU: $(st $W/one)"
    for v in first last two; do
      xs=(); [ $v = two ] && xs=(-x PYCNO_IPC_ONE_EDGE_KERNEL=0); [ $v = last ] && xs=(-x PYCNO_IPC_COMM_LAST=1)
      mpirun --allow-run-as-root --bind-to none "${xs[@]}" -np 2 $B/pycno run --cells $n --t-end 0.1 --backend cuda --gpu-exchange ipc --no-vtk -q \
        --out $W/two --overwrite 2>/dev/null && echo "$n $v 2 GPUs ipc: $(st $W/two)"
    done
  done
done
} 2>&1 | tee $out/speed.log
