#!/usr/bin/env python3
"""Checks the include structure of core/: no include cycle between components and no include
from a lower folder to a higher one.

The folders of core/, lowest first, are read from core/LAYERS (one name per line, `#` starts a
comment). A subfolder belongs to its top folder (formats/readers/x.h is in `formats`).

  * A component is a header and its .cpp with the same path minus extension
    (redis/connection.h + redis/connection.cpp); a lone header or a lone .cpp is one too.
  * `#include "..."` is resolved as the compiler does: first against the including file's own
    directory, then against core/. `<...>` includes, and includes that resolve to no file under
    core/, are ignored.
  * Component A -> component B when any file of A includes a file of B. Every strongly
    connected set of more than one component is a cycle, reported with its files and the
    includes that close it.
  * An include from a file in one folder to a file in a folder later in LAYERS is an upward
    include. A source file under core/ that is in no folder listed in LAYERS (core/ itself
    included) is reported too.

Exit 0 with a one-line summary when nothing is found, 1 with a report when something is, 2 on a
usage error (no core/ directory, no LAYERS file, a bad LAYERS line).

  python3 tools/check-layers.py [core-dir]        # default: core/ next to tools/
  python3 tools/check-layers.py --components-only # cycles only: no folder checks, no LAYERS
                                                  # (the flat tree, before the move)
  python3 tools/check-layers.py --selftest        # checks the check on synthetic trees

Python 3 standard library only. Registered as the ctest tests core_layers and
core_layers_selftest by cmake/LayerCheck.cmake.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

SOURCE_EXTENSIONS = {".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".c", ".cc", ".cpp", ".cxx"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
ROOT = "."  # the folder name of files directly in core/


class UsageError(Exception):
    pass


def read_layers(path):
    """The folder names in LAYERS, lowest first."""
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file (one folder of core/ per line, lowest first)")
    layers = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            name = line.split("#", 1)[0].strip()
            if not name:
                continue
            if "/" in name or "\\" in name or name in (".", "..") or len(name.split()) > 1:
                raise UsageError(f"{path}:{number}: '{name}' is not one top folder name of core/")
            if name in layers:
                raise UsageError(f"{path}:{number}: '{name}' is listed twice")
            layers.append(name)
    if not layers:
        raise UsageError(f"{path}: lists no folder")
    return layers


def source_files(core):
    """Every C/C++ source under core/, as paths relative to core/ with '/' separators, sorted."""
    files = []
    for directory, subdirs, names in os.walk(core):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        for name in names:
            if os.path.splitext(name)[1] in SOURCE_EXTENSIONS:
                rel = os.path.relpath(os.path.join(directory, name), core)
                files.append(rel.replace(os.sep, "/"))
    return sorted(files)


def folder_of(rel):
    return rel.split("/", 1)[0] if "/" in rel else ROOT


def component_of(rel):
    return os.path.splitext(rel)[0]


def normalize(rel):
    """core-relative path with '..' resolved; None when it leaves core/."""
    norm = os.path.normpath(rel).replace(os.sep, "/")
    if norm == ".." or norm.startswith("../") or os.path.isabs(norm):
        return None
    return norm


def includes(core, rel, known):
    """[(line, included file)] for the quoted includes of core/rel that resolve under core/."""
    found = []
    with open(os.path.join(core, rel), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            name = m.group(1)
            own_dir = os.path.dirname(rel)
            for candidate in (os.path.join(own_dir, name), name):
                target = normalize(candidate)
                if target is not None and target in known:
                    found.append((number, target))
                    break
    return found


def strongly_connected(nodes, edges):
    """Tarjan's algorithm, iterative. edges: {node: set(nodes)}. Returns a list of lists."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges.get(succ, ())))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                result.append(sorted(members))
    return result


def shortest_cycle(start, members, edges):
    """One shortest cycle through start inside members, as a list of components."""
    allowed = set(members)
    previous = {start: None}
    queue = [start]
    while queue:
        following = []
        for node in queue:
            for succ in sorted(edges.get(node, ())):
                if succ not in allowed:
                    continue
                if succ == start:
                    path = [node]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    return list(reversed(path)) + [start]
                if succ not in previous:
                    previous[succ] = node
                    following.append(succ)
        queue = following
    return [start]


