#!/usr/bin/python3
"""The algo.* procedures checked against NetworkX and igraph.

Generates graphs of several shapes (random, power-law, disconnected, with
self-loops and parallel relationships), loads each into the strata program
through a generated Cypher script, runs every algorithm there (jsonl) and
in NetworkX / igraph, and compares: exact algorithms must agree exactly,
iterative ones within a tolerance, community detection by modularity
within a margin of igraph's.

usage: algo_reference.py STRATA
"""
import json
import math
import random
import subprocess
import sys

try:
    import igraph
    import networkx as nx
except ImportError as e:  # the packages are in scripts/install-deps.sh
    print(f"skipping: {e}")
    sys.exit(77)

STRATA = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


# ---- graphs: (name, n, [(s, t, w)]) ----

def random_graph(rng, n, m):
    return [(rng.randrange(n), rng.randrange(n), rng.randint(1, 9)) for _ in range(m)]


def power_law(rng, n):
    g = nx.barabasi_albert_graph(n, 2, seed=rng.randrange(1 << 30))
    edges = []
    for a, b in g.edges():
        if rng.random() < 0.5:
            a, b = b, a
        edges.append((a, b, rng.randint(1, 9)))
    return edges


def disconnected(rng, n):
    half = n // 2
    edges = [(rng.randrange(half), rng.randrange(half), rng.randint(1, 5)) for _ in range(n)]
    edges += [(half + rng.randrange(half - 5), half + rng.randrange(half - 5), rng.randint(1, 5))
              for _ in range(n)]
    return edges   # the last five nodes are isolated


def multi(rng, n):
    edges = random_graph(rng, n, 3 * n)
    edges += [(v, v, 2) for v in range(0, n, 7)]          # self-loops
    edges += [(s, t, w + 1) for s, t, w in edges[:n]]      # parallel relationships
    return edges


def graphs():
    rng = random.Random(20261201)
    return [("random", 60, random_graph(rng, 60, 240)),
            ("power-law", 80, power_law(rng, 80)),
            ("disconnected", 50, disconnected(rng, 50)),
            ("multi", 40, multi(rng, 40))]


# ---- strata ----

def run_strata(n, edges, queries):
    lines = [f"UNWIND range(0, {n - 1}) AS i CREATE (:N {{i: i}});"]
    for k in range(0, len(edges), 200):
        chunk = ", ".join(f"[{s}, {t}, {w}]" for s, t, w in edges[k:k + 200])
        lines.append(f"UNWIND [{chunk}] AS e MATCH (a:N {{i: e[0]}}), (b:N {{i: e[1]}}) "
                     "CREATE (a)-[:R {w: e[2]}]->(b);")
    setup = len(lines)
    lines += [q.rstrip(";") + ";" for q in queries]
    out = subprocess.run([STRATA, "--format", "jsonl"], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, timeout=300)
    results = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    for r in results[:setup]:
        assert "error" not in r, r
    return results[setup:]


def rows(result):
    assert "error" not in result, result
    return result["rows"]


def by_node(result):
    return {r[0]: r[1:] for r in rows(result)}


# ---- references ----

def ig_graph(n, edges, directed):
    g = igraph.Graph(n=n, edges=[(s, t) for s, t, _ in edges], directed=directed)
    g.es["w"] = [float(w) for _, _, w in edges]
    return g


def nx_multi(n, edges, directed):
    g = nx.MultiDiGraph() if directed else nx.MultiGraph()
    g.add_nodes_from(range(n))
    for s, t, w in edges:
        g.add_edge(s, t, w=w)
    return g


def nx_simple(n, edges):
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from((s, t) for s, t, _ in edges if s != t)
    return g


def nx_pagerank(g, **kw):
    """NetworkX's pure-Python PageRank (its default needs SciPy)."""
    from networkx.algorithms.link_analysis import pagerank_alg
    return pagerank_alg._pagerank_python(g, **kw)


