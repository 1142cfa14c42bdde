#!/usr/bin/env bash
# The one command that runs the paper's circular internal dam break end to end:
# installs what is needed, builds pycno (release), runs it, and says how to open the result.
#
#   tools/demo.sh                            # 64052 cells to t = 0.5 s, a frame every 0.05 s
#   tools/demo.sh --cells 4016 --t-end 0.05  # any `pycno run` option; these replace the defaults
#
# Output: out/dambreak/ (dambreak.pvd, one .vtu per frame, stats.json), replaced on each
# run; `--out DIR` writes elsewhere (and removes nothing).  The backend is chosen by pycno
# (a GPU when there is one, else the CPU); `--backend cpu` forces the CPU.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bash "$ROOT/tools/setup.sh"

# shellcheck source=tools/env.sh
source "$ROOT/tools/env.sh"

echo "demo: cargo build --release"
cargo build --release --manifest-path "$ROOT/Cargo.toml"
target="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$target" in /*) ;; *) target="$ROOT/$target" ;; esac
PYCNO="$target/release/pycno"
[ -x "$PYCNO" ] || { echo "demo: ERROR: the build left no $PYCNO" >&2; exit 1; }
# tools/setup.sh installed this build as ~/.cargo/bin/pycno: `pycno ...` works from here on.

# The paper's settings, each unless the command line gives its own (clap refuses an option
# given twice).  With a scenario file, its own cells and times apply.
out=""
no_vtk=false
scenario=false
given=" "
args=("$@")
i=0
while [ $i -lt ${#args[@]} ]; do
    a=${args[$i]}
    case "$a" in
    --out) out=${args[$((i + 1))]:-}; given+="--out "; i=$((i + 1)) ;;
    --out=*) out=${a#--out=}; given+="--out " ;;
    --cells | --t-end | --output-interval | --precision | --backend | --max-steps | --threads)
        given+="$a "; i=$((i + 1)) ;;
    --*=*) given+="${a%%=*} " ;;
    --no-vtk) no_vtk=true ;;
    -*) ;;
    *) scenario=true ;;
    esac
    i=$((i + 1))
done
defaults=()
if [ -z "$out" ]; then
    out="$ROOT/out/dambreak"
    defaults+=(--out "$out")
    rm -rf "$out" # the demo's own output: no frames of an earlier, longer run left behind
fi
if ! $scenario; then
    [[ $given == *" --t-end "* ]] || defaults+=(--t-end 0.5)
    [[ $given == *" --output-interval "* ]] || defaults+=(--output-interval 0.05)
    [[ $given == *" --cells "* ]] || defaults+=(--cells 64052)
fi

stamp="$(mktemp "${TMPDIR:-/tmp}/pycno-demo.XXXXXX")"
trap 'rm -f "$stamp"' EXIT
echo "demo: pycno run ${defaults[*]} $*"
"$PYCNO" run "${defaults[@]}" "$@"

# Did the run write its results (this time, not an earlier run)?
fresh() { [ -f "$1" ] && [ "$1" -nt "$stamp" ]; }
fail() { echo "demo: ERROR: $*" >&2; exit 1; }
fresh "$out/stats.json" || fail "the run wrote no $out/stats.json"
show() { case "$1" in "$PWD"/*) echo "${1#"$PWD"/}" ;; *) echo "$1" ;; esac; }
if $no_vtk; then
    echo "demo: done (--no-vtk): statistics in $(show "$out/stats.json")"
    exit 0
fi
pvd="$out/dambreak.pvd"
if ! fresh "$pvd"; then
    pvd=""
    for f in "$out"/*.pvd; do
        if fresh "$f"; then pvd=$f; fi
    done
    [ -n "$pvd" ] || fail "the run wrote no .pvd in $out"
fi
frames=$(grep -c '<DataSet' "$pvd" || true)
echo "demo: done: $(show "$pvd") ($frames frames), statistics in $(show "$out/stats.json")"
echo "demo: open it in ParaView:  paraview $(show "$pvd")"
# A quick look without ParaView (pycno plot runs tools/plot.py with the venv).
if png="$("$PYCNO" plot "$out" 2>/dev/null | tail -n 1)" && [ -n "$png" ]; then
    echo "demo: a picture of the last frame: $(show "${png##* }")"
    echo "demo: more: pycno plot $(show "$out") --transect \"-5,0 5,0\"   (pycno plot --help)"
fi
