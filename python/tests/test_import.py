"""Graph.import_csv: the importer's files, options and faults from Python."""
import os
import signal
import threading
import time

import pytest

import strata


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def rows(g, query):
    return [tuple(r) for r in g.query(query)]


@pytest.fixture
def files(tmp_path):
    return {
        "people": write(tmp_path, "people.csv",
                        "id:ID(Person),name,age:int,tags:string[],:LABEL\n"
                        '1,"Smith, J",42,a;b,Admin\n'
                        "2,Ada,36,,\n"),
        "more": write(tmp_path, "more.csv", "3,Grace,45,x,\n"),
        "movies": write(tmp_path, "movies.csv", "id:ID(Movie),title\n1,Up\n"),
        "acted": write(tmp_path, "acted.csv",
                       ":START_ID(Person),:END_ID(Movie),role,:TYPE\n1,1,Carl,ACTED_IN\n3,1,,\n"),
    }


def test_forms_of_nodes_and_relationships(g, files):
    report = g.import_csv(nodes=[([files["people"], files["more"]], "Person"),
                                 {("Movie", "Film"): files["movies"]}],
                          relationships=(files["acted"], "WATCHED"))
    assert report == {"nodes": 4, "relationships": 2, "properties": 4 * 3 - 1 + 2 + 1,
                      "rows": 6, "bad_rows": 0, "skipped": []}
    assert rows(g, "MATCH (p:Person) RETURN p.id, p.name, p.age, p.tags ORDER BY p.id") == [
        ("1", "Smith, J", 42, ["a", "b"]), ("2", "Ada", 36, None), ("3", "Grace", 45, ["x"])]
    assert rows(g, "MATCH (n:Admin) RETURN n.name") == [("Smith, J",)]
    assert rows(g, "MATCH (m:Movie:Film) RETURN m.title") == [("Up",)]
    assert rows(g, "MATCH (p)-[r]->(m) RETURN p.id, type(r), r.role ORDER BY p.id") == [
        ("1", "ACTED_IN", "Carl"), ("3", "WATCHED", None)]


def test_a_path_and_labels_written_as_in_the_program(g, tmp_path):
    path = write(tmp_path, "n.csv", "id:ID\n1\n")
    g.import_csv(nodes=[path])
    g.import_csv(nodes=(tmp_path / "n.csv", "A:B"))   # a PathLike, labels "A:B"
    assert rows(g, "MATCH (n) RETURN labels(n) ORDER BY size(labels(n))") == [([],), (["A", "B"],)]


def test_separators(g, tmp_path):
    path = write(tmp_path, "p.csv", "id:ID|title|tags:string[]\n1|'a|b'|x,y\n")
    g.import_csv(nodes=path, delimiter="|", array_delimiter=",", quote="'")
    assert rows(g, "MATCH (n) RETURN n.title, n.tags") == [("a|b", ["x", "y"])]
    with pytest.raises(ValueError):
        g.import_csv(nodes=path, delimiter="||")
    with pytest.raises(strata.ArgumentError):
        g.import_csv(nodes=path, delimiter=";")   # the array delimiter's too


@pytest.mark.parametrize("text, cls, line, column, message", [
    ("id:ID,age:int\n1,40\n2,4x\n", strata.CypherTypeError, 3, 2,
     "column 'age' (int): '4x' is not an integer"),
    ("id:ID(P)\n1\n1\n", strata.ConstraintError, 3, 1, "duplicate node id '1' in id space P"),
    ("id:ID,name\n1,a,b\n", strata.ArgumentError, 2, 0, "3 fields, but the header has 2"),
    ("id:ID,name\n1,\"open\n", strata.ArgumentError, 2, 0, "unterminated quoted field"),
    ("id:ID,when:date\n", strata.ArgumentError, 1, 2, "unknown type 'date'"),
])
def test_faults_raise_their_class_with_the_place(g, tmp_path, text, cls, line, column, message):
    g.query("CREATE (:Old)")
    path = write(tmp_path, "bad.csv", text)
    with pytest.raises(cls) as info:
        g.import_csv(nodes=path)
    e = info.value
    assert (e.file, e.line, e.column) == (path, line, column)
    assert message in e.message
    assert f"{path}:{line}: " in str(e)
    assert rows(g, "MATCH (n) RETURN labels(n)") == [(["Old"],)]


