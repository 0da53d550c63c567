"""Every repository path that a comment, a doc or a script names exists.

    python3 tests/check_paths.py ROOT

Looks in the tracked sources, docs and scripts for names like
core/persist.c or docs/FORMAT.md (a top-level folder of the repository,
then a file name with an extension) and fails on each that is not there.
Names with a wildcard, and names in folders that installs fill (node_modules/),
are not checked: they exist only once an install script has run.  Nor may
a file cite the SPEC sections of a document the repository does not hold
("SPEC §N"): it cites docs/ instead.
"""
import re
import subprocess
import sys
from pathlib import Path

FOLDERS = ("storage", "index", "journal", "core", "algo", "query", "cli", "server", "python",
           "tests", "bench", "docs", "scripts", "include", "demo")
NAME = re.compile(r"(?<![\w./-])((?:%s)/[\w./-]*\w\.(?:c|h|md|sh|py|txt|cypher|toml|mjs|js|json))"
                  r"(?![\w*])" % "|".join(FOLDERS))
TEXT = (".c", ".h", ".md", ".sh", ".py", ".txt", ".cypher", ".mjs", ".toml")


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    files = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True,
                           text=True).stdout.split()
    if not files:   # not a git checkout: every file below root
        files = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()]
    missing, seen = [], 0
    for name in files:
        if not name.endswith(TEXT) and not name.endswith("CMakeLists.txt"):
            continue
        path = root / name
        if not path.is_file():
            continue
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if re.search(r"SPEC (§|section )\d", line) and name != "tests/check_paths.py":
                missing.append(f"{name}:{lineno}: cites a SPEC section; cite docs/ instead")
            for ref in NAME.findall(line):
                seen += 1
                if "node_modules/" not in ref and not (root / ref).exists():
                    missing.append(f"{name}:{lineno}: names {ref}, which does not exist")
    for m in missing:
        print(m)
    print(f"paths: {seen} names checked, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
