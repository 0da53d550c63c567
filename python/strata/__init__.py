"""strata: an embedded, in-memory property-graph database with Cypher.

    import strata
    g = strata.Graph()                # in memory; strata.open(path): on disk, logged
    g.query("CREATE (:Person {name: $name})", name="Ada")
    for (name,) in g.query("MATCH (p:Person) RETURN p.name"):
        print(name)

Reads can go through snapshots (``g.snapshot()``): immutable views that
any thread may query while the graph changes.  See docs/PYTHON.md.
"""
from ._strata import Graph, Node, Path, Relationship, Result, View
from . import _strata
from ._errors import (ArgumentError, ConstraintError, CypherSemanticError,
                      CypherSyntaxError, CypherTypeError, EntityNotFound, Error,
                      Interrupted, OutOfMemory, StrataIOError, make_error)
from ._values import Duration, make_temporal, temporal_fields
from . import _graph, _frames, _convert, _branches, _import
from ._branches import Change

_strata._register(make_error=make_error, duration_type=Duration,
                  make_temporal=make_temporal, temporal_fields=temporal_fields,
                  make_change=Change)

Graph.transaction = _graph.transaction
Graph.load_frames = _frames.load_frames
Graph.import_csv = _import.import_csv
Graph.__enter__ = _graph.enter
Graph.__exit__ = _graph.exit
Graph.branch = _branches.branch
Graph.algo = property(_branches.algo)
Result.to_pandas = _convert.to_pandas
Result.to_networkx = _convert.to_networkx
from_networkx = _convert.from_networkx


def load(path):
    """A graph saved with Graph.save (or the strata program's :save)."""
    return _strata.load(path)


def open(path, sync="full", *, truncate_corrupt=False, checkpoint_bytes=None):
    """The database at path (a directory, created when missing): a graph
    whose every commit is appended to a write-ahead log before it returns.

    sync: "full" (fsync before each commit returns: nothing acknowledged is
    lost, even to a power cut), "normal" (a background fsync at most every
    100 ms: a killed process loses nothing, a machine crash at most that
    window) or "off" (the operating system writes when it likes).
    truncate_corrupt: a damaged record before the log's end refuses to open
    (StrataIOError naming the file and offset) unless this is True, which
    cuts the log there.  checkpoint_bytes: checkpoint automatically once
    the log holds this many bytes (None: 64 MiB or the snapshot's size,
    whichever is larger).  A second open of the same path, from this
    process or another, raises StrataIOError ("... is in use by another
    process").  Close it with g.close() or a with block."""
    return _strata.open(path, sync, truncate_corrupt=truncate_corrupt,
                        checkpoint_bytes=checkpoint_bytes)


__all__ = [
    "Graph", "View", "Result", "Node", "Relationship", "Path", "Duration", "Change", "load",
    "open",
    "from_networkx", "Error", "CypherSyntaxError", "CypherSemanticError", "CypherTypeError",
    "ArgumentError", "EntityNotFound", "ConstraintError", "StrataIOError", "OutOfMemory",
    "Interrupted",
]