def check(core, layers_path=None, components_only=False):
    """Returns (problems: list of report lines, summary: str)."""
    if not os.path.isdir(core):
        raise UsageError(f"{core}: no such directory")
    layers = None if components_only else read_layers(layers_path or os.path.join(core, "LAYERS"))
    files = source_files(core)
    known = set(files)

    components = {}
    for rel in files:
        components.setdefault(component_of(rel), []).append(rel)

    edges = {}       # component -> set(component)
    file_edges = {}  # (component, component) -> [(file, line, included file)]
    upward = []      # (file, line, included file, from folder, to folder)
    for rel in files:
        for line, target in includes(core, rel, known):
            a, b = component_of(rel), component_of(target)
            if a != b:
                edges.setdefault(a, set()).add(b)
                file_edges.setdefault((a, b), []).append((rel, line, target))
            if layers is not None:
                fa, fb = folder_of(rel), folder_of(target)
                if fa in layers and fb in layers and layers.index(fb) > layers.index(fa):
                    upward.append((rel, line, target, fa, fb))

    problems = []
    cycles = [c for c in strongly_connected(sorted(components), edges) if len(c) > 1]
    cycles.sort(key=lambda c: c[0])
    for number, members in enumerate(cycles, 1):
        names = ", ".join(members)
        problems.append(f"cycle {number} of {len(cycles)}: {len(members)} components: {names}")
        problems.append("  files: " + " ".join(f for m in members for f in components[m]))
        path = shortest_cycle(members[0], members, edges)
        problems.append("  e.g.   " + " -> ".join(path))
        problems.append("  includes between them:")
        inside = set(members)
        closing = sorted(e for a in members for b in edges.get(a, ()) if b in inside
                         for e in file_edges[(a, b)])
        for rel, line, target in closing:
            problems.append(f"    {rel}:{line}: #include \"{target}\"")

    folders = sorted({folder_of(f) for f in files})
    if layers is not None:
        for rel, line, target, fa, fb in upward:
            problems.append(f"upward include: {rel}:{line}: #include \"{target}\" "
                            f"({fa} is layer {layers.index(fa) + 1}, {fb} is layer "
                            f"{layers.index(fb) + 1} of {len(layers)} in LAYERS)")
        for rel in files:
            if folder_of(rel) not in layers:
                where = "core/ itself" if folder_of(rel) == ROOT else f"folder {folder_of(rel)}/"
                problems.append(f"not in a layer: {rel} ({where} is not listed in LAYERS)")

    if components_only:
        summary = (f"core: {len(components)} components in {len(folders)} folders, no cycle "
                   f"(folder checks skipped: --components-only)")
    else:
        summary = (f"core: {len(components)} components in {len(folders)} folders, no cycle, "
                   f"no upward include")
    return problems, summary


def report(core, layers_path, components_only):
    problems, summary = check(core, layers_path, components_only)
    if not problems:
        print(summary)
        return 0
    cycles = sum(1 for p in problems if p.startswith("cycle "))
    upward = sum(1 for p in problems if p.startswith("upward include"))
    unplaced = sum(1 for p in problems if p.startswith("not in a layer"))
    print(f"check-layers: {core}: {cycles} cycle(s), {upward} upward include(s), "
          f"{unplaced} file(s) outside the layers", file=sys.stderr)
    for line in problems:
        print(line, file=sys.stderr)
    if cycles:
        print("A cycle is broken by moving what both sides need down a layer, or by a forward "
              "declaration in place of an include.", file=sys.stderr)
    return 1


# ---- self-test -------------------------------------------------------------------------------

