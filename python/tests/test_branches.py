"""Branches, diff and algorithms from Python (docs/BRANCHES.md)."""
import pytest

import strata


def balances(g):
    return dict(g.query("MATCH (a:Account) RETURN a.id, a.balance"))


@pytest.fixture
def accounts(g):
    g.query("UNWIND range(1, 100) AS i CREATE (:Account {id: i, balance: 100})")
    return g


def test_branch_is_isolated_both_ways(accounts):
    g = accounts
    b = g.branch()
    b.query("MATCH (a:Account) WHERE a.id <= 3 SET a.balance = a.balance - 50")
    g.query("MATCH (a:Account {id: 100}) SET a.balance = 0")
    assert balances(b)[1] == 50 and balances(b)[100] == 100
    assert balances(g)[1] == 100 and balances(g)[100] == 0
    # a branch of a branch, and the source closed first
    bb = b.branch()
    g.close()
    bb.query("CREATE (:Audit)")
    assert b.query("MATCH (n:Audit) RETURN count(n)").dicts() == [{"count(n)": 0}]
    assert balances(bb)[2] == 50
    b.close()
    bb.close()


def test_diff_lists_the_changes_in_order(accounts):
    g = accounts
    with g.snapshot() as before:
        b = before.branch()
        b.query("MATCH (a:Account) WHERE a.id <= 2 SET a.balance = 0")
        b.query("CREATE (:Audit {note: 'what if'})")   # before the delete: no id reuse
        b.query("MATCH (a:Account {id: 50}) DETACH DELETE a")
        with b.snapshot() as after:
            changes = before.diff(after)
    kinds = [c.kind for c in changes]
    assert kinds == ["node_property_set", "node_property_set", "node_deleted",
                     "label_removed", "node_property_removed", "node_property_removed",
                     "node_created", "label_added", "node_property_set"]
    first = changes[0]
    assert isinstance(first, strata.Change)
    assert (first.id, first.name, first.old, first.new) == (0, "balance", 100, 0)
    assert changes[-1].name == "note" and changes[-1].old is None
    assert changes[-1].new == "what if"


def test_diff_of_relationships_and_unrelated_graphs(g):
    g.query("CREATE (:A)-[:T {w: 1.5}]->(:B)")
    v0 = g.snapshot()
    g.query("MATCH ()-[r:T]->() SET r.w = 2.5")
    v1 = g.snapshot()
    (c,) = v0.diff(v1)
    assert (c.kind, c.name, c.old, c.new) == ("relationship_property_set", "w", 1.5, 2.5)
    (c,) = v1.diff(v0)
    assert (c.old, c.new) == (2.5, 1.5)
    other = strata.Graph()
    with pytest.raises(strata.ArgumentError, match="unrelated"):
        v0.diff(other.snapshot())
    with pytest.raises(TypeError):
        v0.diff("not a view")
    v0.release()
    with pytest.raises(strata.Error):
        v0.diff(v1)
    with pytest.raises(strata.Error):
        v0.branch()


def test_private_memory(accounts):
    g = accounts
    b = g.branch()
    before = b.memory_stats()["private_bytes"]
    b.query("MATCH (a:Account) SET a.balance = -1")
    after = b.memory_stats()
    assert after["private_bytes"] > before
    assert after["graph_bytes"] >= after["private_bytes"]


def test_algorithms(g):
    g.query("UNWIND range(1, 20) AS i CREATE (:N {i: i})-[:T]->(:N {i: i + 100})")
    frame = g.algo.pagerank(iterations=20).to_pandas()
    assert list(frame.columns) == ["node", "score"] and len(frame) == 40
    assert abs(frame["score"].sum() - 1.0) < 1e-6
    (row,) = g.algo.wcc.write(property="component")
    assert row[0] == 40
    assert g.query("MATCH (n) RETURN count(DISTINCT n.component)").dicts()[0] == {
        "count(DISTINCT n.component)": 20}
    with pytest.raises(strata.ArgumentError):
        list(g.algo.pagerank(no_such_key=1))
    with pytest.raises(AttributeError):
        g.algo.__class__.nope  # noqa: B018 (attribute of the class, not an algorithm)
    with pytest.raises(AttributeError):
        getattr(g.algo, "bad name")
