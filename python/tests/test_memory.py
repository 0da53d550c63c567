"""Reference counting at the boundary: 100,000 queries and their result
conversions leave Python's memory and the C heap (strata's allocations)
flat."""
import ctypes
import gc
import os
import tracemalloc

import pytest

import strata


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


def c_heap_bytes():
    """Bytes the C library's malloc has handed out and not taken back (the
    engine allocates through it in this package); None where that cannot
    be read (no mallinfo2, or a sanitizer's allocator in its place)."""
    if "asan" in os.environ.get("LD_PRELOAD", ""):
        return None
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallinfo2"):
        return None
    libc.mallinfo2.restype = _Mallinfo2
    m = libc.mallinfo2()
    return m.uordblks + m.hblkhd


def test_many_queries_leave_memory_flat():
    g = strata.Graph()
    g.query("UNWIND range(1, 100) AS i CREATE (:N {i: i, s: 'text ' + toString(i)})"
            "-[:R {w: i * 0.5}]->(:M {i: i})")
    view = g.snapshot()
    queries = 0

    def work(n):
        nonlocal queries
        for i in range(n):
            k = i % 100 + 1
            # a node, a string and nested values, with the node's properties read
            for row in g.query("MATCH (n:N {i: $i}) RETURN n, n.s, [n.i, {k: n.s}]", i=k):
                row[0].properties
                row[0].labels
            # parameters in (a map of a list) and a result as dicts
            g.query("RETURN $p AS p", p={"a": [1, 2.5, "x", None]}).dicts()
            # a view query (its own clone and cancel handle) with a path
            for (p,) in view.query("MATCH p = (:N {i: $i})-[:R]->() RETURN p", i=k):
                p.relationships[0]["w"]
            queries += 3
            if i % 500 == 0:
                g.query("MATCH (n:N) RETURN n.i, n.s").to_pandas()
                queries += 1

    work(2000)   # warm the caches (plans, the module's types)
    gc.collect()
    graph_before = g.memory_stats()["graph_bytes"]
    heap_before = c_heap_bytes()
    tracemalloc.start()
    python_before = tracemalloc.get_traced_memory()[0]
    queries = 0
    work(33334)
    gc.collect()
    python_after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    heap_after = c_heap_bytes()
    assert queries >= 100000
    # a leak of one small object per query would be megabytes
    assert python_after - python_before < 256 * 1024, (python_before, python_after)
    if heap_before is not None:
        assert heap_after - heap_before < 256 * 1024, (heap_before, heap_after)
    assert g.memory_stats()["graph_bytes"] <= graph_before + 64 * 1024
    view.release()
    g.close()


def test_c_heap_probe_sees_a_leak():
    """The probe above is not blind: 10,000 small C allocations show."""
    before = c_heap_bytes()
    if before is None:
        pytest.skip("no mallinfo2 here")
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(16) for _ in range(10000)]
    grown = c_heap_bytes() - before
    for b in blocks:
        libc.free(b)
    assert grown >= 160000
