#!/usr/bin/env bash
# Issue 21, call G (one GPU): accuracy against cost on the GPU (tools/accuracy-cost.py
# --prepare wrote the scenarios and runs.sh into $B/acc; the errors are computed back home
# with --collect), device-resident at both orders; then the examples' test.
set -uo pipefail
B=${B:-gpu-bundle/b6}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
( cd $B/acc && time PYCNO=$PWD/../pycno sh runs.sh ) 2>&1 | tee $out/acc-runs.log
mkdir -p $out/acc
for d in /tmp/acc/*; do n=$(basename $d); mkdir -p $out/acc/$n; cp $d/stats.json $out/acc/$n/;
  cp "$(ls $d/*.vtu | grep -v blowup | sort | tail -1)" $out/acc/$n/; done
du -sh $out/acc
echo "=== examples"; timeout 250 $B/tests/examples --nocapture --test-threads 1 > $out/test-examples.log 2>&1; echo "rc=$?"
grep -E "^test result|FAILED|panicked" $out/test-examples.log | head
