#!/usr/bin/env bash
# Builds and runs the two pick-and-mix packages (Samples/PickAndMix), and proves that each compiled only what it
# uses: ResourcesOnly must compile neither SwiftNIO, GRDB nor Hummingbird; LiveQueriesOnly neither SwiftNIO,
# Hummingbird nor AsyncHTTPClient. Exits non-zero if a build, a run or a check fails.
set -euo pipefail
cd "$(dirname "$0")/.."

check_modules() {
    local package=$1 forbidden=$2
    local modules
    modules=$(ls "Samples/PickAndMix/$package/.build/debug/Modules" | sed 's/\..*//' | sort -u | tr '\n' ' ')
    echo "$package compiled: $modules"
    if echo " $modules" | grep -Eq " ($forbidden)"; then
        echo "error: $package compiled a module it must not: $(echo " $modules" | grep -Eo " ($forbidden)[A-Za-z0-9]*" | tr '\n' ' ')"
        exit 1
    fi
}

for package in ResourcesOnly LiveQueriesOnly; do
    echo "--- $package"
    swift build --package-path "Samples/PickAndMix/$package" 2>&1 | tail -1
    swift run --package-path "Samples/PickAndMix/$package" --skip-build
done
check_modules ResourcesOnly "NIO|GRDB|Hummingbird|AsyncHTTPClient|Yams|TetherTesting|DocumentStoreKit|LiveQueryKit"
check_modules LiveQueriesOnly "NIO|Hummingbird|AsyncHTTPClient|Yams|TetherTesting"
echo "pick and mix: both packages built, ran and compiled only what they use"