def partition(labels):
    groups = {}
    for v, c in labels.items():
        groups.setdefault(c, set()).add(v)
    return sorted(sorted(s) for s in groups.values())


def close(a, b, tol):
    return abs(a - b) <= tol * max(1.0, abs(b))


def compare_graph(name, n, edges):
    print(f"{name}: {n} nodes, {len(edges)} relationships")
    rng = random.Random(n)
    src = rng.randrange(n)
    dst = rng.randrange(n)
    y = "YIELD node, {cols} RETURN node.i, {cols}"
    queries = [
        "CALL algo.degree() " + y.format(cols="score"),
        "CALL algo.degree({direction: 'IN'}) " + y.format(cols="score"),
        "CALL algo.degree({direction: 'BOTH', weight: 'w'}) " + y.format(cols="score"),
        "CALL algo.wcc() " + y.format(cols="component"),
        "CALL algo.scc() " + y.format(cols="component"),
        "CALL algo.pagerank({iterations: 500, tolerance: 1e-12}) " + y.format(cols="score"),
        "CALL algo.pagerank({iterations: 500, tolerance: 1e-12, weight: 'w', direction: 'BOTH'}) "
        + y.format(cols="score"),
        f"MATCH (s:N {{i: {src}}}) CALL algo.pagerank({{iterations: 500, tolerance: 1e-12, source: s}}) "
        + y.format(cols="score"),
        f"MATCH (s:N {{i: {src}}}) CALL algo.bfs({{source: s}}) " + y.format(cols="distance"),
        f"MATCH (s:N {{i: {src}}}) CALL algo.dijkstra({{source: s, weight: 'w'}}) "
        + y.format(cols="distance"),
        f"MATCH (s:N {{i: {src}}}), (t:N {{i: {dst}}}) "
        "CALL algo.dijkstra({source: s, target: t, weight: 'w'}) " + y.format(cols="distance"),
        "CALL algo.triangles() " + y.format(cols="triangles, coefficient"),
        "CALL algo.kcore() " + y.format(cols="core"),
        "CALL algo.betweenness() " + y.format(cols="score"),
        "CALL algo.betweenness({direction: 'BOTH'}) " + y.format(cols="score"),
        "CALL algo.closeness() " + y.format(cols="score"),
        "CALL algo.louvain({weight: 'w', seed: 7}) " + y.format(cols="community, modularity"),
        "CALL algo.labelPropagation({seed: 7}) " + y.format(cols="community"),
        "CALL algo.pagerank({threads: 1}) " + y.format(cols="score"),
        "CALL algo.pagerank({threads: 2}) " + y.format(cols="score"),
        "CALL algo.betweenness({threads: 1}) " + y.format(cols="score"),
        "CALL algo.betweenness({threads: 2}) " + y.format(cols="score"),
        "CALL algo.betweenness({sample: 10, seed: 3}) " + y.format(cols="score"),
        "CALL algo.leiden({weight: 'w', seed: 7}) " + y.format(cols="community, modularity"),
    ]
    res = run_strata(n, edges, queries)
    gd, gu = ig_graph(n, edges, True), ig_graph(n, edges, False)
    md, mu = nx_multi(n, edges, True), nx_multi(n, edges, False)

    # degree
    for k, mode, weighted in ((0, "out", False), (1, "in", False), (2, "all", True)):
        got = by_node(res[k])
        want = gd.strength(mode=mode, loops=True, weights="w" if weighted else None)
        check(all(got[v][0] == want[v] for v in range(n)), f"{name}: degree {mode}")

    # components: the same partitions; each named by its smallest id
    for k, mode in ((3, "weak"), (4, "strong")):
        got = {v: c[0] for v, c in by_node(res[k]).items()}
        want = gd.connected_components(mode=mode)
        check(partition(got) == sorted(sorted(c) for c in want), f"{name}: {mode} components")
        check(all(got[v] == min(s for s in range(n) if got[s] == got[v]) for v in range(n)),
              f"{name}: {mode} component named by its smallest node")

    # PageRank: NetworkX on the multigraph, and igraph
    got = by_node(res[5])
    want = nx_pagerank(md, tol=1e-13, max_iter=1000, weight=None)
    check(all(close(got[v][0], want[v], 1e-6) for v in range(n)), f"{name}: pagerank vs networkx")
    want_ig = gd.pagerank(directed=True)
    check(all(close(got[v][0], want_ig[v], 1e-6) for v in range(n)), f"{name}: pagerank vs igraph")
    # undirected: igraph's convention, a self-loop counts twice at its node
    # (NetworkX counts it once, so it agrees only on graphs without loops)
    got = by_node(res[6])
    want = gu.pagerank(directed=False, weights="w")
    check(all(close(got[v][0], want[v], 1e-6) for v in range(n)),
          f"{name}: weighted undirected pagerank vs igraph")
    if not any(s == t for s, t, _ in edges):
        want = nx_pagerank(mu, tol=1e-13, max_iter=1000, weight="w")
        check(all(close(got[v][0], want[v], 1e-6) for v in range(n)),
              f"{name}: weighted undirected pagerank vs networkx")
    got = by_node(res[7])
    want = nx_pagerank(md, tol=1e-13, max_iter=1000, weight=None, personalization={src: 1})
    check(all(close(got[v][0], want[v], 1e-6) for v in range(n)), f"{name}: personalised pagerank")

    # BFS and Dijkstra
    got = {v: d[0] for v, d in by_node(res[8]).items()}
    check(got == nx.single_source_shortest_path_length(md, src), f"{name}: bfs")
    got = {v: d[0] for v, d in by_node(res[9]).items()}
    want = nx.single_source_dijkstra_path_length(md, src, weight="w")
    check(got.keys() == want.keys() and all(close(got[v], want[v], 1e-12) for v in want),
          f"{name}: dijkstra")
    path = rows(res[10])
    if dst in want:
        check(path and path[0][0] == src and path[-1][0] == dst and
              close(path[-1][1], want[dst], 1e-12), f"{name}: dijkstra path ends and length")
        for (a, da), (b, db) in zip(path, path[1:]):
            step = min((w for s, t, w in edges if s == a and t == b), default=None)
            check(step is not None and close(db - da, step, 1e-12),
                  f"{name}: dijkstra path step {a}->{b}")
    else:
        check(path == [], f"{name}: dijkstra to an unreachable target gives no rows")

    # triangles, clustering, k-core on the simple undirected graph
    simple = nx_simple(n, edges)
    got = by_node(res[11])
    tri, cc = nx.triangles(simple), nx.clustering(simple)
    check(all(got[v][0] == tri[v] for v in range(n)), f"{name}: triangles")
    check(all(close(got[v][1], cc[v], 1e-12) for v in range(n)), f"{name}: clustering")
    got = by_node(res[12])
    core = nx.core_number(simple)
    check(all(got[v][0] == core[v] for v in range(n)), f"{name}: k-core")

    # betweenness and closeness against igraph (multigraph path counts)
    got = by_node(res[13])
    want = gd.betweenness(directed=True)
    check(all(close(got[v][0], want[v], 1e-9) for v in range(n)), f"{name}: betweenness")
    got = by_node(res[14])
    want = gu.betweenness(directed=False)
    check(all(close(got[v][0], want[v], 1e-9) for v in range(n)), f"{name}: undirected betweenness")
    got = by_node(res[15])
    want = gd.closeness(mode="out")
    check(all(close(got[v][0], 0.0 if math.isnan(want[v]) else want[v], 1e-12) for v in range(n)),
          f"{name}: closeness")

    # communities: modularity as igraph computes it, near igraph's own
    got = by_node(res[16])
    membership = [got[v][0] for v in range(n)]
    q_strata = gu.modularity(membership, weights="w")
    check(close(got[0][1], q_strata, 1e-9), f"{name}: louvain reports its modularity")
    q_igraph = gu.community_multilevel(weights="w").modularity
    print(f"  louvain modularity {q_strata:.4f}, igraph {q_igraph:.4f}")
    check(q_strata >= q_igraph - 0.03, f"{name}: louvain modularity {q_strata:.4f} "
          f"vs igraph {q_igraph:.4f}")
    got = by_node(res[17])
    labels = [got[v][0] for v in range(n)]
    simple_mu = nx_multi(n, edges, False)
    stable = True
    for v in range(n):
        weight = {}
        for u in simple_mu.neighbors(v):
            if u != v:
                weight[labels[u]] = weight.get(labels[u], 0) + simple_mu.number_of_edges(v, u)
        if weight and weight.get(labels[v], 0) < max(weight.values()):
            stable = False
    check(stable, f"{name}: label propagation ends with every node in a most frequent label")
    q_lpa = gu.modularity(labels)
    q_ig_lpa = max(gu.community_label_propagation().modularity for _ in range(5))
    check(q_lpa >= q_ig_lpa - 0.15, f"{name}: label propagation modularity {q_lpa:.4f} "
          f"vs igraph {q_ig_lpa:.4f}")

    got = by_node(res[23])
    membership = [got[v][0] for v in range(n)]
    q_strata = gu.modularity(membership, weights="w")
    check(close(got[0][1], q_strata, 1e-9), f"{name}: leiden reports its modularity")
    q_igraph = max(gu.community_leiden(objective_function="modularity", weights="w",
                                       n_iterations=-1).modularity for _ in range(3))
    print(f"  leiden modularity {q_strata:.4f}, igraph {q_igraph:.4f}")
    check(q_strata >= q_igraph - 0.03, f"{name}: leiden modularity {q_strata:.4f} "
          f"vs igraph {q_igraph:.4f}")
    for c in set(membership):
        members = [v for v in range(n) if membership[v] == c]
        check(gu.induced_subgraph(members).is_connected(), f"{name}: leiden community {c} connected")

    # threads: the same bits (PageRank), the same within rounding (betweenness)
    check(rows(res[18]) == rows(res[19]), f"{name}: pagerank on 1 and 2 threads")
    a, b = by_node(res[20]), by_node(res[21])
    check(all(close(a[v][0], b[v][0], 1e-12) for v in range(n)),
          f"{name}: betweenness on 1 and 2 threads")
    sampled = by_node(res[22])
    check(all(sampled[v][0] >= 0 for v in range(n)), f"{name}: sampled betweenness")


