#!/usr/bin/env bash
# Runs the sample with the inspector (--inspect), waits until its scenarios are done and it is on show, and saves a
# screenshot of the inspector's page with headless Chromium, for humans (Docs/Inspector.md shows it).
#
#   Scripts/inspector-screenshot.sh [OUTPUT.png]      # default: Docs/images/inspector.png
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-Docs/images/inspector.png}"
chromium="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$chromium" ]; then
    echo "error: Chromium is not installed (apt-get install -y chromium)" >&2
    exit 2
fi
swift build --product tether-sample >/dev/null
sample="$(swift build --show-bin-path)/tether-sample"
work="$(mktemp -d)"
"$sample" --inspect --quiet --report "$work/report.html" >"$work/sample.log" 2>&1 &
pid=$!
trap 'kill -INT "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 600); do
    grep -q "^Inspecting:" "$work/sample.log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/sample.log" >&2; exit 1; }
    sleep 0.5
done
url="$(grep -o 'http://127.0.0.1:[0-9]*/' "$work/sample.log" | tail -1)"
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile" \
    --window-size=1400,1200 --virtual-time-budget=3000 --screenshot="$(realpath -m "$out")" "$url" 2>/dev/null
echo "saved $out (from $url)"
