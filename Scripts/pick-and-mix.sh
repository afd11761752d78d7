#!/usr/bin/env bash
# Builds and runs the two pick-and-mix packages (Samples/PickAndMix), and proves that each compiled only what it
# uses: ResourcesOnly must compile neither SwiftNIO, GRDB nor Hummingbird; LiveQueriesOnly neither SwiftNIO,
# Hummingbird nor AsyncHTTPClient. Run by .ci/run; exits non-zero if a build, a run or a check fails.
#
# ResourcesOnly depends on this checkout by path. LiveQueriesOnly is built as a user meets Tether: a copy whose
# dependency is the README's `.package(url: …)` line resolves Tether by URL — this clone's commit offered as `main`
# in a bare repository, as a user's clone would offer it. So the same build also fails if the README's line does not
# resolve (a version no tag provides, say).
set -euo pipefail
cd "$(dirname "$0")/.."

check_modules() {
    local name=$1 build=$2 forbidden=$3
    local modules
    modules=$(ls "$build/debug/Modules" | sed 's/\..*//' | sort -u | tr '\n' ' ')
    echo "$name compiled: $modules"
    if echo " $modules" | grep -Eq " ($forbidden)"; then
        echo "error: $name compiled a module it must not: $(echo " $modules" | grep -Eo " ($forbidden)[A-Za-z0-9]*" | tr '\n' ' ')"
        exit 1
    fi
}

echo "--- ResourcesOnly (by path)"
swift build --package-path Samples/PickAndMix/ResourcesOnly 2>&1 | tail -1
swift run --package-path Samples/PickAndMix/ResourcesOnly --skip-build
check_modules ResourcesOnly Samples/PickAndMix/ResourcesOnly/.build \
    "NIO|GRDB|Hummingbird|AsyncHTTPClient|Yams|TetherTesting|DocumentStoreKit|LiveQueryKit"

echo "--- LiveQueriesOnly (by URL, through the README's dependency line)"
placeholder="<the URL you cloned Tether from>"
line=$(grep -F ".package(url: \"$placeholder\"" README.md | head -1 | sed 's/^ *//; s/,$//') || true
if [ -z "$line" ]; then
    echo "error: README.md has no '.package(url: \"$placeholder\", …)' line"
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git init -q --bare "$work/Tether.git"
git push -q "$work/Tether.git" HEAD:refs/heads/main
git push -q --tags "$work/Tether.git"
cp -r Samples/PickAndMix/LiveQueriesOnly "$work/App"
rm -rf "$work/App/.build"
dependency=${line//"$placeholder"/file://$work/Tether.git}
python3 - "$work/App/Package.swift" "$dependency" <<'PY'
import sys
path, dependency = sys.argv[1], sys.argv[2]
text = open(path).read()
local = '.package(name: "Tether", path: "../../..")'
assert local in text, f"{path} no longer depends on {local}"
open(path, "w").write(text.replace(local, dependency))
PY
echo "dependency line: $line"
swift build --package-path "$work/App" 2>&1 | tail -1
swift run --package-path "$work/App" --skip-build
check_modules LiveQueriesOnly "$work/App/.build" "NIO|Hummingbird|AsyncHTTPClient|Yams|TetherTesting"
echo "pick and mix: both packages built, ran and compiled only what they use; the README's line resolved by URL"
