"""Reference counting at the boundary: loops leave memory flat."""
import gc
import tracemalloc

import strata


def test_many_queries_leave_memory_flat():
    g = strata.Graph()
    g.query("UNWIND range(1, 100) AS i CREATE (:N {i: i, s: 'text ' + toString(i)})")

    def work(n):
        for i in range(n):
            for row in g.query("MATCH (n:N {i: $i}) RETURN n, n.s, [n.i, {k: n.s}]", i=i % 100 + 1):
                row[0].properties
            g.query("RETURN $p AS p", p={"a": [1, 2.5, "x", None]}).dicts()

    work(2000)   # warm caches
    gc.collect()
    graph_before = g.memory_stats()["graph_bytes"]
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    work(100000 // 2)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert after - before < 256 * 1024, (before, after)
    assert g.memory_stats()["graph_bytes"] <= graph_before + 64 * 1024
    g.close()
