#!/usr/bin/env python3
"""The core-speed rows of docs/BENCHMARKS.md, side by side in one sitting.

    python3 bench/core_rows.py BUILD [BUILD...] [--rounds R] [--build-graph]

Each BUILD is a benchmark build directory (cmake -DCMAKE_BUILD_TYPE=Release
-DSTRATA_TESTS=OFF; targets fork_cost readers cypher_lookup save_load
hub_write strata, and build_graph for --build-graph).  Every round runs
every workload once per build, the builds alternating workload by
workload, so that a shared machine's load falls on all of them alike.
The table gives, per row and build, the spread (lowest–highest) of the
rounds' figures, next to its target (docs/BENCHMARKS.md, "Core rows side by side").

The runs are long on purpose (1M-node graphs); about 4 minutes per round
and build, plus about 2 minutes each for --build-graph (10M relationships).
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out.stdout + out.stderr


def json_lines(text):
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            yield json.loads(line)


def fork_cost(build):
    """The W1 medians (µs) on a 1M-node graph."""
    text = run([f"{build}/bench/fork_cost", "--nodes", "1000000", "--rounds", "1000", "--json"])
    want = {
        ("plain", "SET, first write under a held view"): "plain SET, held view (µs)",
        ("plain", "SET, nothing held"): "plain SET, nothing held (µs)",
        ("indexed", "SET, first write under a held view"): "indexed SET, held view (µs)",
        ("indexed", "node detach-delete under a held view"): "indexed detach-delete, held view (µs)",
    }
    rows = {}
    for r in json_lines(text):
        name = want.get((r.get("shape"), r.get("case")))
        if name:
            rows[name] = r["median_us"]
    return rows


# readers' loops: a value handle per key, the key without a handle and the
# property borrowed, and 64 keys per call (the last two where the build
# has them)
VARIANTS = {"strata_full": "", "strata_direct": " (direct)", "strata_batch": " (batched)"}


def readers(build):
    """C API point lookups (M/s): 10,000 records, and a 1M-node graph."""
    rows = {}
    for nodes, loop, where in (("10000", "2000000", "10k records"),
                               ("1000000", "500000", "1M nodes, random keys")):
        text = run([f"{build}/bench/readers", "--lookups-only", "--nodes", nodes, "--loop", loop,
                    "--json"])
        for r in json_lines(text):
            variant = VARIANTS.get(r.get("variant"))
            if variant is not None:
                rows[f"C API lookup{variant}, {where} (M/s)"] = r["lookups_per_s"] / 1e6
    return rows


def cypher_lookup(build):
    """Cypher point lookup, prepared on a view, and SQLite's prepared
    SELECT in the same run (mean µs)."""
    text = run([f"{build}/bench/cypher_lookup", "--compare"])
    rows = {}
    m = re.search(r"Cypher prepared on a view[^:]*: mean ([0-9.]+) us", text)
    if m:
        rows["Cypher lookup prepared on a view, 100k (µs)"] = float(m.group(1))
    m = re.search(r"SQLite prepared SELECT[^:]*: mean ([0-9.]+) us", text)
    if m:
        rows["SQLite prepared SELECT, same run (µs)"] = float(m.group(1))
    return rows


def save_load(build):
    """A saved 1M / 5M graph: the load's CPU time over the save's."""
    text = run([f"{build}/bench/save_load", "--nodes", "1000000", "--rels", "5000000",
                "--rounds", "3", "--json"])
    r = list(json_lines(text))[-1]
    return {
        "save, 1M / 5M (CPU s)": r["save_cpu_s"],
        "load, 1M / 5M (CPU s)": r["load_cpu_s"],
        "load / save (CPU)": r["load_cpu_s"] / r["save_cpu_s"],
    }


def import_rows(build):
    """strata import of 1M nodes + 5M relationships (M rows per CPU s)."""
    text = run(["sh", f"{HERE}/import.sh", f"{build}/strata", "1000000", "5000000"])
    m = re.search(r"^rows per CPU second ([0-9]+)", text, re.M)
    return {"import 1M + 5M (M rows per CPU s)": int(m.group(1)) / 1e6} if m else {}


def hub_write(build):
    """The slowest kind of hub write at degree 1,000,000 (its median, µs)."""
    text = run([f"{build}/bench/hub_write", "--degrees", "1000000"])
    medians = [float(m.group(1)) for m in
               re.finditer(r"^.*view held\s+1000000\s+([0-9.]+)", text, re.M)]
    return {"slowest hub write at degree 1M, held view (median µs)": max(medians)} if medians else {}


def build_graph(build):
    text = run([f"{build}/bench/build_graph"])
    m = re.search(r"per relationship[^:]*: ([0-9.]+) B resident", text)
    return {"resident bytes per relationship, 1M / 10M": float(m.group(1))} if m else {}


TARGETS = {
    "plain SET, held view (µs)": "≤ 1",
    "plain SET, nothing held (µs)": "≤ 0.5",
    "indexed SET, held view (µs)": "≤ 3",
    "indexed detach-delete, held view (µs)": "≤ 10",
    "C API lookup, 10k records (M/s)": "≥ 10",
    "C API lookup (direct), 10k records (M/s)": "≥ 10",
    "C API lookup (batched), 10k records (M/s)": "≥ 10",
    "C API lookup, 1M nodes, random keys (M/s)": "≥ 2.5",
    "C API lookup (direct), 1M nodes, random keys (M/s)": "≥ 2.5",
    "C API lookup (batched), 1M nodes, random keys (M/s)": "≥ 2.5",
    "Cypher lookup prepared on a view, 100k (µs)": "≤ SQLite's",
    "load / save (CPU)": "≤ 2",
    "import 1M + 5M (M rows per CPU s)": "≥ 2",
    "slowest hub write at degree 1M, held view (median µs)": "≤ 10",
    "resident bytes per relationship, 1M / 10M": "≤ 48",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--build-graph", action="store_true")
    args = ap.parse_args()
    workloads = [fork_cost, readers, cypher_lookup, save_load, import_rows, hub_write]
    if args.build_graph:
        workloads.append(build_graph)
    seen = {b: {} for b in args.builds}
    order = []
    for rnd in range(args.rounds):
        for work in workloads:
            for b in args.builds:
                print(f"round {rnd + 1}: {work.__name__} on {b}", file=sys.stderr, flush=True)
                for name, v in work(b).items():
                    if name not in order:
                        order.append(name)
                    seen[b].setdefault(name, []).append(v)
    print("| row | " + " | ".join(args.builds) + " | target |")
    print("|---|" + "---|" * len(args.builds) + "---|")
    for name in order:
        cells = []
        for b in args.builds:
            vs = sorted(seen[b].get(name, []))
            cells.append("" if not vs else f"{vs[0]:.3g}" if vs[0] == vs[-1]
                         else f"{vs[0]:.3g}–{vs[-1]:.3g}")
        print(f"| {name} | " + " | ".join(cells) + f" | {TARGETS.get(name, '')} |")


if __name__ == "__main__":
    main()
