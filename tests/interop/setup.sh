#!/usr/bin/env bash
# Installs the official A2A clients the interop suite drives (tests/tests/interop.rs):
# a2a-sdk 0.3.x and 1.x into venvs under $CARGO_TARGET_DIR/interop/{venv,venv1} (default
# target/), and @a2a-js/sdk 0.3.x and 1.x (the latter with its gRPC peers) into
# tests/interop/{js,js1}/node_modules from the committed lock files.
# Idempotent: what is installed from the same pins is not installed again.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
python="${PYTHON:-python3}"

# Python: a venv per SDK line, rebuilt when its requirements.txt changes: `venv` holds
# a2a-sdk 0.3.x (python/), `venv1` a2a-sdk 1.x (python1/).
for pair in "python:venv" "python1:venv1"; do
    scripts="$here/${pair%%:*}"
    venv="$target/interop/${pair##*:}"
    stamp="$venv/.agentyard-installed"
    want="$(cat "$scripts/requirements.txt")"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
        echo "interop: a2a-sdk already installed in $venv"
        continue
    fi
    echo "interop: installing a2a-sdk into $venv"
    rm -rf "$venv"
    pip_args=(install --quiet --disable-pip-version-check -r "$scripts/requirements.txt")
    if "$python" -m venv "$venv"; then
        "$venv/bin/python" -m pip "${pip_args[@]}"
    else
        # A system Python without ensurepip (Debian's python3 without python3-venv):
        # a venv without pip, filled by the system's pip (`--python`, pip >= 22.3).
        echo "interop: no ensurepip; filling a venv without pip from $python's pip"
        rm -rf "$venv"
        "$python" -m venv --without-pip "$venv"
        "$python" -m pip --python "$venv/bin/python" "${pip_args[@]}"
    fi
    printf '%s' "$want" > "$stamp"
done

# JS: npm ci from package-lock.json, again only when the lock file changed; `js` holds
# the 0.3.x SDK, `js1` the 1.x one.
for js in "$here/js" "$here/js1"; do
    js_stamp="$js/node_modules/.agentyard-installed"
    if [[ -f "$js_stamp" ]] && cmp -s "$js_stamp" "$js/package-lock.json"; then
        echo "interop: @a2a-js/sdk already installed in $js/node_modules"
    else
        echo "interop: installing @a2a-js/sdk into $js/node_modules"
        (cd "$js" && npm ci --no-audit --no-fund --loglevel=error)
        cp "$js/package-lock.json" "$js_stamp"
    fi
done
