"""Views read from many threads while one thread writes."""
import threading

import strata


def test_readers_on_views_while_a_writer_writes(g):
    g.query("UNWIND range(1, 2000) AS i CREATE (:Item {i: i, v: 0})")
    errors = []
    stop = threading.Event()

    def writer():
        for round_ in range(1, 60):
            g.query("MATCH (n:Item) SET n.v = $r", r=round_)
        stop.set()

    def reader():
        try:
            while not stop.is_set():
                with g.snapshot() as v:
                    (row,) = v.query("MATCH (n:Item) RETURN count(DISTINCT n.v), min(n.v), count(*)")
                    # every view is one committed state: one round's value on every item
                    if row[0] != 1 or row[2] != 2000:
                        errors.append(row)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    threads.append(threading.Thread(target=writer))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_one_view_shared_by_threads(g):
    g.query("UNWIND range(1, 500) AS i CREATE (:N {i: i})")
    v = g.snapshot()
    sums = []

    def read():
        for _ in range(20):
            (row,) = v.query("MATCH (n:N) RETURN sum(n.i)")
            sums.append(row[0])

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sums == [125250] * 80
    v.release()