def write_tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def selftest():
    layers = "# lowest first\nbase\nredis   # transport\nformats\n"
    clean = {
        "LAYERS": layers,
        "CMakeLists.txt": "add_library(x)\n",
        "base/errors.h": "#pragma once\n#include <QString>\n",
        "base/duration.h": '#pragma once\n#include "errors.h"\n',          # own directory
        "base/duration.cpp": '#include "base/duration.h"\n#include "base/errors.h"\n',
        "redis/connection.h": '#pragma once\n#include "base/errors.h"\n#include "nothere.h"\n',
        "redis/connection.cpp": '#include "connection.h"\n#include <hiredis/hiredis.h>\n',
        "formats/formatrules.h": '#include "redis/connection.h"\n',
        "formats/readers/kong.cpp": '#include "../formatrules.h"\n  #  include "base/duration.h"\n',
    }
    cases = [
        # (name, tree changes, components-only, expected exit, text expected in the output)
        ("clean tree", {}, False, 0, "core: 5 components in 3 folders, no cycle, no upward include"),
        ("upward include", {"base/duration.cpp": '#include "redis/connection.h"\n'}, False, 1,
         'upward include: base/duration.cpp:1: #include "redis/connection.h"'),
        ("upward include from a subfolder's file", {"redis/connection.cpp": '#include "formats/readers/kong.cpp"\n'},
         False, 1, 'upward include: redis/connection.cpp:1: #include "formats/readers/kong.cpp"'),
        ("two-file cycle", {"base/errors.h": '#include "duration.h"\n'}, False, 1,
         "cycle 1 of 1: 2 components: base/duration, base/errors"),
        ("cycle through a .cpp", {"base/errors.cpp": '#include "base/duration.h"\n'}, False, 1,
         'base/errors.cpp:1: #include "base/duration.h"'),
        ("folder not in LAYERS", {"admin/audit.h": '#include "base/errors.h"\n'}, False, 1,
         "not in a layer: admin/audit.h (folder admin/ is not listed in LAYERS)"),
        ("file in core/ itself", {"stray.cpp": "\n"}, False, 1, "not in a layer: stray.cpp (core/ itself"),
        ("flat tree, components only", {"LAYERS": None, "stray.cpp": '#include "base/errors.h"\n'}, True, 0,
         "no cycle (folder checks skipped"),
        ("flat tree cycle, components only", {"LAYERS": None, "a.h": '#include "b.h"\n', "b.cpp": '#include "a.h"\n',
                                              "b.h": "\n"}, True, 1, "cycle 1 of 1: 2 components: a, b"),
        ("no LAYERS", {"LAYERS": None}, False, 2, "LAYERS: no such file"),
        ("bad LAYERS line", {"LAYERS": "base\nredis/x\n"}, False, 2, "is not one top folder name"),
    ]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="check-layers-") as tmp:
        for number, (name, changes, components_only, expected, text) in enumerate(cases):
            core = os.path.join(tmp, str(number), "core")
            tree = dict(clean)
            for rel, content in changes.items():
                if content is None:
                    tree.pop(rel, None)
                else:
                    tree[rel] = content
            write_tree(core, tree)
            cmd = [sys.executable, os.path.abspath(__file__), core]
            if components_only:
                cmd.append("--components-only")
            run = subprocess.run(cmd, capture_output=True, text=True)
            output = run.stdout + run.stderr
            if run.returncode == expected and text in output:
                print(f"PASS {name}")
            else:
                failures += 1
                print(f"FAIL {name}: exit {run.returncode} (expected {expected}), "
                      f"expected to see: {text}\n{output}")
    print(f"check-layers self-test: {len(cases) - failures} of {len(cases)} passed")
    return 1 if failures else 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(
        description="Checks that core/ has no include cycle between components and no include "
                    "from a folder to one later in core/LAYERS.")
    parser.add_argument("core", nargs="?", default=os.path.join(here, "..", "core"),
                        help="the core directory (default: core/ next to tools/)")
    parser.add_argument("--layers", help="the layers file (default: CORE/LAYERS)")
    parser.add_argument("--components-only", action="store_true",
                        help="check only for cycles between components: no folder checks, no LAYERS "
                             "(for the flat tree, before core/ is split into folders)")
    parser.add_argument("--selftest", action="store_true", help="check the check on synthetic trees")
    args = parser.parse_args()
    if args.selftest:
        return selftest()
    try:
        return report(os.path.normpath(args.core), args.layers, args.components_only)
    except UsageError as e:
        print(f"check-layers: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
