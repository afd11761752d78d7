#!/usr/bin/env bash
# Renders the sample's report to a PNG with headless Chromium, for a human to look at.
#   Scripts/report-screenshot.sh [report.html] [out.png]     (defaults: tether-report.html, tether-report.png)
# Run the sample first (swift run tether-sample). Needs Debian's chromium (apt-get install chromium).
set -euo pipefail
report=${1:-tether-report.html}
out=${2:-tether-report.png}
browser=${TETHER_BROWSER:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$browser" ]; then
    echo "error: no Chromium found; apt-get install chromium, or set TETHER_BROWSER" >&2
    exit 1
fi
if [ ! -f "$report" ]; then
    echo "error: $report does not exist; run swift run tether-sample first" >&2
    exit 1
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
    --window-size=1000,2600 --screenshot="$(realpath -m "$out")" "file://$(realpath "$report")" 2>/dev/null
echo "wrote $out"