def drawn_sources(n, k, seed):
    """The sources algo.betweenness draws for `sample: k, seed: seed` on n
    nodes: a partial Fisher-Yates shuffle of 0..n-1 driven by splitmix64
    (algo/centrality.c, algo/algo.h).  The comparison below fails if this
    ever names other sources than strata drew."""
    mask = (1 << 64) - 1
    state = seed & mask
    order = list(range(n))
    for i in range(k):
        state = (state + 0x9e3779b97f4a7c15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & mask
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & mask
        z ^= z >> 31
        r = i + z % (n - i)
        order[i], order[r] = order[r], order[i]
    return order[:k]


def sampled_betweenness():
    """Sampled betweenness is the betweenness counted from the drawn
    sources (NetworkX's betweenness_centrality_subset, every node a
    target) scaled by n / sample, within 1e-9.  The graph is simple in
    both directions (no self-loop, no pair joined twice either way):
    NetworkX counts a neighbour once however many relationships join
    them, strata and igraph each relationship."""
    rng = random.Random(20261202)
    n = 300
    pairs = set()
    while len(pairs) < 1500:
        a, b = rng.randrange(n), rng.randrange(n)
        if a != b:
            pairs.add((min(a, b), max(a, b)))
    edges = [(a, b, 1) if rng.random() < 0.5 else (b, a, 1) for a, b in sorted(pairs)]
    # an isolated tail and a chain, so some sources reach little
    edges = [(a, b, w) for a, b, w in edges if a < n - 20 and b < n - 20]
    edges += [(v, v + 1, 1) for v in range(n - 20, n - 10)]
    cases = [(10, 3), (25, -5), (1, 7), (64, 12345)]
    queries = []
    for direction in ("OUT", "BOTH"):
        for k, seed in cases:
            queries.append(f"CALL algo.betweenness({{sample: {k}, seed: {seed}, "
                           f"direction: '{direction}'}}) YIELD node, score RETURN node.i, score")
    res = run_strata(n, edges, queries)
    dg = nx.DiGraph()
    dg.add_nodes_from(range(n))
    dg.add_edges_from((a, b) for a, b, _ in edges)
    ug = dg.to_undirected()
    at = 0
    for direction, g in (("OUT", dg), ("BOTH", ug)):
        for k, seed in cases:
            got = by_node(res[at])
            at += 1
            sources = drawn_sources(n, k, seed)
            want = nx.betweenness_centrality_subset(g, sources, list(range(n)), normalized=False)
            scale = n / k
            bad = [v for v in range(n) if not close(got[v][0], want[v] * scale, 1e-9)]
            check(not bad, f"sampled betweenness {direction} sample {k} seed {seed}: "
                  f"{len(bad)} nodes differ from the subset betweenness of the drawn sources")
            check(any(want[v] > 0 for v in range(n)),
                  f"sampled betweenness {direction} sample {k} seed {seed}: a case with paths")


def errors():
    res = run_strata(3, [(0, 1, -2), (1, 2, 1)], [
        "MATCH (s:N {i: 0}) CALL algo.dijkstra({source: s, weight: 'w'}) YIELD node RETURN node",
        "CALL algo.pagerank({dampng: 0.5})",
        "CALL algo.pagerank({iterations: 'many'})",
        "CALL algo.bfs({source: 99})",
        "CALL algo.wcc({direction: 'SIDEWAYS'})",
        "CALL algo.kcore.write({})",
        "CALL algo.wcc.write({property: 'c'}) YIELD nodesWritten RETURN nodesWritten",
        "MATCH (n:N) RETURN n.i, n.c ORDER BY n.i",
    ])
    codes = [r.get("error", {}).get("code") for r in res]
    check(codes[:6] == ["ArgumentError", "ArgumentError", "ArgumentError", "EntityNotFound",
                        "ArgumentError", "ArgumentError"], f"error codes {codes}")
    check("negative" in res[0]["error"]["message"], "negative weight named")
    check("dampng" in res[1]["error"]["message"], "unknown key named")
    check(rows(res[6]) == [[3]], "write yields its count")
    check(rows(res[7]) == [[0, 0], [1, 0], [2, 0]], "write wrote the components")


def doc_examples():
    """Every example query in docs/ALGORITHMS.md runs without an error."""
    import os
    doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "ALGORITHMS.md")
    with open(doc) as f:
        examples = [l.strip() for l in f if l.startswith("    CALL") or l.startswith("    MATCH")]
    examples = [e for e in examples if "algo.NAME" not in e]
    setup = ("CREATE (:Person {name: 'Ann'})-[:KNOWS]->(:Person {name: 'Bob'}), "
             "(:Station {name: 'Central'}), (:City {name: 'A'})-[:ROAD {km: 3}]->(:City {name: 'B'})")
    out = subprocess.run([STRATA, "--format", "jsonl"],
                         input="\n".join([setup + ";"] + [e + ";" for e in examples]) + "\n",
                         capture_output=True, text=True, timeout=60)
    results = [json.loads(l) for l in out.stdout.splitlines() if l.strip()][1:]
    check(len(results) == len(examples) and len(examples) >= 12,
          f"doc examples: {len(results)} results for {len(examples)} examples")
    for e, r in zip(examples, results):
        check("error" not in r, f"doc example {e}: {r.get('error')}")


for name, n, edges in graphs():
    compare_graph(name, n, edges)
sampled_betweenness()
errors()
doc_examples()
if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("all algorithms agree with NetworkX and igraph")
