"""Branches, diff and algorithms as Graph methods (docs/BRANCHES.md,
docs/ALGORITHMS.md)."""
import re
from collections import namedtuple

Change = namedtuple("Change", "kind id name start end old new")
Change.__doc__ = """One difference between two views (View.diff).

kind: node_created, node_deleted, label_added, label_removed,
node_property_set, node_property_removed, relationship_created,
relationship_deleted, relationship_property_set or
relationship_property_removed; id: the node's or relationship's id;
name: the label, property key or (relationships created and deleted)
relationship type; start, end: a relationship's endpoints (None
otherwise); old, new: a property's values (None where there is none)."""


def branch(self):
    """A writable graph starting at this graph's committed state, in O(1):
    it shares everything with this graph, and writes on either side cost
    what they change and never show on the other."""
    with self.snapshot() as view:
        return view.branch()


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


class Algorithms:
    """g.algo.NAME(**config): CALL algo.NAME on a snapshot of the graph, as a
    Result (to_pandas() and the rest).  The names and keys are those of
    docs/ALGORITHMS.md; g.algo.pagerank.write(property='pr', ...) writes
    the scores back in one statement."""

    def __init__(self, graph, prefix="algo"):
        self._graph = graph
        self._prefix = prefix

    def __getattr__(self, name):
        if name.startswith("_") or not _NAME.match(name):
            raise AttributeError(name)
        return Algorithms(self._graph, f"{self._prefix}.{name}")

    def __call__(self, **config):
        text = f"CALL {self._prefix}($config)"
        if self._prefix.endswith(".write"):
            return self._graph.query(text, config=config)
        with self._graph.snapshot() as view:
            return view.query(text, config=config)

    def __repr__(self):
        return f"<strata algorithms {self._prefix}>"


def algo(self):
    return Algorithms(self)
