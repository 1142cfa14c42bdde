#!/usr/bin/env bash
# Install what pycno's build, tests and demo need; idempotent and quick when all is present.
#
#   tools/setup.sh
#
# 1. Debian/Ubuntu packages (apt-get, as root or through sudo), only when some are missing;
#    with CI=true, `apt-get update` always runs first.
# 2. Rust (cargo) through rustup when no cargo is found on PATH or in ~/.cargo/bin.
# 3. A Python virtual environment at .venv/ (gitignored) with the packages the tests and
#    tools use (vtk, numpy, matplotlib, netCDF4, xarray, jsonschema), and NVIDIA's NVRTC library (no GPU needed), with which
#    the tests compile the CUDA kernels on machines without a GPU.  tools/test.sh and tools/demo.sh put .venv/bin
#    first on PATH, so the `python3` the tests run is the venv's.
# 4. pycno itself, with `cargo install --path . --locked` (the release build, in target/).
#
# Environment: PYCNO_PYTHON (default python3) is the interpreter the venv is made from.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
# build-essential also builds METIS: the metis crate compiles its vendored C sources with cc
# and ships pre-generated bindings (no cmake, no libclang). MPI: Open MPI (libraries, headers,
# mpirun) and libclang, with which the mpi crate generates its bindings at build time.
# libnetcdf-dev: the NetCDF library pycno loads at run time for NetCDF-4 bathymetry files
# (never linked: the binary runs without it).
APT_PACKAGES=(build-essential pkg-config ca-certificates curl git python3 python3-venv python3-pip
    libopenmpi-dev openmpi-bin libclang-dev libnetcdf-dev)
# nvidia-cuda-nvrtc: libnvrtc.so.13 for the CUDA 13 that cudarc is built for; tools/test.sh
# puts it on LD_LIBRARY_PATH so that tests/kernels.rs compiles the kernels without a GPU.
# netCDF4, xarray: the tests read the NetCDF (UGRID) output with them and write the NetCDF
# bathymetry files tests/bathymetry_files.rs reads; rasterio (GDAL's Python bindings, GDAL
# inside its wheel) writes the GeoTIFFs that test reads as GDAL writes them; jsonschema: the
# tests validate the examples against `pycno schema`.
PY_PACKAGES=(vtk numpy matplotlib netCDF4 xarray jsonschema rasterio nvidia-cuda-nvrtc==13.0.88)
# Oldest rustc the locked crates accept (nalgebra, wide); a warning only.
RUST_MIN=1.89

say() { printf 'setup: %s\n' "$*"; }
die() {
    printf 'setup: ERROR: %s\n' "$*" >&2
    exit 1
}

LOG="$(mktemp "${TMPDIR:-/tmp}/pycno-setup.XXXXXX")"
trap 'rm -f "$LOG"' EXIT

# Run a command with its output in $LOG; on failure show the end of it and stop.
quiet() {
    local what=$1
    shift
    if ! "$@" >"$LOG" 2>&1; then
        tail -n 40 "$LOG" >&2
        die "$what failed: $*"
    fi
}

# ---------------------------------------------------------------- 1. system packages
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        env DEBIAN_FRONTEND=noninteractive "$@"
    else
        sudo env DEBIAN_FRONTEND=noninteractive "$@"
    fi
}

