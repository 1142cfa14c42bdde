#!/usr/bin/env bash
# Call 4: strong scaling at 1e7 cells with NCCL (1 GPU, 2 GPUs overlap and blocking).
set -uo pipefail
B=gpu-bundle/b20
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
GPU_EXCHANGE=nccl STRONG=10000000 WEAK=none PYCNO=$B/pycno OUT=/tmp/sc timeout 105 $B/tools/scaling.sh 2 /tmp/scw > $OUT/scaling_1e7.log 2>&1; echo "rc $?"
cat /tmp/sc/scaling.csv; cp /tmp/sc/scaling.csv $OUT/scaling_1e7.csv