def test_unknown_end_and_missing_file(g, tmp_path):
    nodes = write(tmp_path, "n.csv", "id:ID\n1\n")
    rels = write(tmp_path, "r.csv", ":START_ID,:END_ID,:TYPE\n1,2,K\n")
    with pytest.raises(strata.EntityNotFound) as info:
        g.import_csv(nodes=nodes, relationships=rels)
    assert (info.value.file, info.value.line, info.value.column) == (rels, 2, 2)
    missing = str(tmp_path / "nope.csv")
    with pytest.raises(strata.StrataIOError) as info:
        g.import_csv(nodes=[nodes, missing])
    assert info.value.file == missing and "cannot read" in info.value.message
    assert rows(g, "MATCH (n) RETURN count(n)") == [(0,)]


def test_skip_bad_rows(g, tmp_path):
    path = write(tmp_path, "s.csv", "id:ID,age:int\n1,1\n2,x\n3,3\n3,4\n")
    report = g.import_csv(nodes=path, skip_bad_rows=True)
    assert report["nodes"] == 2 and report["bad_rows"] == 2
    assert [(s["file"], s["line"], s["column"]) for s in report["skipped"]] == [
        (path, 3, 2), (path, 5, 1)]
    assert "duplicate node id '3'" in report["skipped"][1]["message"]


def test_inside_a_transaction(g, tmp_path):
    good = write(tmp_path, "good.csv", "id:ID\n1\n2\n")
    bad = write(tmp_path, "bad.csv", "id:ID,n:int\n1,x\n")
    with pytest.raises(RuntimeError):
        with g.transaction():
            g.import_csv(nodes=(good, "T"))
            raise RuntimeError("roll it back")
    assert rows(g, "MATCH (n) RETURN count(n)") == [(0,)]
    with g.transaction():
        g.query("CREATE (:Before)")
        with pytest.raises(strata.CypherTypeError):
            g.import_csv(nodes=bad)          # undone alone
        g.import_csv(nodes=(good, "T"))
    assert rows(g, "MATCH (n) RETURN labels(n)[0] AS l, count(*) ORDER BY l") == [
        ("Before", 1), ("T", 2)]


def test_bad_arguments(g, tmp_path):
    path = write(tmp_path, "n.csv", "id:ID\n1\n")
    for bad in (42, [[path]], (path,), (path, 7), {"A": []}):
        with pytest.raises(TypeError):
            g.import_csv(nodes=bad)
    with pytest.raises(TypeError):
        g.import_csv(relationships=(path, ["not", "a", "type"]))
    with pytest.raises(ValueError):
        g.import_csv(nodes=path, field_max=0)
    with pytest.raises(ValueError):
        g.import_csv(nodes=(path, ["A\0B"]))
    g.close()
    with pytest.raises(strata.Error):
        g.import_csv(nodes=path)


def node_file(tmp_path, n):
    path = tmp_path / f"nodes{n}.csv"
    with open(path, "w") as f:
        f.write("id:ID,name,age:int\n")
        f.writelines(f"{i},person {i},{i % 90}\n" for i in range(n))
    return str(path)


def test_the_gil_is_released(g, tmp_path):
    """Another thread runs while the import reads: the longest pause it
    sees is far below the import's own time."""
    path = node_file(tmp_path, 300000)
    took = []

    def run():
        t0 = time.perf_counter()
        g.import_csv(nodes=path)
        took.append(time.perf_counter() - t0)

    t = threading.Thread(target=run)
    last, longest = time.perf_counter(), 0.0
    t.start()
    while t.is_alive():
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
        time.sleep(0.001)
    t.join()
    assert rows(g, "MATCH (n) RETURN count(n)") == [(300000,)]
    assert longest < took[0] / 2, (longest, took[0])


def feed_forever(fifo, stop):
    """Writes node rows into the FIFO until told to stop (or the reader
    goes away)."""
    try:
        with open(fifo, "w") as f:
            f.write("id:ID\n")
            i = 0
            while not stop.is_set():
                f.write("".join(f"{k}\n" for k in range(i, i + 1000)))
                i += 1000
    except BrokenPipeError:
        pass


@pytest.mark.parametrize("how", ["interrupt", "sigint"])
def test_an_endless_import_stops(g, tmp_path, how):
    g.query("CREATE (:Old)")
    fifo = str(tmp_path / "endless.csv")
    os.mkfifo(fifo)
    stop = threading.Event()
    feeder = threading.Thread(target=feed_forever, args=(fifo, stop))
    feeder.start()
    if how == "interrupt":
        def keep_interrupting():
            while not stop.wait(0.01):
                g.interrupt()
        stopper = threading.Thread(target=keep_interrupting)
        expected = strata.Interrupted
    else:
        stopper = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        expected = KeyboardInterrupt
    stopper.start()
    try:
        with pytest.raises(expected):
            g.import_csv(nodes=fifo)
    finally:
        stop.set()
        stopper.join()
        feeder.join()
    assert rows(g, "MATCH (n) RETURN labels(n)") == [(["Old"],)]
