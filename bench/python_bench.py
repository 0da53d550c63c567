"""The Python package's figures (docs/PYTHON.md), side by side in one run.

    /usr/bin/python3 bench/python_bench.py [--cypher-lookup PATH] [--nodes N]
                                           [--queries Q] [--rows R]
                                           [--thread-rounds T] [--threads-only]

Run with the package importable (PYTHONPATH=python after
`sh scripts/test-python.sh`, or installed).  Measures:
  - a cached Cypher point lookup through Graph.query (parameter in, one row
    out as a tuple), against the same lookup through the C API
    (bench/cypher_lookup, when --cypher-lookup names it: the difference is
    the package's overhead per query) and through Python's sqlite3 module
    on the same data;
  - Result.to_pandas() cells/s on numeric columns and on a mixed result;
  - Graph.load_frames rows/s for nodes and for relationships;
  - four threads querying one view against the same queries run serially
    (the GIL is released while the engine works), in alternating rounds.
"""
import argparse
import random
import resource
import sqlite3
import subprocess
import threading
import time

import numpy as np
import pandas as pd

import strata

LOOKUP = "MATCH (n:Item {key: $k}) RETURN n.v"


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def timed_cpu(fn):
    """Wall and CPU seconds of fn() and the process's voluntary context
    switches meanwhile: on a machine shared with other work these show what
    the wall time cannot (a thread that sleeps on a contended lock switches
    out; one fighting over a cache line spends more CPU)."""
    sw0 = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return wall, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - sw0


def lookup_graph(n):
    g = strata.Graph()
    g.query(f"UNWIND range(0, {n - 1}) AS i CREATE (:Item {{key: i, v: 'value ' + toString(i)}})")
    g.query("CREATE CONSTRAINT FOR (n:Item) REQUIRE n.key IS UNIQUE")
    return g


def python_lookups(g, keys):
    for k in keys:
        for row in g.query(LOOKUP, k=k):
            pass


def sqlite_lookups(n, keys):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE items (key INTEGER PRIMARY KEY, v TEXT)")
    db.executemany("INSERT INTO items VALUES (?, ?)", ((i, f"value {i}") for i in range(n)))
    cur = db.cursor()
    t0 = time.perf_counter()
    for k in keys:
        cur.execute("SELECT v FROM items WHERE key = ?", (k,)).fetchone()
    return time.perf_counter() - t0


def c_lookup_us(path, n, queries):
    out = subprocess.run([path, "--nodes", str(n), "--queries", str(queries)],
                         capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("Cypher point lookup"))
    return float(line.split("mean ")[1].split(" us")[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cypher-lookup")
    ap.add_argument("--nodes", type=int, default=100000)
    ap.add_argument("--queries", type=int, default=200000)
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--thread-rounds", type=int, default=3)
    ap.add_argument("--threads-only", action="store_true",
                    help="only the threads figure (to compare two builds of the library)")
    a = ap.parse_args()
    rnd = random.Random(1)
    keys = [rnd.randrange(a.nodes) for _ in range(a.queries)]

    if not a.threads_only:
        single_thread_figures(a, keys)
    threads_figure(a)


def single_thread_figures(a, keys):
    g = lookup_graph(a.nodes)
    python_lookups(g, keys[:1000])
    secs, _ = timed(python_lookups, g, keys)
    py_us = secs / a.queries * 1e6
    print(f"point lookup, Graph.query:        {py_us:6.2f} us/query")
    if a.cypher_lookup:
        c_us = c_lookup_us(a.cypher_lookup, a.nodes, a.queries)
        print(f"point lookup, C strata_query:     {c_us:6.2f} us/query "
              f"(package overhead {py_us - c_us:.2f} us)")
    sq_us = sqlite_lookups(a.nodes, keys) / a.queries * 1e6
    print(f"point lookup, sqlite3 module:     {sq_us:6.2f} us/query")

    r = a.rows
    secs, df = timed(lambda: g.query(f"UNWIND range(1, {r}) AS i "
                                     "RETURN i, i * 0.5 AS f, i % 2 = 0 AS b").to_pandas())
    print(f"to_pandas, 3 numeric columns:     {3 * r / secs / 1e6:6.2f} M cells/s ({secs:.2f} s)")
    secs, df = timed(lambda: g.query(f"UNWIND range(1, {r}) AS i "
                                     "RETURN i, 'n' + toString(i % 100) AS s").to_pandas())
    print(f"to_pandas, int + string columns:  {2 * r / secs / 1e6:6.2f} M cells/s ({secs:.2f} s)")
    g.close()

    h = strata.Graph()
    nodes = pd.DataFrame({"id": np.arange(r, dtype=np.int64),
                          "age": np.arange(r, dtype=np.int64) % 90,
                          "score": np.linspace(0, 1, r)})
    rels = pd.DataFrame({"start": np.arange(r, dtype=np.int64),
                         "end": (np.arange(r, dtype=np.int64) * 7919) % r,
                         "w": np.ones(r)})
    secs, _ = timed(h.load_frames, {"Person": nodes})
    print(f"load_frames, nodes (3 columns):   {r / secs / 1e6:6.2f} M rows/s ({secs:.2f} s)")
    # relationships into the same id space: a second call has its own space
    secs, _ = timed(h.load_frames, {"P": nodes[["id"]]}, {("P", "R", "P"): rels})
    print(f"load_frames, nodes (id) + rels:   {2 * r / secs / 1e6:6.2f} M rows/s ({secs:.2f} s)")
    h.close()


def threads_figure(a):
    g = lookup_graph(a.nodes)
    view = g.snapshot()
    per_thread = 2000
    scan = "MATCH (n:Item) WHERE n.key % 97 = $m RETURN count(*)"

    def work(m):
        for i in range(per_thread // 100):
            list(view.query(scan, m=(m + i) % 97))

    def threaded():
        threads = [threading.Thread(target=work, args=(m,)) for m in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    # Serial and threaded rounds alternate, so a change in the machine's
    # load meets both; the median round of each is reported.
    serial, parallel = [], []
    for _ in range(a.thread_rounds):
        serial.append(timed_cpu(lambda: [work(m) for m in range(4)]))
        parallel.append(timed_cpu(threaded))
    (s, s_cpu, s_sw) = sorted(serial)[len(serial) // 2]
    (p, p_cpu, p_sw) = sorted(parallel)[len(parallel) // 2]
    print(f"4 threads on a view: {p:.2f} s (cpu {p_cpu:.2f} s, {p_sw} switches) against "
          f"{s:.2f} s (cpu {s_cpu:.2f} s, {s_sw} switches) serially ({s / p:.2f}x; median of "
          f"{a.thread_rounds} rounds, {4 * per_thread // 100} queries each)")
    view.release()
    g.close()

if __name__ == "__main__":
    main()
