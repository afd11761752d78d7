#!/usr/bin/env bash
# Guards the hot paths' cost by instruction count, which does not move with the machine's load as time does. Each
# scenario of Benchmarks/InstructionCounts (a resource lookup, a resource made from a new URL value, loadIfNeeded on
# fresh data, an owner coming and going beside 100 others, one change to 1,000 observers) runs under valgrind's
# callgrind twice, with one iteration and with one more than its count: the difference per iteration, which leaves
# out what the first iteration alone costs (metadata made and task locals set up once per process), is compared with
# Benchmarks/InstructionCounts/baseline.tsv. Fails when one costs more than 10 % over its baseline. Run by .ci/run.
#   Scripts/check-instructions.sh            check
#   Scripts/check-instructions.sh --update   write the baseline anew (commit it with the change that moved it, and say why)
#   Scripts/check-instructions.sh --traits T build with the package traits T, as the build before it did (CI's optimized
#                                            stage builds with Postgres: the same traits recompile nothing)
set -euo pipefail
cd "$(dirname "$0")/.."
baseline=Benchmarks/InstructionCounts/baseline.tsv
mode=""
build_options=()
while [ $# -gt 0 ]; do
    case $1 in
        --update) mode=--update; shift ;;
        --traits) build_options+=(--traits "$2"); shift 2 ;;
        *) echo "usage: $0 [--update] [--traits T]" >&2; exit 2 ;;
    esac
done
# Tether's own code optimized as a release build compiles it, the dependencies from the debug build
# (TETHER_OPTIMIZE, see Package.swift): CI's optimized stage has just built it, so only the scenarios' own target
# compiles here. The baseline is counted on the same build.
export TETHER_OPTIMIZE=1 TETHER_INSTRUCTIONS=1
swift build "${build_options[@]}" --product tether-instructions 2>&1 | tail -1
built="$(swift build "${build_options[@]}" --show-bin-path)/tether-instructions"
# Valgrind 3.19's debug-info reader gives up on the DWARF Swift emits for an imported C module (CTetherZlib's):
# callgrind runs a copy without debug info. The symbol table stays, so callgrind_annotate still names functions.
binary=$(mktemp)
objcopy --strip-debug "$built" "$binary"
# Swift seeds its hashing per process unless told not to: dictionary probes would differ from run to run.
export SWIFT_DETERMINISTIC_HASHING=1
# A run valgrind gives up on yields no count, and the check below says so (instead of set -e ending in silence).
count() {
    { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" "$1" "$2" 2>&1 || true; } |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
measured=$(mktemp)
trap 'rm -f "$measured" "$binary"' EXIT
for entry in "lookup 2000" "resource-from-url 1000" "load-if-needed 2000" "observer-churn 200" "fan-out 20"; do
    set -- $entry
    idle=$(count "$1" 1)
    busy=$(count "$1" $(($2 + 1)))
    if [ -z "$idle" ] || [ -z "$busy" ]; then
        echo "error: callgrind gave no count for $1"
        exit 1
    fi
    echo "$1 $(( (busy - idle) / $2 ))" >>"$measured"
done
python3 - "$baseline" "$measured" "$mode" <<'PY'
import sys
baseline_path, measured_path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
measured = dict(line.split() for line in open(measured_path) if line.strip())
if mode == "--update":
    with open(baseline_path, "w") as out:
        out.write("# scenario\tinstructions per iteration (Scripts/check-instructions.sh --update writes this)\n")
        for name, value in measured.items():
            out.write(f"{name}\t{value}\n")
    print(f"instructions: baseline written to {baseline_path}")
    sys.exit(0)
baseline = dict(line.split("\t") for line in open(baseline_path) if line.strip() and not line.startswith("#"))
failures = []
for name, value in measured.items():
    expected = int(baseline.get(name, "0"))
    ratio = int(value) / expected if expected else float("inf")
    print(f"{name:16} {int(value):>9} instructions per iteration, baseline {expected:>9} ({ratio:.2f}x)")
    if ratio > 1.10:
        failures.append(name)
if failures:
    print("error: more than 10 % over the baseline: " + ", ".join(failures)
          + " (make it cheaper, or update the baseline in the same commit and say why)")
    sys.exit(1)
print("instructions: every hot path within 10 % of its baseline")
PY
