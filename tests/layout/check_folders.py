"""Checks the folder map of src/ (docs/design.md, "Where the code lives").

1. A folder of src/ includes only folders listed before it in src/CMakeLists.txt: the order of
   add_subdirectory is the order of the layers, so no include cycle can form between them.
2. The transports' folders (src/transports/<mode>/) form no cycle among themselves.
3. The client includes only transports/engine.hpp of the transports: never a server side.

Prints every violation (file, line, include) and exits 1 if there is one.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2])
src = root / "src"
order = re.findall(r"^add_subdirectory\((\w+)\)", (src / "CMakeLists.txt").read_text(), re.M)
rank = {folder: i for i, folder in enumerate(order)}
include = re.compile(r'^\s*#\s*include\s+"([\w/]+)\.h(?:pp)?"', re.M)
problems = []
edges = {}  # transport folder -> transport folders it includes


def folder_of(path):
    parts = path.split("/")
    return parts[0], (parts[1] if parts[0] == "transports" and len(parts) > 2 else None)


for path in sorted(src.rglob("*")):
    if path.suffix not in (".hpp", ".cpp", ".h", ".c"):
        continue
    relative = path.relative_to(src).as_posix()
    top, sub = folder_of(relative)
    if top not in rank:
        problems.append(f"src/{relative}: folder '{top}' is not listed in src/CMakeLists.txt")
        continue
    text = path.read_text()
    for match in include.finditer(text):
        target = match.group(1)
        if "/" not in target:
            continue  # a public header (Damaris.h, sidecore/...) or a file beside it
        line = text.count("\n", 0, match.start()) + 1
        where = f"src/{relative}:{line}: includes \"{target}\""
        t_top, t_sub = folder_of(target + ".hpp")
        if t_top not in rank:
            continue  # include/sidecore/... and other trees
        if rank[t_top] > rank[top]:
            problems.append(f"{where}: '{top}' comes before '{t_top}' in src/CMakeLists.txt, "
                            "so it may not include it")
        if top == "client" and t_top == "transports" and target != "transports/engine":
            problems.append(f"{where}: the client knows its engine only (transports/engine.hpp)")
        if sub and t_sub and sub != t_sub:
            edges.setdefault(sub, set()).add(t_sub)


def cycle_from(node, seen, stack):
    for nxt in sorted(edges.get(node, ())):
        if nxt in stack:
            return stack[stack.index(nxt):] + [nxt]
        if nxt not in seen:
            seen.add(nxt)
            found = cycle_from(nxt, seen, stack + [nxt])
            if found:
                return found
    return None


seen = set()
for start in sorted(edges):
    found = cycle_from(start, seen, [start])
    if found:
        problems.append("transports: include cycle " + " -> ".join(found))
        break

for p in problems:
    print(p)
checked = sum(1 for p in src.rglob("*") if p.suffix in (".hpp", ".cpp", ".h", ".c"))
print(f"{len(problems)} problem(s) in {checked} files of src/ ({len(order)} folders: "
      + ", ".join(order) + ")")
sys.exit(1 if problems else 0)
