#!/usr/bin/env python3
"""Builds every library module's documentation with DocC and fails on any warning: an unresolved symbol link, a
missing parameter, a stale name, an article that names nothing. The module's catalog (Modules/<Module>/*.docc),
when it has one, is converted against the public symbol graphs of the debug build's module — what the DocC plugin
(Scripts/docs.sh, which writes archives to publish) reads too, without its build per module. Run by .ci/run after
`swift build`; no arguments, or the modules to check.
"""
import glob
import os
import subprocess
import sys
import tempfile

from symbol_graphs import SymbolGraphs

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
graphs = SymbolGraphs(root)
modules = sys.argv[1:] or graphs.modules
failed = []
with tempfile.TemporaryDirectory() as scratch:
    for module in modules:
        symbols = os.path.join(scratch, module, "symbols")
        os.makedirs(symbols)
        graphs.extract(module, symbols, extension_blocks=True)
        catalogs = glob.glob(os.path.join(root, "Modules", module, "*.docc"))
        result = subprocess.run(
            ["docc", "convert"] + catalogs[:1] + [
                "--additional-symbol-graph-dir", symbols, "--fallback-display-name", module,
                "--fallback-bundle-identifier", module, "--output-path", os.path.join(scratch, module, "archive"),
                "--warnings-as-errors"],
            cwd=root, capture_output=True, text=True)
        if result.returncode != 0:
            failed.append(module)
            print(f"=== {module}\n{result.stdout}{result.stderr}")
if failed:
    print(f"error: DocC reported problems in {', '.join(failed)} (above)")
    sys.exit(1)
print(f"DocC: {len(modules)} modules, no warnings")
