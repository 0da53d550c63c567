"""strata.open: a graph on a path whose commits go to a write-ahead log."""
import glob
import os
import random
import signal
import subprocess
import sys
import warnings

import pytest

import strata

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(strata.__file__)))


def count(g, label="N"):
    (row,) = g.query(f"MATCH (n:{label}) RETURN count(n)")
    return row[0]


def segments(path):
    return sorted(glob.glob(os.path.join(path, "wal-*.log")))


@pytest.mark.parametrize("sync", ["full", "normal", "off"])
def test_commit_close_reopen(tmp_path, sync):
    path = tmp_path / "db"
    g = strata.open(path, sync=sync)
    assert g.durable and g.recovery["records_replayed"] == 0
    g.query("UNWIND range(1, 10) AS i CREATE (:N {i: i})")
    with g.transaction():
        g.query("CREATE (:N {i: 11})")
        g.query("MATCH (n:N {i: 1}) SET n.first = true")
    stats = g.log_stats()
    assert stats["last_seq"] == 2 and stats["snapshot_seq"] == 0 and stats["log_bytes"] > 0
    g.close()
    assert g.closed and not g.durable

    g = strata.open(str(path), sync=sync)
    assert g.recovery["records_replayed"] == 2 and g.recovery["last_seq"] == 2
    assert count(g) == 11
    assert g.query("MATCH (n:N {i: 1}) RETURN n.first").dicts() == [{"n.first": True}]
    g.close()


def test_context_manager_closes_and_unlocks(tmp_path):
    path = tmp_path / "db"
    with strata.open(path) as g:
        g.query("CREATE (:N {i: 1})")
    assert g.closed
    with strata.open(path) as g:   # the lock went with the close
        assert count(g) == 1


def test_checkpoint_then_reopen(tmp_path):
    path = tmp_path / "db"
    setup = ["UNWIND range(1, 100) AS i CREATE (:N {i: i})",
             "MATCH (n:N) WHERE n.i % 10 = 3 DETACH DELETE n"]
    with strata.Graph() as memory:
        for q in setup:
            memory.query(q)
        (expected_id,) = next(iter(memory.query("CREATE (n:N {i: 1000}) RETURN id(n)")))
    with strata.open(path) as g:
        for q in setup:
            g.query(q)
        g.checkpoint()
        stats = g.log_stats()
        assert stats["snapshot_seq"] == stats["last_seq"] == 2 and stats["log_bytes"] == 0
        g.query("CREATE (:N {i: 1000})")
    assert len(glob.glob(os.path.join(path, "snapshot-*"))) == 1
    with strata.open(path) as g:
        assert g.recovery["snapshot_seq"] == 2 and g.recovery["records_replayed"] == 1
        assert count(g) == 91
        # ids come back exactly: the node created after the checkpoint took
        # the slot it takes in memory
        (row,) = g.query("MATCH (n:N {i: 1000}) RETURN id(n)")
        assert row[0] == expected_id


def test_checkpoint_refused_inside_a_transaction(tmp_path):
    with strata.open(tmp_path / "db") as g:
        with g.transaction():
            g.query("CREATE (:N)")
            with pytest.raises(strata.ArgumentError, match="transaction is open"):
                g.checkpoint()
        assert count(g) == 1


def test_second_open_is_refused_by_the_lock(tmp_path):
    path = tmp_path / "db"
    g = strata.open(path)
    g.query("CREATE (:N {i: 1})")
    with pytest.raises(strata.StrataIOError, match="is in use by another process") as info:
        strata.open(path)
    assert str(path) in str(info.value)
    # another process meets the same lock
    child = subprocess.run(
        [sys.executable, "-c",
         "import sys, strata\n"
         "try:\n"
         "    strata.open(sys.argv[1])\n"
         "except strata.StrataIOError as e:\n"
         "    print(type(e).__name__, e.message)\n",
         str(path)],
        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=PACKAGE_ROOT),
        timeout=60)
    assert child.returncode == 0, child.stderr
    assert child.stdout.startswith("StrataIOError") and "in use by another process" in child.stdout
    g.query("CREATE (:N {i: 2})")   # the holder goes on
    g.close()
    with strata.open(path) as g:
        assert count(g) == 2


# A child that commits forever, printing each commit's number once the call
# has returned (acknowledged).  Each commit is a transaction of two writes.
CHILD = """
import sys, strata
g = strata.open(sys.argv[1], sync=sys.argv[2])
g.query("MERGE (:Counter)")
(start,) = next(iter(g.query("MATCH (c:Counter) RETURN coalesce(c.n, 0)")))
i = start
while True:
    i += 1
    with g.transaction():
        g.query("CREATE (:N {i: $i, pad: $pad})", i=i, pad="x" * (i % 200))
        g.query("MATCH (c:Counter) SET c.n = $i", i=i)
    print(i, flush=True)
"""


