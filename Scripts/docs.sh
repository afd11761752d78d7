#!/usr/bin/env bash
# Builds every module's DocC documentation (swift-docc-plugin, declared only under TETHER_DOCS=1) and fails on any
# warning: an unresolved symbol link, a missing parameter, a stale name.
#   Scripts/docs.sh                # all modules, archives under .build-docs/plugins/Swift-DocC/outputs
#   Scripts/docs.sh OwnershipKit   # some
set -euo pipefail
cd "$(dirname "$0")/.."
modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
    modules=(TetherConcurrency TetherClock OwnershipKit DeliveryKit DeliveryMetricsAdapter RegistryKit MemoryPressureKit TransportKit ResourceKit
        TetherJSON PersistenceKit EntityCacheKit DocumentStoreKit LiveQueryKit SQLiteAdapter URLSessionAdapter AsyncHTTPClientAdapter PipelineKit
        PipelinePlugins TetherTesting TetherTestingTraits TransportConformance Tether)
fi
targets=()
for module in "${modules[@]}"; do targets+=(--target "$module"); done
log=.build-docs/docs.log
mkdir -p .build-docs
TETHER_DOCS=1 swift package --scratch-path .build-docs generate-documentation "${targets[@]}" 2>&1 | tee "$log" \
    | grep -E "^(warning|error)|Finished building documentation|Generated documentation" || true
# SwiftPM's note about a dependency's unhandled file (swift-distributed-tracing) is not ours, nor DocC's.
warnings=$(grep "^warning:" "$log" | grep -vc "which are unhandled; explicitly declare them" || true)
errors=$(grep -c "^error:" "$log" || true)
echo "DocC: ${#modules[@]} module(s), $warnings warning(s), $errors error(s); full log in $log"
[ "$warnings" -eq 0 ] && [ "$errors" -eq 0 ]
