#!/usr/bin/env python3
"""Copies the compiled doc examples into the docs.

Every Swift block in README.md, ARCHITECTURE.md and Docs/*.md is marked `<!-- snippet: NAME -->` on the line before
its fence; its text is the region `// snippet: NAME` ... `// end snippet` of a file in Tests/DocSnippets, which
`swift build --build-tests` compiles. Edit the example there, then run this script; DocSnippetSyncTests fails while a
doc and its compiled copy differ.

    Scripts/sync-snippets.py           # rewrites the marked blocks
    Scripts/sync-snippets.py --check   # exits 1, naming each block that differs
"""
import glob
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def dedent(lines):
    indents = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip()]
    common = min(indents) if indents else 0
    return [line[common:] if len(line) >= common else "" for line in lines]


def regions():
    found = {}
    for path in sorted(glob.glob(os.path.join(root, "Tests/DocSnippets/*.swift"))):
        name, body = None, []
        for line in open(path, encoding="utf-8").read().split("\n"):
            stripped = line.strip()
            if stripped.startswith("// snippet:"):
                name, body = stripped[len("// snippet:"):].strip(), []
            elif stripped == "// end snippet" and name:
                found[name] = dedent(body)
                name = None
            elif name:
                body.append(line)
    return found


def sync(path, compiled, check):
    lines = open(path, encoding="utf-8").read().split("\n")
    out, index, stale = [], 0, []
    while index < len(lines):
        line = lines[index]
        out.append(line)
        if line.strip() != "```swift":
            index += 1
            continue
        previous = next((l for l in reversed(out[:-1]) if l.strip()), "")
        marker = re.match(r"\s*<!-- snippet: (\S+) -->\s*$", previous)
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        body = lines[index + 1:end]
        if marker and marker.group(1) in compiled:
            indent = line[: len(line) - len(line.lstrip(" "))]
            new = [indent + l if l else "" for l in compiled[marker.group(1)]]
            if new != body:
                stale.append(f"{os.path.relpath(path, root)}:{index + 1}: {marker.group(1)}")
            body = new
        out.extend(body)
        out.append(lines[end] if end < len(lines) else "```")
        index = end + 1
    if not check:
        open(path, "w", encoding="utf-8").write("\n".join(out))
    return stale


def main():
    check = "--check" in sys.argv[1:]
    compiled = regions()
    docs = [os.path.join(root, "README.md"), os.path.join(root, "ARCHITECTURE.md")]
    docs += sorted(glob.glob(os.path.join(root, "Docs/*.md")))
    stale = [entry for doc in docs if os.path.exists(doc) for entry in sync(doc, compiled, check)]
    for entry in stale:
        print(("differs: " if check else "updated: ") + entry)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
