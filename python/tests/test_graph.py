"""Queries, errors, transactions, snapshots, entities, save and load."""
import os
import signal
import threading

import pytest

import strata


# Ten billion rows: only an interrupt ends it in time.
LONG_READ = ("UNWIND range(1, 100000) AS x UNWIND range(1, 100000) AS y "
             "WITH y WHERE y < 0 RETURN count(*)")


def count(g, label="Person"):
    (row,) = g.query(f"MATCH (n:{label}) RETURN count(n)")
    return row[0]


def test_columns_stats_and_dicts(g):
    r = g.query("CREATE (a:Person {name: 'Ada'}) RETURN a.name AS name, 1 AS one")
    assert r.columns == ("name", "one")
    assert r.stats["nodes_created"] == 1 and r.stats["properties_set"] == 1
    assert r.dicts() == [{"name": "Ada", "one": 1}]


@pytest.mark.parametrize("query, cls, code", [
    ("MATCH (n RETURN n", strata.CypherSyntaxError, "SyntaxError"),
    ("RETURN x", strata.CypherSyntaxError, "SyntaxError"),
    ("UNWIND [[1]] AS x RETURN toInteger(x)", strata.CypherTypeError, "TypeError"),
    ("RETURN range(1, 2, 0)", strata.ArgumentError, "ArgumentError"),
])
def test_errors_map_to_classes(g, query, cls, code):
    with pytest.raises(cls) as info:
        list(g.query(query))
    e = info.value
    assert isinstance(e, strata.Error)
    assert e.code == code
    assert e.message


def test_syntax_error_position_and_caret(g):
    with pytest.raises(strata.CypherSyntaxError) as info:
        g.query("MATCH (n)\nWHERE n.x = = 1\nRETURN n")
    e = info.value
    assert (e.line, e.column) == (2, 13)
    assert "WHERE n.x = = 1\n" + " " * 2 + " " * 12 + "^" in str(e)


def test_constraint_error_leaves_graph(g):
    g.query("CREATE CONSTRAINT FOR (p:Person) REQUIRE p.name IS UNIQUE")
    g.query("CREATE (:Person {name: 'Ada'})")
    with pytest.raises(strata.ConstraintError):
        g.query("CREATE (:Person {name: 'Bob'}), (:Person {name: 'Ada'})")
    assert count(g) == 1


def test_transaction_commits(g):
    with g.transaction():
        g.query("CREATE (:Person {name: 'Ada'})")
        assert g.in_transaction
    assert not g.in_transaction
    assert count(g) == 1


def test_transaction_rolls_back_on_exception(g):
    g.query("CREATE (:Person {name: 'Ada'})")
    with pytest.raises(RuntimeError):
        with g.transaction():
            g.query("CREATE (:Person {name: 'Bob'})")
            g.query("MATCH (p:Person {name: 'Ada'}) DETACH DELETE p")
            raise RuntimeError("no")
    assert [r[0] for r in g.query("MATCH (p:Person) RETURN p.name")] == ["Ada"]


def test_readers_do_not_see_an_open_transaction(g):
    g.begin()
    g.query("CREATE (:Person)")
    with g.snapshot() as v:
        assert v.node_count == 0
    g.commit()
    with g.snapshot() as v:
        assert v.node_count == 1


def test_snapshot_keeps_its_state(g):
    g.query("CREATE (:Person {name: 'Ada'})")
    with g.snapshot() as v:
        g.query("MATCH (p:Person) SET p.name = 'Changed'")
        g.query("CREATE (:Person {name: 'New'})")
        assert [r[0] for r in v.query("MATCH (p:Person) RETURN p.name")] == ["Ada"]
    assert count(g) == 2


def test_view_refuses_writes(g):
    v = g.snapshot()
    with pytest.raises(strata.CypherSemanticError):
        v.query("CREATE (:Person)")
    v.release()
    with pytest.raises(strata.Error, match="released"):
        v.query("RETURN 1")


