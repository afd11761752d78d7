#!/usr/bin/env bash
# The soak: the sample's ownership and back-pressure scenarios in a loop (owner churn, a memory-pressure event, the
# demo server's slow answers and 503s, a fast writer and a slow consumer under every policy), resident memory sampled
# every second. Prints the slope after warm-up and fails if memory trends upward (+1 MB/min or more), if a round
# missed its final state, or if anything is left alive at the end.
#   Scripts/soak.sh [seconds] [configuration]        (default: 600 s, configuration.yaml)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
config=${2:-configuration.yaml}
swift build --product tether-sample 2>&1 | tail -1
"$(swift build --show-bin-path)/tether-sample" --config "$config" --soak "$seconds"
