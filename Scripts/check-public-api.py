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
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
update = "--update" in sys.argv[1:]
package = json.loads(subprocess.check_output(["swift", "package", "dump-package"], cwd=root, stderr=subprocess.DEVNULL))
modules = sorted({target for product in package["products"] if "library" in product["type"]
                  for target in product["targets"]})
binaries = subprocess.check_output(["swift", "build", "--show-bin-path"], cwd=root, text=True).strip()
triple = subprocess.check_output(["swiftc", "-print-target-info"], text=True)
triple = json.loads(triple)["target"]["triple"]
# The C modules the Swift ones import (SwiftPM's own module maps in the build folder, and those C targets ship in
# include/): symbolgraph-extract loads a module only with everything it was compiled against.
c_flags = []
for folder, _, files in os.walk(binaries):
    # A plugin's tools are built apart ("-tool"), with module maps of the same names.
    if folder.endswith(".build") and not folder.endswith("-tool.build") and "module.modulemap" in files:
        c_flags += ["-Xcc", f"-fmodule-map-file={os.path.join(folder, 'module.modulemap')}"]
for base in [os.path.join(root, ".build", "checkouts"), os.path.join(root, "Modules")]:
    for folder, _, files in os.walk(base):
        skipped = {"Benchmarks", "Tests", "GRDBSQLCipher"} & set(folder.split(os.sep))
        if os.path.basename(folder) == "include" and "module.modulemap" in files and not skipped:
            c_flags += ["-Xcc", f"-fmodule-map-file={os.path.join(folder, 'module.modulemap')}"]
api_dir = os.path.join(root, "API")
os.makedirs(api_dir, exist_ok=True)
changed = []
total = 0
with tempfile.TemporaryDirectory() as scratch:
    for module in modules:
        subprocess.run(
            ["swift", "symbolgraph-extract", "-module-name", module, "-I", os.path.join(binaries, "Modules"),
             "-target", triple, "-minimum-access-level", "public", "-skip-synthesized-members",
             "-output-dir", scratch] + c_flags,
            check=True, cwd=root, stdout=subprocess.DEVNULL)
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