@pytest.mark.parametrize("sync", ["full", "normal"])
def test_acknowledged_commits_survive_sigkill(tmp_path, sync):
    path = str(tmp_path / "db")
    rnd = random.Random(12)
    acknowledged = 0
    for cycle in range(4):
        child = subprocess.Popen([sys.executable, "-c", CHILD, path, sync],
                                 stdout=subprocess.PIPE, text=True,
                                 env=dict(os.environ, PYTHONPATH=PACKAGE_ROOT))
        try:
            target = acknowledged + rnd.randrange(20, 120)
            while acknowledged < target:
                line = child.stdout.readline()
                assert line, f"the child ended early (cycle {cycle})"
                acknowledged = int(line)
            child.send_signal(signal.SIGKILL)   # in the middle of later commits
        finally:
            child.kill()
            child.wait()
            child.stdout.close()
        assert child.returncode == -signal.SIGKILL
        with strata.open(path) as g:
            (n,) = next(iter(g.query("MATCH (c:Counter) RETURN c.n")))
            assert n >= acknowledged            # nothing acknowledged lost
            (row,) = g.query("MATCH (x:N) RETURN count(x), min(x.i), max(x.i), "
                             "count(DISTINCT x.i)")
            assert row == (n, 1, n, n)          # nothing partial
            acknowledged = n


def write_records(path, n):
    """n records, each a statement creating one node."""
    with strata.open(path) as g:
        for i in range(n):
            g.query("CREATE (:N {i: $i})", i=i)


def record_offsets(data):
    """Byte offsets of the records of a segment, and where the last ends
    (docs/FORMAT.md: 24-byte record headers; the segment is preallocated,
    zeros after its records)."""
    offsets, off = [], 24
    while off + 24 <= len(data) and any(data[off:off + 24]):
        offsets.append(off)
        off += 24 + int.from_bytes(data[off:off + 4], "little")
    return offsets, off


def test_damaged_log_refuses_unless_truncated(tmp_path):
    path = tmp_path / "db"
    write_records(path, 10)
    (seg,) = segments(path)
    data = bytearray(open(seg, "rb").read())
    offsets, end = record_offsets(data)
    assert len(offsets) == 10
    data[offsets[6] + 24] ^= 0x40          # the body of the 7th record
    with open(seg, "wb") as f:
        f.write(data)

    with pytest.raises(strata.StrataIOError) as info:
        strata.open(path)
    e = info.value
    assert e.code == "CorruptFile"
    assert os.path.basename(seg) in e.message and str(offsets[6]) in e.message
    assert "truncate_corrupt=True" in e.message

    with pytest.warns(RuntimeWarning):
        g = strata.open(path, truncate_corrupt=True)
    assert g.recovery["truncated_bytes"] == end - offsets[6]
    assert g.recovery["last_seq"] == 6 and g.recovery["message"]
    assert count(g) == 6                   # the records before the damage
    g.query("CREATE (:N {i: 100})")        # and it takes writes again
    g.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with strata.open(path) as g:
            assert count(g) == 7


def test_torn_tail_is_cut_and_reported(tmp_path):
    path = tmp_path / "db"
    write_records(path, 5)
    (seg,) = segments(path)
    _, end = record_offsets(open(seg, "rb").read())
    with open(seg, "r+b") as f:
        f.truncate(end - 3)                # the last record cut short
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # a torn tail was never acknowledged: no warning
        g = strata.open(path)
    assert g.recovery["torn_bytes"] > 0 and g.recovery["last_seq"] == 4
    assert g.recovery["message"]
    assert count(g) == 4
    g.close()


def test_bad_arguments_and_graphs_without_a_log(tmp_path):
    with pytest.raises(ValueError, match="sync must be 'full', 'normal' or 'off'"):
        strata.open(tmp_path / "a", sync="fast")
    with pytest.raises(TypeError):
        strata.open(tmp_path / "a", checkpoint_bytes="big")
    with pytest.raises(ValueError, match="checkpoint_bytes"):
        strata.open(tmp_path / "a", checkpoint_bytes=-1)
    with pytest.raises(TypeError):
        strata.open(None)
    (tmp_path / "file").write_text("not a database")
    with pytest.raises(strata.StrataIOError, match="not a database directory"):
        strata.open(tmp_path / "file")

    g = strata.Graph()
    assert not g.durable and g.recovery is None
    with pytest.raises(strata.ArgumentError, match="no log"):
        g.log_stats()
    with pytest.raises(strata.ArgumentError, match="no path"):
        g.checkpoint()
    g.close()

    d = strata.open(tmp_path / "b")
    d.close()
    d.close()                              # closing twice is fine
    with pytest.raises(strata.ArgumentError, match="closed"):
        d.checkpoint()
    with pytest.raises(strata.ArgumentError, match="closed"):
        d.log_stats()


def test_automatic_checkpoint(tmp_path):
    path = tmp_path / "db"
    with strata.open(path, checkpoint_bytes=4096) as g:
        for i in range(200):
            g.query("CREATE (:N {i: $i, s: 'some text to fill the log'})", i=i)
        stats = g.log_stats()
        assert stats["snapshot_seq"] > 0 and stats["log_bytes"] < 4096 * 2
    with strata.open(path) as g:
        assert count(g) == 200
