#!/usr/bin/env bash
# Issue 20, call E (one GPU): issue 20's one-GPU sizes with bundle p2 (the kept kernels: the
# time-step kernel's last block restructured for the peers' minimum) against bundle g5 (main's
# kernels, PTX identical to main's), interleaved; then tests/examples.rs on p2 if time is left.
set -uo pipefail
out="${OUT:-/tmp}"
date -u | tee $out/date.txt
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee $out/gpu.txt
bench() { timeout 150 gpu-bundle/$1/pycno bench --backend cuda "${@:2}" 2>&1 | grep -E '^ +[0-9]' | sed "s/^/$1 /"; }
{
for b in p2 g5; do bench $b --cells 4032,64052,1001898 --repeat 5; bench $b --cells 4032 --t-end 1 --repeat 7; done
for b in g5 p2; do bench $b --cells 4032,64052,1001898 --repeat 5; bench $b --cells 4032 --t-end 1 --repeat 7; done
for b in p2 g5; do [ $SECONDS -lt 200 ] && bench $b --cells 10000000 --repeat 3; done
echo "benches done at ${SECONDS}s"
} 2>&1 | tee $out/bench.log
if [ $SECONDS -lt 150 ]; then
  PYCNO_ROOT=$PWD timeout $((290 - SECONDS)) gpu-bundle/p2/tests/examples --test-threads 1 2>&1 | tail -4 | tee $out/test-examples.log
fi
