#!/usr/bin/env bash
# Peak memory and set-up seconds per rank of `pycno run --partition` as ranks are added
# (issue 22), and the peak memory of `pycno partition`, for BENCHMARKS.md.
#
#   tools/memory-scaling.sh [CELLS] [RANKS...]     # default: 10000000 cells on 1 2 4 8 ranks
#
# For each rank count R: `pycno partition --cells CELLS --ranks R` (its peak memory is in the
# manifest), then `mpirun -np R pycno run --partition` for one step on the CPU with no VTK
# (each rank reports its VmHWM and its seconds from start to the first step in stats.json).
# The baseline is the one-rank run without a partition, which builds the global mesh.
# Oversubscribed CPU ranks are fine: memory and set-up do not depend on the cores.
# Prints one table row per run; the work directory is removed at the end. GLOBAL=0 skips the
# one-rank run without a partition.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cells="${1:-10000000}"
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2 4 8)
bin="$ROOT/target/release/pycno"
(cd "$ROOT" && cargo build --release --bin pycno >&2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work="$(mktemp -d "${TMPDIR:-/tmp}/pycno-memory.XXXXXX")"
trap 'rm -rf "$work"' EXIT

row() { # label stats.json [manifest.json]
    python3 - "$@" <<'PY'
import json, sys
label, stats = sys.argv[1], json.load(open(sys.argv[2]))
peaks = [p / 1e6 for p in stats["peak_memory_per_rank"]]
setup = stats["setup_seconds_per_rank"]
cpu = stats.get("setup_cpu_seconds_per_rank") or [0.0]
part = ""
if len(sys.argv) > 3:
    m = json.load(open(sys.argv[3]))
    part = f" | {m['peak_memory'] / 1e6:.0f} MB, {m['seconds']:.1f} s"
print(f"| {label} | {stats['cells']} | {max(peaks):.0f} (min {min(peaks):.0f}) | {max(setup):.2f} (min {min(setup):.2f}) | {max(cpu):.2f} (min {min(cpu):.2f}){part} | {stats['state_checksum']} |")
PY
}

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $(date -u +%Y-%m-%d)"
echo "| run | cells | peak MB per rank (max, min) | set-up s per rank (max, min) | set-up CPU s per rank (max, min) | partition: peak, seconds | state_checksum |"
echo "|---|---|---|---|---|---|---|"
args=(--cells "$cells" --max-steps 1 --backend cpu --no-vtk -q)
if [ "${GLOBAL:-1}" = 1 ]; then
    RAYON_NUM_THREADS=1 "$bin" run "${args[@]}" --out "$work/global" >/dev/null
    row "1 rank, global mesh" "$work/global/stats.json"
fi
for r in "${ranks[@]}"; do
    "$bin" partition --cells "$cells" --ranks "$r" --no-vtk --out "$work/p$r" >/dev/null
    RAYON_NUM_THREADS=1 mpirun -np "$r" "$bin" run "${args[@]}" --partition "$work/p$r" --out "$work/o$r" >/dev/null
    row "$r ranks, --partition" "$work/o$r/stats.json" "$work/p$r/manifest.json"
    rm -rf "$work/p$r" "$work/o$r"
done
