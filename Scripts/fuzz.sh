#!/usr/bin/env bash
# Fuzzes the live-query parser and the configuration loader with libFuzzer (-sanitize=fuzzer,address), and runs the
# models (random sequences of operations against a brute-force reference: LiveQueryModelTests, MutationModelTests,
# DurableMutationModelTests)
# at length.
#   Scripts/fuzz.sh [query-parser|configuration-loader|live-query-model|mutation-model|outbox-model|all] [runs]
# (default: all; 1000000 runs each for the fuzzers, 100000 sequences for each model, the live-query model's half on
# each store). A failing model sequence is printed with its steps and the seed that replays it.
# FUZZ_TIMEOUT (seconds, default 10) is how long one input may take before it counts as a hang; raise it when the
# fuzzer runs niced beside other work, where an input can wait that long for a processor.
# The seed corpora are committed under Fuzz/<Target>/corpus; what the fuzzer adds goes to .build-fuzz/corpus/<target>.
# A crash leaves its input as .build-fuzz/crash-*: turn it into a fixed bug and a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
runs=${2:-1000000}

fuzz() {
    local product=$1 seeds=$2 max_len=$3
    echo "=== $product: building (release, -sanitize=fuzzer,address)"
    TETHER_FUZZ=1 swift build -c release --scratch-path .build-fuzz \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product "$product" 2>&1 | tail -1
    local corpus=".build-fuzz/corpus/$product"
    mkdir -p "$corpus"
    echo "=== $product: $runs runs"
    ".build-fuzz/release/$product" "$corpus" "$seeds" -runs="$runs" -max_len="$max_len" -timeout="${FUZZ_TIMEOUT:-10}" \
        -rss_limit_mb=4096 -artifact_prefix=.build-fuzz/ -print_final_stats=1 2>&1 | tee ".build-fuzz/$product.log" | grep -E "^#[0-9]+ +(DONE|INITED)|^Done|stat::|ERROR|SUMMARY" || true
    if grep -qE "ERROR: (libFuzzer|AddressSanitizer)|deadly signal|Fatal error" ".build-fuzz/$product.log"; then
        echo "error: $product found a problem; see .build-fuzz/$product.log and .build-fuzz/crash-*"
        exit 1
    fi
}

model() {
    local sequences=$1
    echo "=== LiveQueryModelTests: $sequences sequences (release)"
    TETHER_CORE_SUITES=1 TETHER_MODEL_SEQUENCES=$(((sequences + 1) / 2)) swift test -c release \
        --scratch-path .build-fuzz-model --filter LiveQueryModelTests 2>&1 | grep -vE "^\[[0-9]+/[0-9]+\]"
}

mutation_model() {
    local sequences=$1
    echo "=== MutationModelTests: $sequences sequences (release)"
    TETHER_CORE_SUITES=1 TETHER_MUTATION_SEQUENCES=$sequences swift test -c release \
        --scratch-path .build-fuzz-model --filter "ResourceKitTests.MutationModelTests" 2>&1 | grep -vE "^\[[0-9]+/[0-9]+\]"
}

outbox_model() {
    local sequences=$1
    echo "=== DurableMutationModelTests: $sequences sequences (release)"
    TETHER_CORE_SUITES=1 TETHER_OUTBOX_SEQUENCES=$sequences swift test -c release \
        --scratch-path .build-fuzz-model --filter DurableMutationModelTests 2>&1 | grep -vE "^\[[0-9]+/[0-9]+\]"
}

case "$which" in
    query-parser) fuzz FuzzQueryParser Fuzz/QueryParser/corpus 256 ;;
    configuration-loader) fuzz FuzzConfigurationLoader Fuzz/ConfigurationLoader/corpus 4096 ;;
    live-query-model) model "${2:-100000}" ;;
    mutation-model) mutation_model "${2:-100000}" ;;
    outbox-model) outbox_model "${2:-100000}" ;;
    all)
        fuzz FuzzQueryParser Fuzz/QueryParser/corpus 256
        fuzz FuzzConfigurationLoader Fuzz/ConfigurationLoader/corpus 4096
        model 100000
        mutation_model 100000
        outbox_model 100000
        ;;
    *)
        echo "usage: Scripts/fuzz.sh [query-parser|configuration-loader|live-query-model|mutation-model|outbox-model|all] [runs]"
        exit 2
        ;;
esac
