#!/usr/bin/env bash
# Issue 20, call C1 (two GPUs): strong scaling at 2.6e5 and 1e6 cells with the update's own
# send (default) and without (PYCNO_IPC_UPDATE_SENDS=0), NCCL, one GPU; one-GPU small meshes
# against main's binary (gpu-bundle/base: PYCNO_FUSED_DT_CELLS=0 is main's loop); GPU tests.
set -uo pipefail
B=${B:-gpu-bundle/b3}; BASE=gpu-bundle/base/pycno; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpus.txt
sum() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["state_checksum"], d["steps"], d.get("gpu_exchange","")[:4], d["stepping_seconds"])' "$1/stats.json" 2>/dev/null || echo "missing: $(tail -3 $1.err | tr '\n' ' ' | cut -c1-400)"; }
GPU_EXCHANGE=ipc STRONG=256576,1001898 WEAK=none PYCNO=$B/pycno OUT=/tmp/sc timeout 200 $B/tools/scaling.sh 2 /tmp/scw > $out/scaling.log 2>&1
echo "scaling rc $?"; head -20 /tmp/sc/scaling.md
{
for n in 256576 1001898; do
  for v in "ipc 1" "ipc 0" "nccl 1"; do set -- $v; for rep in 1 2 3 4 5; do d=/tmp/v_$n; rm -rf $d
    PYCNO_IPC_UPDATE_SENDS=$2 timeout 60 mpirun -x PYCNO_IPC_UPDATE_SENDS --bind-to none -np 2 $B/pycno run /tmp/scw/scen_$n.json --partition /tmp/scw/part_${n}_2 --backend cuda --no-vtk -q --gpu-exchange $1 --out $d 2>$d.err
    echo "$n $1 sends=$2 $(sum $d)"; done; done
  for rep in 1 2 3 4 5; do d=/tmp/v1_$n; rm -rf $d; CUDA_VISIBLE_DEVICES=0 timeout 60 $B/pycno run /tmp/scw/scen_$n.json --backend cuda --no-vtk -q --out $d 2>$d.err; echo "$n 1gpu $(sum $d)"; done
  for rep in 1 2 3; do d=/tmp/vb_$n; rm -rf $d; CUDA_VISIBLE_DEVICES=0 PYCNO_FUSED_DT_CELLS=0 timeout 60 $BASE run /tmp/scw/scen_$n.json --backend cuda --no-vtk -q --out $d 2>$d.err; echo "$n 1gpu-main $(sum $d)"; done
done
} 2>&1 | tee $out/variants.log
bench() { CUDA_VISIBLE_DEVICES=0 timeout 120 "$@" 2>&1 | grep -E '^ +[0-9]'; }
{
echo "=== main"; for te in 0.1 1; do PYCNO_FUSED_DT_CELLS=0 bench $BASE bench --backend cuda --cells 4032,16040,64052 --t-end $te --repeat 7; done
for e in 16384 0 65536; do echo "=== new, PYCNO_PDL_EARLY_CELLS=$e"; for te in 0.1 1; do PYCNO_PDL_EARLY_CELLS=$e bench $B/pycno bench --backend cuda --cells 4032,16040,64052 --t-end $te --repeat 7; done; done
echo "=== main, new: larger"; PYCNO_FUSED_DT_CELLS=0 bench $BASE bench --backend cuda --cells 257620,1001898 --repeat 5; bench $B/pycno bench --backend cuda --cells 257620,1001898 --repeat 5
} 2>&1 | tee $out/bench1.log
for t in gpu gpu_probes; do echo "=== $t"; CUDA_VISIBLE_DEVICES=0 timeout 200 $B/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"; grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -8; done
