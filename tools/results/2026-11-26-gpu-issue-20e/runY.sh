#!/usr/bin/env bash
# Issues 20 and 21, call Y (one GPU): the edge pass with one numerical_flux per edge (a
# boundary edge's ghost taken as its other side) and the eigenvalues' Newton roots
# interleaved (the bundle's own kernels, "emb"), against the kernel-source variants of
# make-variants.sh (PYCNO_KERNEL_DIR: "one" = one flux call only, "base" = main at 1c55087,
# "lb7" = emb with the edge kernels' registers capped for 7 blocks), the same binary,
# interleaved. runY.sh bench ROUND | runY.sh tests. Call Y2 (a second bundle, after call Y:
# one flux call per edge, no interleaved roots, second order's edge with one flux call too):
# VARIANTS="emb base o2base" runY.sh bench 2; TEST_VARIANT=o2base runs the tests with that
# variant's kernel sources.
set -uo pipefail
B=${B:-gpu-bundle/y}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv,noheader | tee -a $out/gpu.txt
row() { grep -E '^ +[0-9]'; }
vrun() { local v=$1; shift; if [ "$v" = emb ]; then "$@"; else PYCNO_KERNEL_DIR=$PWD/$B/var/$v "$@"; fi; }
if [ "${1:-bench}" = bench ]; then
r=${2:-1}
{
for v in ${VARIANTS:-emb one base lb7}; do
  echo "=== $v, round $r, order 1"
  vrun $v timeout 150 $B/pycno bench --backend cuda --cells 4032,64052,1001898,10000000 --repeat 5 2>&1 | row
  vrun $v timeout 100 $B/pycno bench --backend cuda --cells 4032,64052 --t-end 1 --repeat 7 2>&1 | row
  echo "=== $v, round $r, order 2"
  vrun $v timeout 100 $B/pycno bench --backend cuda --order 2 --cells 4032,64052 --t-end 1 --repeat 5 2>&1 | row
  vrun $v timeout 150 $B/pycno bench --backend cuda --order 2 --cells 1001898,10000000 --repeat 3 2>&1 | row
done
} 2>&1 | tee $out/bench-$r.log
exit 0
fi
tv=${TEST_VARIANT:-emb}; echo "=== tests with the kernels of $tv" | tee $out/tests.log
for t in gpu gpu_probes kernels examples; do
  echo "=== $t"; vrun $tv timeout 300 $B/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -20
done 2>&1 | tee -a $out/tests.log
vrun $tv timeout 250 $B/tools/order2-gpu-check.sh $B/pycno > $out/order2-gpu.log 2>&1; echo "order2 rc=$?" | tee -a $out/tests.log
grep -E "FAIL|passed" $out/order2-gpu.log | tail -5 | tee -a $out/tests.log
