#!/usr/bin/env bash
# Issue 20, call P2: comm edges beside the interior edges, barrier before stepping; GPU tests.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-$here}"; export PYCNO_ROOT=$here/root
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 NCCL_NVLS_ENABLE=0
B=$here/bpeer
sum() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["state_checksum"], d["steps"], d.get("gpu_exchange","")[:4], d["stepping_seconds"])' "$1/stats.json" 2>/dev/null || echo "missing: $(tail -3 $1.err | tr '\n' ' ' | cut -c1-600)"; }
for gx in ipc; do
  GPU_EXCHANGE=$gx STRONG=256576,1001898 WEAK=none PYCNO=$B/pycno OUT=/tmp/sc_$gx timeout 150 $B/tools/scaling.sh 2 /tmp/scw > $out/scaling_$gx.log 2>&1
  echo "rc $?"; cat /tmp/sc_$gx/scaling.md | head -30; cp /tmp/sc_$gx/scaling.csv $out/scaling_$gx.csv
done 2>&1 | tee $out/scaling.log
for n in 256576 1001898; do for gx in ipc nccl; do for rep in 1 2 3 4 5; do d=/tmp/v_$n; rm -rf $d
  timeout 60 mpirun --bind-to none -np 2 $B/pycno run /tmp/scw/scen_$n.json --partition /tmp/scw/part_${n}_2 --backend cuda --no-vtk -q --gpu-exchange $gx --out $d 2>$d.err
  echo "$n $gx $(sum $d)"; done; done
  for rep in 1 2 3 4 5; do d=/tmp/v1_$n; rm -rf $d; CUDA_VISIBLE_DEVICES=0 timeout 60 $B/pycno run /tmp/scw/scen_$n.json --backend cuda --no-vtk -q --out $d 2>$d.err; echo "$n 1gpu $(sum $d)"; done
done 2>&1 | tee $out/variants.log
for t in gpu gpu_probes; do echo "=== $t"; CUDA_VISIBLE_DEVICES=0 timeout 200 $B/tests/$t --nocapture --test-threads 1 > $out/gpu-tests-$t.log 2>&1; echo "rc=$?"; grep -E "^test result|FAILED|panicked" $out/gpu-tests-$t.log | head -8; done