system_packages() {
    if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
        say "system packages: no apt-get here (not Debian/Ubuntu): skipped; needs a C linker (cc), git, curl, python3 with venv"
        return 0
    fi
    local missing=() p
    for p in "${APT_PACKAGES[@]}"; do
        if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" != "install ok installed" ]; then
            missing+=("$p")
        fi
    done
    if [ ${#missing[@]} -eq 0 ] && [ "${CI:-}" != true ]; then
        say "system packages: all present (${APT_PACKAGES[*]})"
        return 0
    fi
    if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null 2>&1; then
        if [ ${#missing[@]} -eq 0 ]; then
            say "system packages: all present (not root and no sudo: apt-get update skipped)"
            return 0
        fi
        say "WARNING: missing ${missing[*]}, and not root and no sudo to install them;" \
            "run as root: apt-get install -y --no-install-recommends ${missing[*]}"
        return 0
    fi
    say "system packages: apt-get update"
    quiet "apt-get update" as_root apt-get update
    if [ ${#missing[@]} -eq 0 ]; then
        say "system packages: all present (${APT_PACKAGES[*]})"
        return 0
    fi
    say "system packages: apt-get install ${missing[*]}"
    quiet "apt-get install" as_root apt-get install -y --no-install-recommends "${missing[@]}"
}

system_packages
command -v cc >/dev/null 2>&1 || die "no C compiler/linker (cc) found; Rust needs one to link: apt-get install build-essential"

# ---------------------------------------------------------------- 2. Rust
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
if ! command -v cargo >/dev/null 2>&1; then
    if [ ! -x "$CARGO_BIN/cargo" ]; then
        say "rust: no cargo found; installing with rustup (minimal profile)"
        command -v curl >/dev/null 2>&1 || die "curl is needed to install Rust: apt-get install curl"
        if ! curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs -o "$LOG.rustup" ||
            ! sh "$LOG.rustup" -y --profile minimal >"$LOG" 2>&1; then
            rm -f "$LOG.rustup"
            tail -n 40 "$LOG" >&2
            die "installing Rust with rustup failed (see https://rustup.rs)"
        fi
        rm -f "$LOG.rustup"
    fi
    if [ -f "${CARGO_HOME:-$HOME/.cargo}/env" ]; then
        # shellcheck source=/dev/null
        . "${CARGO_HOME:-$HOME/.cargo}/env"
    else
        PATH="$CARGO_BIN:$PATH"
    fi
    command -v cargo >/dev/null 2>&1 || die "cargo is still not on PATH after installing Rust"
fi
# rustfmt and clippy: tools/test.sh checks the formatting and the lints.
if command -v rustup >/dev/null 2>&1; then
    for c in rustfmt clippy; do
        if ! rustup component list --installed 2>/dev/null | grep -q "^$c"; then
            say "rust: rustup component add $c"
            quiet "rustup component add $c" rustup component add "$c"
        fi
    done
fi
rustc_version="$(rustc --version 2>/dev/null | awk '{print $2}')"
say "rust: $(cargo --version) (rustc ${rustc_version:-not found})"
if [ -n "$rustc_version" ] &&
    [ "$(printf '%s\n%s\n' "$RUST_MIN" "${rustc_version%%-*}" | sort -V | head -n1)" != "$RUST_MIN" ]; then
    say "WARNING: rustc $rustc_version is older than $RUST_MIN, which the locked crates need: rustup update stable"
fi

# ---------------------------------------------------------------- 3. Python
BASE_PY="${PYCNO_PYTHON:-python3}"
command -v "$BASE_PY" >/dev/null 2>&1 || die "no $BASE_PY found: apt-get install python3 python3-venv"

venv_ok() {
    [ -x "$VENV/bin/python3" ] && "$VENV/bin/python3" -m pip --version >/dev/null 2>&1
}

make_venv() {
    rm -rf "$VENV"
    if "$BASE_PY" -m venv "$VENV" >"$LOG" 2>&1 && venv_ok; then
        return 0
    fi
    # Debian without python3-venv has no ensurepip: make the venv bare and bring pip in.
    rm -rf "$VENV"
    "$BASE_PY" -m venv --without-pip "$VENV" >"$LOG" 2>&1 || return 1
    if "$VENV/bin/python3" -m ensurepip --upgrade >>"$LOG" 2>&1 && venv_ok; then
        return 0
    fi
    "$BASE_PY" -m pip --python "$VENV/bin/python3" install --disable-pip-version-check -q pip >>"$LOG" 2>&1 && venv_ok
}

PIP_USER=()
if venv_ok; then
    PY="$VENV/bin/python3"
    say "python: virtual environment .venv present ($("$PY" --version 2>&1))"
elif make_venv; then
    PY="$VENV/bin/python3"
    say "python: made virtual environment .venv from $(command -v "$BASE_PY") ($("$PY" --version 2>&1))"
else
    rm -rf "$VENV"
    [ "$BASE_PY" = python3 ] || die "cannot make a virtual environment with $BASE_PY, and the tests run python3"
    "$BASE_PY" -m pip --version >/dev/null 2>&1 ||
        die "cannot make a virtual environment (apt-get install python3-venv) and $BASE_PY has no pip (apt-get install python3-pip)"
    PY="$(command -v "$BASE_PY")"
    PIP_USER=(--user)
    say "python: WARNING: cannot make a virtual environment (apt-get install python3-venv); using $PY with pip install --user"
fi

# What is installed is recorded in the venv; a change of PY_PACKAGES reinstalls.
STAMP="$VENV/.pycno-packages"
want="${PY_PACKAGES[*]}"
# Imports them all (a failed import fails it) and prints their versions.
versions() {
    "$PY" -c 'import vtk, numpy, matplotlib, netCDF4, xarray, jsonschema, rasterio, glob, os, nvidia
assert glob.glob(os.path.join(list(nvidia.__path__)[0], "cu13", "lib", "libnvrtc.so.13")), "no libnvrtc.so.13"
print(f"vtk {vtk.vtkVersion.GetVTKVersion()}, numpy {numpy.__version__}, matplotlib {matplotlib.__version__}, NVRTC 13")' 2>&1
}
if have="$(versions)" &&
    { [ ${#PIP_USER[@]} -gt 0 ] || [ "$(cat "$STAMP" 2>/dev/null || true)" = "$want" ]; }; then
    say "python packages: present ($have)"
else
    say "python packages: pip install $want (vtk is large: this can take a few minutes)"
    pip_install() {
        "$PY" -m pip install --disable-pip-version-check --no-input --progress-bar off "${PIP_USER[@]}" "$@" "${PY_PACKAGES[@]}"
    }
    if ! pip_install --no-warn-script-location >"$LOG" 2>&1; then
        if [ ${#PIP_USER[@]} -gt 0 ] && grep -q externally-managed "$LOG"; then
            quiet "pip install" pip_install --no-warn-script-location --break-system-packages
        else
            tail -n 40 "$LOG" >&2
            die "pip install ${PY_PACKAGES[*]} failed (is PyPI reachable?)"
        fi
    fi
    have="$(versions)" || die "the packages were installed but do not import in $PY: $have"
    [ ${#PIP_USER[@]} -gt 0 ] || printf '%s\n' "$want" >"$STAMP"
    say "python packages: installed ($have)"
fi
# ---------------------------------------------------------------- 4. pycno on the PATH
# `cargo install --path . --locked` into cargo's bin directory (which rustup puts on the
# PATH): a copy, so that another checkout's build or a `cargo clean` leaves it working.
# It builds in this checkout's target directory, so the release build that tools/demo.sh
# and the tests use is the same one and nothing is built twice; when that build is up to
# date, this only copies it. `pycno --version` names the commit it was built from, and
# `pycno plot` finds this checkout's .venv. PYCNO_NO_INSTALL=1 skips this step.
install_pycno() {
    local bin="${CARGO_HOME:-$HOME/.cargo}/bin" target="${CARGO_TARGET_DIR:-$ROOT/target}" before after
    case "$target" in /*) ;; *) target="$ROOT/$target" ;; esac
    if [ "${PYCNO_NO_INSTALL:-}" = 1 ]; then
        say "pycno: not installed (PYCNO_NO_INSTALL=1)"
        return 0
    fi
    if [ -L "$bin/pycno" ]; then
        # The link to a checkout's build that earlier versions of this script made.
        say "pycno: replacing the link $bin/pycno -> $(readlink "$bin/pycno")"
        rm -f "$bin/pycno"
    fi
    before="$("$bin/pycno" --version 2>/dev/null || echo none)"
    say "pycno: cargo install --path . --locked (the release build, in $target; minutes the first time)"
    cargo install --path "$ROOT" --locked --target-dir "$target" --force ||
        die "cargo install --path $ROOT failed (above)"
    after="$("$bin/pycno" --version 2>/dev/null)" || die "cargo install left no working $bin/pycno"
    if [ "$before" = "$after" ]; then
        say "pycno: $bin/pycno is $after"
    else
        say "pycno: $bin/pycno is now $after (was: $before)"
    fi
    case ":$PATH:" in *":$bin:"*) ;; *) say "pycno: add $bin to PATH (e.g. source ${CARGO_HOME:-$HOME/.cargo}/env)" ;; esac
}
install_pycno
say "done: $(cargo --version | awk '{print $1, $2}'), python3 = $PY"