def test_entities(g):
    (a, r, b) = next(iter(g.query(
        "CREATE (a:Person:Admin {name: 'Ada', tags: ['x', 'y']})-[r:KNOWS {since: 1833}]->"
        "(b:Person {name: 'Bob'}) RETURN a, r, b")))
    assert set(a.labels) == {"Person", "Admin"}
    assert a["name"] == "Ada" and a.get("tags") == ["x", "y"] and a.get("missing", 7) == 7
    with pytest.raises(KeyError):
        a["missing"]
    assert a.properties == {"name": "Ada", "tags": ["x", "y"]}
    assert r.type == "KNOWS" and r["since"] == 1833
    assert r.start_node == a and r.end_node == b
    assert hash(a) == hash(r.start_node) and a != b and a < b
    (again,) = next(iter(g.query("MATCH (n {name: 'Ada'}) RETURN n")))
    assert again == a and len({a, again}) == 1


def test_entity_keeps_its_state(g):
    (n,) = next(iter(g.query("CREATE (n:Person {name: 'Ada'}) RETURN n")))
    g.query("MATCH (n) SET n.name = 'Changed'")
    assert n["name"] == "Ada"


def test_path(g):
    (p,) = next(iter(g.query("CREATE p = (:A)-[:R]->(:B)<-[:S]-(:C) RETURN p")))
    assert len(p) == 2
    assert [n.labels for n in p.nodes] == [("A",), ("B",), ("C",)]
    assert [r.type for r in p.relationships] == ["R", "S"]
    assert p.start_node.labels == ("A",) and p.end_node.labels == ("C",)


def test_save_and_load(g, tmp_path):
    g.query("CREATE (:Person {name: 'Ada', born: date('1815-12-10')})-[:KNOWS]->(:Person)")
    path = tmp_path / "graph.db"
    g.save(path)
    h = strata.load(str(path))
    assert count(h) == 2
    assert list(h.query("MATCH (p {name: 'Ada'}) RETURN p.born"))[0][0].year == 1815
    h.close()


def test_load_errors(tmp_path):
    with pytest.raises(strata.EntityNotFound):
        strata.load(tmp_path / "missing.db")
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a graph")
    with pytest.raises(strata.StrataIOError):
        strata.load(bad)


def test_closed_graph(g):
    r = g.query("UNWIND range(1, 3) AS x RETURN x")
    v = g.snapshot()
    g.close()
    assert g.closed
    with pytest.raises(strata.Error, match="closed"):
        g.query("RETURN 1")
    with pytest.raises(strata.Error, match="closed"):
        g.snapshot()
    assert [row[0] for row in r] == [1, 2, 3]          # the result keeps its state
    assert list(v.query("RETURN 1"))[0] == (1,)
    g.close()                                          # twice is fine


def test_interrupt_from_another_thread(g):
    timer = threading.Timer(0.3, g.interrupt)
    timer.start()
    with pytest.raises(strata.Interrupted):
        list(g.query(LONG_READ))
    timer.join()


def test_keyboard_interrupt_stops_a_query(g):
    g.query("CREATE (:Person)")
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        g.query("UNWIND range(1, 1000000) AS x CREATE (:Person) WITH x "
                "UNWIND range(1, 1000000) AS y WITH y WHERE y < 0 RETURN count(*)")
    timer.join()
    assert count(g) == 1


def test_keyboard_interrupt_stops_a_view_query(g):
    g.query("CREATE (:Person)")
    v = g.snapshot()
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        list(v.query(LONG_READ))
    timer.join()
    assert list(v.query("MATCH (n) RETURN count(n)")) == [(1,)]
    v.release()


def test_query_threads_count_alike(g):
    g.query("CREATE INDEX FOR (n:P) ON (n.i)")
    g.query("UNWIND range(0, 4999) AS i CREATE (:P {i: i})")
    g.query("MATCH (a:P), (b:P) WHERE b.i = (a.i * 7 + 3) % 5000 CREATE (a)-[:K]->(b)")
    q = "MATCH (a:P)-[:K]->(b:P)-[:K]->(c:P) WHERE a <> c RETURN count(*)"
    g.set_query_threads(1)
    (one,) = g.query(q)
    g.set_query_threads(3)
    assert list(g.query(q)) == [one] and one[0] > 4000
    with pytest.raises(ValueError):
        g.set_query_threads(-1)
