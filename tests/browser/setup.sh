#!/usr/bin/env bash
# Installs what the browser test (tests/tests/browser.rs) needs: Debian's `chromium`
# with apt-get when there is no browser at $AGENTYARD_CHROMIUM (default
# /usr/bin/chromium), and playwright-core into tests/browser/node_modules from the
# committed lock file (no browser download: the test launches the system Chromium).
# Idempotent: what is installed from the same pins is not installed again.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
chromium="${AGENTYARD_CHROMIUM:-/usr/bin/chromium}"

if [[ -x "$chromium" ]]; then
    echo "browser: $chromium is installed"
else
    echo "browser: installing chromium with apt-get"
    sudo=""
    if [[ "$(id -u)" != 0 ]]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium
fi

stamp="$here/node_modules/.agentyard-installed"
if [[ -f "$stamp" ]] && cmp -s "$stamp" "$here/package-lock.json"; then
    echo "browser: playwright-core already installed in $here/node_modules"
else
    echo "browser: installing playwright-core into $here/node_modules"
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$here/package-lock.json" "$stamp"
fi
