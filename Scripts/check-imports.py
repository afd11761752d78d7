#!/usr/bin/env python3
"""Fails when a file imports one of Tether's own modules that its target does not declare as a dependency, or when a
target declares one of our library targets that none of its files imports.

SwiftPM lets a target import any module already built in the same build directory, so an undeclared import compiles
here and breaks for a user who picks only some products (and hides a layering violation, such as production code
importing a testing target). A declared dependency nothing imports makes a user build a module for nothing, and
hides which way the layers really point. (Executable targets are exempt: a test declares one to have it built.)
An adapter implements its role and nothing above it: a store or transport adapter never depends on the Kits built on
its role (LiveQueryKit, ResourceKit, PipelineKit), which a user picks and composes with it.
Run by .ci/run; no arguments.
"""
import glob
import json
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
package = json.loads(
    subprocess.check_output(["swift", "package", "dump-package"], cwd=root, stderr=subprocess.DEVNULL))
ours = {target["name"].replace("-", "_") for target in package["targets"]}
executables = {target["name"] for target in package["targets"] if target["type"] == "executable"}
problems = []
for target in package["targets"]:
    declared = set()
    imported = set()
    for dependency in target["dependencies"]:
        for value in dependency.values():
            declared.add(value[0].replace("-", "_"))
    path = target.get("path") or ("Tests/" if target["type"] == "test" else "Modules/") + target["name"]
    for file in sorted(glob.glob(os.path.join(root, path, "**", "*.swift"), recursive=True)):
        if "/.build" in file:
            continue
        with open(file, encoding="utf-8") as handle:
            text = handle.read()
        for number, line in enumerate(text.split("\n"), start=1):
            match = re.match(r"^(?:@\w+ |public |package |internal )*import (\w+)", line)
            if match:
                imported.add(match.group(1))
            if match and match.group(1) in ours and match.group(1) not in declared | {target["name"]}:
                problems.append(f"{os.path.relpath(file, root)}:{number}: {target['name']} imports "
                                f"{match.group(1)} without declaring it in Package.swift")
    for dependency in sorted(declared & ours - imported - {name.replace("-", "_") for name in executables}):
        problems.append(f"Package.swift: {target['name']} declares {dependency}, which none of its files imports")
# Adapters and the Kits above their roles, which they must not depend on.
above_roles = {"LiveQueryKit", "ResourceKit", "PipelineKit"}
for target in package["targets"]:
    if target["name"].endswith("Adapter"):
        for dependency in target["dependencies"]:
            for value in dependency.values():
                if value[0] in above_roles:
                    problems.append(f"Package.swift: {target['name']} depends on {value[0]}, a Kit built on its role; "
                                    "compose them where they are used (Store(SQLiteDocumentStore(…)))")
for problem in problems:
    print(problem)
if problems:
    sys.exit(1)
print(f"imports: every import of Tether's own modules is declared ({len(package['targets'])} targets)")
