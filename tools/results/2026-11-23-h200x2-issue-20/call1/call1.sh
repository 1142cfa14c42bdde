#!/usr/bin/env bash
# Call 1: the multi-GPU check with both exchange paths, a first scaling look at 2.6e5 and 1e6
# cells with NCCL and the host, and the GPU tests of the resident loop (tests/gpu.rs).
set -uo pipefail
B=gpu-bundle/b20
export PYCNO_ROOT=$PWD OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
pwd; ls $B; nvidia-smi -L; ls -la /usr/lib/x86_64-linux-gnu/libnccl* 2>&1 | head -3
echo "=== multi-gpu"; timeout 130 $B/tools/multi-gpu-check.sh $B/pycno > $OUT/multi-gpu.log 2>&1; echo "rc $?"; grep -v "^ok" $OUT/multi-gpu.log | head -40
for gx in nccl host; do
  echo "=== scaling $gx"
  GPU_EXCHANGE=$gx STRONG=256576,1001898 WEAK=none PYCNO=$B/pycno OUT=/tmp/sc_$gx timeout 50 $B/tools/scaling.sh 2 /tmp/scw > $OUT/scaling_$gx.log 2>&1
  echo "rc $?"; sed -n '/Strong/,/^$/p;/same bits/,/^$/p' /tmp/sc_$gx/scaling.md | head -8; cp /tmp/sc_$gx/scaling.csv $OUT/scaling_$gx.csv
done
PYCNO_NCCL_GRAPH=0 mpirun --allow-run-as-root --bind-to none -np 2 -x PYCNO_NCCL_GRAPH $B/pycno run /tmp/scw/scen_1001898.json --partition /tmp/scw/part_1001898_2 --backend cuda --no-vtk -q --gpu-exchange nccl --out /tmp/nograph && grep -E "stepping_seconds|gpu_exchange|checksum" /tmp/nograph/stats.json
echo "=== gpu tests"; timeout 40 $B/tests/gpu --test-threads 1 > $OUT/gpu-tests.log 2>&1; echo "rc $?"; tail -3 $OUT/gpu-tests.log
