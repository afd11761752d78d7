#!/usr/bin/env bash
# Usage: Scripts/with-postgres.sh Scripts/sample-on-postgres.sh
#
# Runs the sample built with the Postgres trait (`swift build --traits Postgres --product tether-sample`, in .build)
# on the repository's configuration.yaml with its persistence moved to PostgreSQL (TETHER_POSTGRES_URL, which
# Scripts/with-postgres.sh sets): the store, the cache and the outbox in one database, the outbox shared by the
# mutations step's processes. In a folder of its own, removed afterwards; exits with the sample's status.
# TETHER_SAMPLE names another build of the sample to run; TETHER_SAMPLE_REPORT, a path to copy the report to.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${TETHER_POSTGRES_URL:?run it under Scripts/with-postgres.sh}"
sample="${TETHER_SAMPLE:-$PWD/.build/debug/tether-sample}"
folder=$(mktemp -d)
trap 'rm -rf "$folder"' EXIT
awk -v url="$TETHER_POSTGRES_URL" '
    /^persistence:/ { print "persistence:\n  type: postgres\n  url: \"" url "\"\n  outbox: true"; skipping = 1; next }
    skipping && /^[^ #]/ { skipping = 0 }
    !skipping { print }
' configuration.yaml > "$folder/postgres.yaml"
cd "$folder"
"$sample" --config postgres.yaml --report report.html --quiet
[ -z "${TETHER_SAMPLE_REPORT:-}" ] || cp report.html "$TETHER_SAMPLE_REPORT"
