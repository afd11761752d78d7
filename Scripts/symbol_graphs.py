"""The symbol graphs of the debug build's library modules (swift symbolgraph-extract, public declarations only), read
by the public API check (check-public-api.py) and the documentation check (check-docs.py). Run after `swift build`."""
import json
import os
import subprocess


class SymbolGraphs:
    def __init__(self, root):
        self.root = root
        package = json.loads(
            subprocess.check_output(["swift", "package", "dump-package"], cwd=root, stderr=subprocess.DEVNULL))
        # Every module a library product offers.
        self.modules = sorted({target for product in package["products"] if "library" in product["type"]
                               for target in product["targets"]})
        self.binaries = subprocess.check_output(["swift", "build", "--show-bin-path"], cwd=root, text=True).strip()
        self.triple = json.loads(subprocess.check_output(["swiftc", "-print-target-info"], text=True))["target"]["triple"]
        # The C modules the Swift ones import (SwiftPM's own module maps in the build folder, and those C targets
        # ship in include/): symbolgraph-extract loads a module only with everything it was compiled against.
        self.c_flags = []
        for folder, _, files in os.walk(self.binaries):
            # A plugin's tools are built apart ("-tool"), with module maps of the same names.
            if folder.endswith(".build") and not folder.endswith("-tool.build") and "module.modulemap" in files:
                self.c_flags += ["-Xcc", f"-fmodule-map-file={os.path.join(folder, 'module.modulemap')}"]
        for base in [os.path.join(root, ".build", "checkouts"), os.path.join(root, "Modules")]:
            for folder, _, files in os.walk(base):
                skipped = {"Benchmarks", "Tests", "GRDBSQLCipher"} & set(folder.split(os.sep))
                if os.path.basename(folder) == "include" and "module.modulemap" in files and not skipped:
                    self.c_flags += ["-Xcc", f"-fmodule-map-file={os.path.join(folder, 'module.modulemap')}"]

    def extract(self, module, output_dir, extension_blocks=False):
        """Writes `module`'s graphs to `output_dir`: Module.symbols.json, and Module@Other.symbols.json for its
        extensions of other modules' types — with a symbol for each extension block when `extension_blocks` is set,
        as DocC's plugin asks (pages such as `Testing/Trait/loadsEveryCore` then exist)."""
        subprocess.run(
            ["swift", "symbolgraph-extract", "-module-name", module, "-I", os.path.join(self.binaries, "Modules"),
             "-target", self.triple, "-minimum-access-level", "public", "-skip-synthesized-members",
             "-output-dir", output_dir] + (["-emit-extension-block-symbols"] if extension_blocks else []) + self.c_flags,
            check=True, cwd=self.root, stdout=subprocess.DEVNULL)
