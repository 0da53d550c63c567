"""load_frames, to_pandas, to_networkx and from_networkx agree."""
import random

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import strata


def people_and_knows(n=300, m=900, seed=7):
    rnd = random.Random(seed)
    people = pd.DataFrame({
        "id": np.arange(n, dtype=np.int64) * 10,
        "name": [f"p{i}" for i in range(n)],
        "age": np.array([rnd.randint(18, 90) for _ in range(n)], dtype=np.int64),
        "score": [rnd.random() if i % 7 else float("nan") for i in range(n)],
        "admin": np.array([i % 5 == 0 for i in range(n)]),
    })
    knows = pd.DataFrame({
        "start": [rnd.randrange(n) * 10 for _ in range(m)],
        "end": [rnd.randrange(n) * 10 for _ in range(m)],
        "since": np.array([rnd.randint(1990, 2024) for _ in range(m)], dtype=np.int64),
    })
    return people, knows


def test_load_frames_then_query(g):
    people, knows = people_and_knows()
    assert g.load_frames(nodes={"Person": people}, relationships={"KNOWS": knows}) == {
        "nodes": len(people), "relationships": len(knows)}
    df = g.query("MATCH (p:Person) RETURN p.id AS id, p.name AS name, p.age AS age, "
                 "p.score AS score, p.admin AS admin ORDER BY id").to_pandas()
    assert df["id"].dtype == np.int64 and df["age"].dtype == np.int64
    assert df["admin"].dtype == bool
    assert df["name"].tolist() == people["name"].tolist()
    assert (df["age"].to_numpy() == people["age"].to_numpy()).all()
    # a NaN score was no property: null, so the column holds objects
    assert df["score"].isna().sum() == people["score"].isna().sum()
    pairs = g.query("MATCH (a)-[k:KNOWS]->(b) RETURN a.id AS start, b.id AS `end`, k.since AS since "
                    "ORDER BY start, `end`, since").to_pandas()
    expected = knows.sort_values(["start", "end", "since"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(pairs, expected, check_dtype=False)


def test_to_networkx_matches_the_frames(g):
    people, knows = people_and_knows()
    g.load_frames(nodes={"Person": people}, relationships={"KNOWS": knows})
    nxg = g.query("MATCH (a)-[k]->(b) RETURN a, k, b").to_networkx()
    assert nxg.number_of_edges() == len(knows)
    by_id = {attrs["id"]: attrs for _, attrs in nxg.nodes(data=True)}
    row = people.iloc[3]
    assert by_id[row["id"]]["name"] == row["name"] and by_id[row["id"]]["labels"] == ["Person"]
    assert all(attrs["type"] == "KNOWS" for _, _, attrs in nxg.edges(data=True))


def test_from_networkx_round_trip():
    src = nx.gnm_random_graph(200, 600, seed=3, directed=True)
    for node in src.nodes:
        src.nodes[node]["labels"] = ["N", "Even"] if node % 2 == 0 else "N"
        src.nodes[node]["weight"] = node * 1.5
    for u, v in src.edges:
        src.edges[u, v]["type"] = "E"
        src.edges[u, v]["w"] = u + v
    g = strata.from_networkx(src)
    (row,) = g.query("MATCH (n:N) RETURN count(n), sum(n.weight)")
    assert row == (200, sum(n * 1.5 for n in src.nodes))
    (row,) = g.query("MATCH (:Even) RETURN count(*)")
    assert row == (100,)
    back = g.query("MATCH (a)-[e:E]->(b) RETURN a, e, b").to_networkx()
    edges = {(back.nodes[u]["id"], back.nodes[v]["id"], d["w"]) for u, v, d in back.edges(data=True)}
    assert edges == {(u, v, u + v) for u, v in src.edges}
    g.close()


def test_labels_and_types_from_columns(g):
    nodes = pd.DataFrame({"id": [1, 2, 3], ":LABEL": ["A;B", "A", None]})
    rels = pd.DataFrame({"start": [1, 2], "end": [2, 3], ":TYPE": ["X", "Y"]})
    g.load_frames(nodes=nodes, relationships=rels)
    rows = sorted(g.query("MATCH (n) RETURN n.id, labels(n)"))
    assert rows == [(1, ["A", "B"]), (2, ["A"]), (3, [])]
    assert sorted(g.query("MATCH (a)-[r]->(b) RETURN a.id, type(r), b.id")) == [
        (1, "X", 2), (2, "Y", 3)]


def test_id_spaces(g):
    people = pd.DataFrame({"id": [1, 2]})
    cities = pd.DataFrame({"id": [1, 2], "name": ["Oslo", "Rome"]})
    lives = pd.DataFrame({"start": [1, 2], "end": [2, 1]})
    g.load_frames(nodes={"Person": people, "City": cities},
                  relationships={("Person", "LIVES_IN", "City"): lives})
    assert sorted(g.query("MATCH (p:Person)-[:LIVES_IN]->(c:City) RETURN p.id, c.name")) == [
        (1, "Rome"), (2, "Oslo")]
    with pytest.raises(ValueError, match="repeat across id spaces"):
        g.load_frames(relationships={"X": lives}, nodes={"Person": people, "City": cities})


def test_a_bad_row_loads_nothing(g):
    nodes = pd.DataFrame({"id": [1, 2], "v": [1, object()]})
    with pytest.raises(TypeError, match="column 'v', row 1"):
        g.load_frames(nodes=nodes)
    rels = pd.DataFrame({"start": [1], "end": [99]})
    with pytest.raises(ValueError, match="no node with id 99"):
        g.load_frames(nodes=pd.DataFrame({"id": [1]}), relationships={"R": rels})
    with g.snapshot() as v:
        assert v.node_count == 0 and v.relationship_count == 0


def test_to_pandas_mixed_and_empty(g):
    df = g.query("UNWIND [1, null, 2.5, 'x'] AS v RETURN v").to_pandas()
    assert df["v"].dtype == object and df["v"].tolist()[0] == 1
    empty = g.query("UNWIND [] AS v RETURN v").to_pandas()
    assert list(empty.columns) == ["v"] and len(empty) == 0


def test_an_id_twice_in_one_space_across_frames(g):
    first = pd.DataFrame({"id": [1, 2]})
    second = pd.DataFrame({"id": [2, 3]})
    with pytest.raises(ValueError, match="node id 2 appears twice in id space 'Person'"):
        g.load_frames(nodes=[{"Person": first}, {"Person": second}])
    with g.snapshot() as v:
        assert v.node_count == 0
