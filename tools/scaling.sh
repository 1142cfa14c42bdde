#!/usr/bin/env bash
# Multi-GPU scaling study of the paper's benchmark (circular internal dam break to t = 0.1),
# one MPI rank per GPU: strong scaling at fixed sizes and weak scaling at fixed cells per
# GPU, each multi-GPU size with the overlapped (Algorithm 2) and the blocking (Algorithm 1)
# exchange, and the bit-for-bit check (state checksum) against one GPU. The same command
# runs on 2, 4 or 8 GPUs.
#
#   tools/scaling.sh GPUS [WORKDIR]
#
# Environment:
#   PYCNO            the pycno binary (default: target/release/pycno, else pycno on PATH)
#   STRONG           strong-scaling sizes, comma-separated (default: the paper's four large
#                    meshes, 1e7 and 3e7 cells)
#   WEAK             cells per GPU for weak scaling, comma-separated (default 1e7; none: skip)
#   OUT              where the table (scaling.md), the raw rows (scaling.csv) and each run's
#                    stats go (default WORKDIR)
#   BACKEND          cuda (default) or cpu
#   GPU_EXCHANGE     what carries the halo between GPUs: auto (default), ipc, nccl or host
#                    (`run --gpu-exchange`); run twice with two OUTs to compare
#
# Each size is meshed once (pycno mesh -> .pmsh) and partitioned once (pycno partition);
# every run then reads them, so that meshing and METIS stay out of the timings. Times are
# the runs' stepping seconds (stats.json), meshing, set-up and output excluded.
set -euo pipefail

G="${1:?usage: tools/scaling.sh GPUS [WORKDIR]}"
W="${2:-/tmp/pycno-scaling}"
OUT="${OUT:-$W}"
BACKEND="${BACKEND:-cuda}"
STRONG="${STRONG:-256576,1001898,2000608,3000948,10000000,30000000}"
WEAK="${WEAK:-10000000}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -z "${PYCNO:-}" ]; then
    if [ -x "$ROOT/target/release/pycno" ]; then PYCNO="$ROOT/target/release/pycno"; else PYCNO="$(command -v pycno)"; fi
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# NVLink multicast stays off (shared hosts); pycno sets this itself when it starts NCCL.
export NCCL_NVLS_ENABLE=0
mkdir -p "$W" "$OUT/runs"
CSV="$OUT/scaling.csv"
echo "kind,cells,gpus,exchange,steps,seconds,cell_updates_per_s,checksum,pack,exchange_wait,unpack,edges_interior,edges_comm,dt,allreduce,update" >"$CSV"
say() { printf 'scaling: %s\n' "$*" >&2; }

# One mesh and one partition per size, reused by every run of that size.
prepare() {
    local n=$1 ranks=$2
    local mesh="$W/mesh_$n.pmsh" scen="$W/scen_$n.json" part="$W/part_${n}_$ranks"
    if [ ! -f "$mesh" ]; then
        say "meshing $n cells"
        "$PYCNO" mesh --cells "$n" --out "$mesh" >&2
        cat >"$scen" <<EOF
{
  "name": "dambreak",
  "mesh": "mesh_$n.pmsh",
  "bathymetry": { "type": "constant", "depth": 5.0 },
  "initial": { "type": "circular_dam_break" },
  "physics": { "g": 9.81, "r": 0.998, "gamma": 0.9 },
  "time": { "end": 0.1 },
  "output": { "dir": "out" }
}
EOF
    fi
    if [ "$ranks" -gt 1 ] && [ ! -f "$part/manifest.json" ]; then
        say "partitioning $n cells into $ranks"
        "$PYCNO" partition "$scen" --ranks "$ranks" --out "$part" --no-vtk >&2
    fi
}

# run KIND CELLS RANKS EXCHANGE -> appends a CSV row
run() {
    local kind=$1 n=$2 ranks=$3 ex=$4
    prepare "$n" "$ranks"
    local tag="${kind}_${n}_${ranks}_${ex}" dir="$OUT/runs/${kind}_${n}_${ranks}_${ex}"
    local args=(run "$W/scen_$n.json" --backend "$BACKEND" --no-vtk -q --out "$dir")
    [ "$ranks" -gt 1 ] && args+=(--partition "$W/part_${n}_$ranks" --exchange "$ex" --gpu-exchange "${GPU_EXCHANGE:-auto}")
    say "$tag"
    if [ "$ranks" -gt 1 ]; then
        mpirun --allow-run-as-root --bind-to none -np "$ranks" "$PYCNO" "${args[@]}" >&2
    else
        "$PYCNO" "${args[@]}" >&2
    fi
    python3 - "$dir/stats.json" "$kind" "$ranks" "$ex" >>"$CSV" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
p = s["phases"]
print(",".join(str(x) for x in [sys.argv[2], s["cells"], sys.argv[3], sys.argv[4], s["steps"], s["stepping_seconds"],
      s["cell_updates_per_second"], s["state_checksum"], p["pack"], p["exchange"], p["unpack"], p["edges_interior"],
      p["edges_communication"], p["dt"], p["allreduce"], p["update"]]))
PY
}

IFS=, read -r -a strong <<<"$STRONG"
IFS=, read -r -a weak <<<"$WEAK"
[ "$WEAK" = none ] && weak=()
for n in "${strong[@]}"; do
    run strong "$n" 1 none
    run strong "$n" "$G" overlap
    run strong "$n" "$G" blocking
done
for n in "${weak[@]}"; do
    total=$((n * G))
    # The one-GPU baseline at n cells is the strong row when that size was run.
    grep -q "^strong,[0-9]*,1,none" "$CSV" && awk -F, -v n="$n" '$1=="strong" && $3==1 && ($2 > 0.98*n && $2 < 1.02*n) {f=1} END {exit !f}' "$CSV" || run weak "$n" 1 none
    run weak "$total" "$G" overlap
    run weak "$total" "$G" blocking
done

python3 "$ROOT/tools/scaling_table.py" "$CSV" "$G" "$BACKEND" | tee "$OUT/scaling.md"
