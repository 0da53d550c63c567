#!/usr/bin/python3
"""igraph on the relationships bench/algo wrote (--edges FILE), each
algorithm timed in a forked child so its peak resident size is its own.

usage: algo_igraph.py NODES EDGES_FILE [NAME,...]
betweenness (exact: this igraph has no sampled or source-subset form) and
closeness, both O(n m), run only when named.
Output lines: igraph ALGO 1 MS PEAK_MIB CPU_MS (igraph runs on one thread;
CPU_MS is the processor time, which other work on the machine does not
inflate as it does MS); a run
longer than ALGO_LIMIT_S seconds (120) is stopped and printed as >MS.
"""
import os
import sys
import time

import igraph
import numpy as np


LIMIT_S = float(os.environ.get("ALGO_LIMIT_S", "120"))


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return -1


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def main():
    n = int(sys.argv[1])
    raw = np.fromfile(sys.argv[2], dtype=np.uint32).reshape(-1, 3)
    ends = raw[:, :2].tolist()
    weights = raw[:, 2].view(np.float32).astype(float).tolist()
    t0 = time.monotonic()
    g = igraph.Graph(n=n, edges=ends, directed=True)
    g.es["w"] = weights
    u = g.as_undirected(mode="each")
    u.es["w"] = weights
    # the same multigraph with parallel relationships merged into counts
    # (self-loops dropped), for igraph's Louvain, which is far slower on
    # parallel edges
    simple = u.copy()
    simple.es["count"] = 1
    simple.simplify(combine_edges={"count": "sum", "w": "sum"})
    print(f"algo_igraph: graph built in {1000 * (time.monotonic() - t0):.0f} ms", file=sys.stderr)
    del raw, ends
    runs = {
        "degree": lambda: g.degree(mode="out"),
        "wcc": lambda: g.connected_components(mode="weak"),
        "scc": lambda: g.connected_components(mode="strong"),
        "pagerank": lambda: g.pagerank(),
        "bfs": lambda: g.bfs(0),
        "dijkstra": lambda: g.distances(source=0, weights="w"),
        "triangles": lambda: u.transitivity_local_undirected(),
        "kcore": lambda: u.coreness(),
        "labelPropagation": lambda: u.community_label_propagation(),
        "louvain": lambda: u.community_multilevel(),
        "louvain-merged": lambda: simple.community_multilevel(weights="count"),
        "leiden-merged": lambda: simple.community_leiden(objective_function="modularity",
                                                          weights="count", n_iterations=-1),
        "betweenness": lambda: g.betweenness(directed=True),
        "closeness": lambda: g.closeness(mode="out"),
    }
    quadratic = ("betweenness", "closeness")
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else [
        name for name in runs if name not in quadratic]
    for name in only:
        if name not in runs:
            continue
        pid = os.fork()
        if pid == 0:
            base = status_kib("VmRSS:")
            reset_peak()
            t, c = time.monotonic(), time.process_time()
            runs[name]()
            ms = 1000 * (time.monotonic() - t)
            cpu = 1000 * (time.process_time() - c)
            peak = status_kib("VmHWM:")
            print(f"igraph {name} 1 {ms:.1f} {(peak - base) / 1024:.1f} {cpu:.1f}", flush=True)
            os._exit(0)
        # a run past the limit is stopped and reported as such
        deadline = time.monotonic() + LIMIT_S
        while True:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                print(f"igraph {name} 1 >{LIMIT_S * 1000:.0f} - -", flush=True)
                break
            time.sleep(0.05)


main()
