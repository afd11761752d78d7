#!/usr/bin/env bash
# Checks the README's dependency line as a user meets it. A copy of the LiveQueriesOnly pick-and-mix package, its
# dependency replaced by the README's `.package(url: …)` line, resolves Tether by URL — this clone's commit offered as
# `main` in a bare repository, as a user's clone would offer it — then builds and runs. Fails if the line does not
# resolve (a version no tag provides, say), does not build, or the program breaks a promise. Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
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
echo "dependency line: resolved by URL, built and ran"
