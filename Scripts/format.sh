#!/usr/bin/env bash
# Formats every Swift file the repository tracks with the repository's .swift-format (swift-format ships with the
# toolchain). With --check, changes nothing and fails on any file that is not formatted (CI runs that).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--check" ]; then
    git ls-files -z --cached --others --exclude-standard '*.swift' | xargs -0 swift format lint --strict --parallel
else
    git ls-files -z --cached --others --exclude-standard '*.swift' | xargs -0 swift format format --in-place --parallel
fi
