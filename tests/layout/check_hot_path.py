"""The per-call path of libsidecore lies where src/hot_path.ld puts it.

Usage: check_hot_path.py <src/hot_path.ld> <libsidecore.so>

Reads the script's groups (each comment "/* N. ... */" opens one) and the library's symbols
(nm) and sections (readelf), and checks that
  - the library has the script's output section, starting on a page;
  - every pattern of the script names at least one function, placed in that section: a function
    renamed, or no longer marked SIDECORE_HOT_PATH, falls out of the layout silently otherwise;
  - damaris_write + damaris_end_iteration (group 1) lie on the section's first 2 pages, and the
    zero-copy calls (group 2) on the next one at most: after a compute phase each page a call
    touches is a miss of its own (bench/run_cold_write.py names them).
"""
import fnmatch
import re
import subprocess
import sys

PAGE = 4096
# Pages from the section's start that the end of each group may reach.
PAGES_BY_END_OF_GROUP = {1: 2, 2: 3}


def fail(message):
    print(f"check_hot_path: {message}", file=sys.stderr)
    sys.exit(1)


def read_script(path):
    text = open(path, encoding="utf-8").read()
    section = re.search(r"^\s*(\.text\.[\w.]+)\s*:\s*ALIGN\((\d+)\)", text, re.M)
    if not section:
        fail(f"{path}: no output section '.text.<name> : ALIGN(n)'")
    groups = {}
    group = 0
    for line in text[section.end():].splitlines():
        opened = re.match(r"\s*/\*\s*(\d+)\.", line)
        if opened:
            group = int(opened.group(1))
        for pattern in re.findall(r"\*\(\s*\.text\.hot\.(\S+?)\s*\)", line):
            if group == 0:
                fail(f"{path}: pattern {pattern} before the first group comment")
            groups.setdefault(group, []).append(pattern)
    if 1 not in groups or 2 not in groups:
        fail(f"{path}: groups 1 and 2 not found (found {sorted(groups)})")
    return section.group(1), int(section.group(2)), groups


def library_section(library, name):
    out = subprocess.run(["readelf", "-SW", library], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 5 and fields[1] == name:
            return int(fields[3], 16), int(fields[5], 16)
    fail(f"{library} has no section {name}: was it linked with src/hot_path.ld?")
    return None


def functions(library):
    out = subprocess.run(["nm", "--defined-only", "-S", library], capture_output=True,
                         text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in "tTwW":
            found.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
    return found


def main():
    if len(sys.argv) != 3:
        fail("usage: check_hot_path.py <hot_path.ld> <libsidecore.so>")
    script, library = sys.argv[1], sys.argv[2]
    name, align, groups = read_script(script)
    start, size = library_section(library, name)
    if start % PAGE or align % PAGE:
        fail(f"{name} starts at {start:#x}, not on a page (ALIGN({align}))")
    symbols = functions(library)
    ends = {}
    for group, patterns in sorted(groups.items()):
        for pattern in patterns:
            matched = [(a, n, s) for a, n, s in symbols if fnmatch.fnmatchcase(s, pattern)]
            inside = [(a, n, s) for a, n, s in matched if start <= a < start + size]
            if not inside:
                where = (f"found outside it: {', '.join(s for _, _, s in matched[:3])}"
                         if matched else "no function has that name")
                fail(f"pattern {pattern} of group {group} names no function in {name} ({where});"
                     " update src/hot_path.ld")
            ends[group] = max([ends.get(group, start)] + [a + n for a, n, _ in inside])
    for group, pages in PAGES_BY_END_OF_GROUP.items():
        reached = (ends[group] - start + PAGE - 1) // PAGE
        print(f"group {group} ends {ends[group] - start} bytes into {name}: page {reached}")
        if reached > pages:
            fail(f"group {group} of {script} ends on page {reached} of {name}, more than {pages}:"
                 " the per-call path grew; move what it runs rarely out of its functions"
                 " (as client::throw_misplaced) or raise the bound knowingly")
    print(f"check_hot_path: {sum(len(p) for p in groups.values())} patterns, all placed")


if __name__ == "__main__":
    main()
