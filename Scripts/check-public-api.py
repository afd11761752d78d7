#!/usr/bin/env python3
"""Compares the public API of every library module with the checked-in list in API/<Module>.txt, so that a change
to the public API is a conscious one: it fails, printing what was added and what went, until the lists are written
anew with --update and committed with the change (say why in the commit).

Reads the modules the debug build made (run it after `swift build`): swift symbolgraph-extract lists each module's
public declarations, one line each — its kind, its path and its declaration as written. Run by .ci/run.
  Scripts/check-public-api.py            check
  Scripts/check-public-api.py --update   write API/<Module>.txt anew
"""
import json
import os
import sys
import tempfile

from symbol_graphs import SymbolGraphs

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
update = "--update" in sys.argv[1:]
graphs = SymbolGraphs(root)
modules = graphs.modules
api_dir = os.path.join(root, "API")
os.makedirs(api_dir, exist_ok=True)
changed = []
total = 0
with tempfile.TemporaryDirectory() as scratch:
    for module in modules:
        graphs.extract(module, scratch)
        lines = set()
        for name in os.listdir(scratch):
            # The module's own symbols, and its extensions of other modules' types (Module@Other.symbols.json).
            if not (name == f"{module}.symbols.json" or name.startswith(f"{module}@")):
                continue
            with open(os.path.join(scratch, name)) as handle:
                graph = json.load(handle)
            for symbol in graph["symbols"]:
                declaration = "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))
                path = ".".join(symbol["pathComponents"])
                lines.add(f"{symbol['kind']['identifier']}\t{path}\t{' '.join(declaration.split())}")
        for name in os.listdir(scratch):
            os.remove(os.path.join(scratch, name))
        total += len(lines)
        listed = os.path.join(api_dir, f"{module}.txt")
        text = "".join(line + "\n" for line in sorted(lines))
        old = open(listed).read() if os.path.exists(listed) else ""
        if old == text:
            continue
        if update:
            with open(listed, "w") as handle:
                handle.write(text)
            continue
        before, after = set(old.splitlines()), set(text.splitlines())
        changed.append(module)
        for line in sorted(before - after):
            print(f"{module}: - {line}")
        for line in sorted(after - before):
            print(f"{module}: + {line}")
if update:
    print(f"public API: {total} declarations in {len(modules)} modules written to API/")
elif changed:
    print(f"error: the public API of {', '.join(changed)} changed (listed above); if that is meant, run "
          "Scripts/check-public-api.py --update and commit API/ with the change, saying why")
    sys.exit(1)
else:
    print(f"public API: {total} declarations in {len(modules)} modules, as listed in API/")
