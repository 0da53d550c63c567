"""Results into pandas and NetworkX, and NetworkX graphs into strata."""
import math

from ._strata import Node, Path, Relationship


def to_pandas(self):
    """The rest of the result as a pandas DataFrame.  Columns of integers,
    floats or booleans without nulls become numpy arrays built straight
    from strata's values; any other column holds Python objects."""
    import numpy as np
    import pandas as pd

    data = {}
    for name, (dtype, payload) in zip(self.columns, self._columns()):
        if dtype == "object":
            data[name] = pd.Series(payload, dtype=object)
        else:
            data[name] = np.frombuffer(payload, dtype=dtype)
    return pd.DataFrame(data, columns=list(self.columns))


def _walk(value, nodes, rels):
    """Every node and relationship inside value (lists, maps, paths)."""
    if isinstance(value, Node):
        nodes[value.id] = value
    elif isinstance(value, Relationship):
        rels[value.id] = value
    elif isinstance(value, Path):
        for n in value.nodes:
            nodes[n.id] = n
        for r in value.relationships:
            rels[r.id] = r
    elif isinstance(value, (list, tuple)):
        for v in value:
            _walk(v, nodes, rels)
    elif isinstance(value, dict):
        for v in value.values():
            _walk(v, nodes, rels)


def to_networkx(self):
    """The nodes and relationships of the rest of the result (wherever
    they stand in a row) as a networkx.MultiDiGraph: nodes keyed by strata
    id with attribute 'labels' (a list) and their properties, edges keyed
    by relationship id with attribute 'type' and their properties."""
    import networkx as nx

    nodes, rels = {}, {}
    for row in self:
        _walk(row, nodes, rels)
    for r in rels.values():
        nodes.setdefault(r.start_node.id, r.start_node)
        nodes.setdefault(r.end_node.id, r.end_node)
    g = nx.MultiDiGraph()
    for node_id, n in nodes.items():
        g.add_node(node_id, **n.properties, labels=list(n.labels))
    for rel_id, r in rels.items():
        g.add_edge(r.start_node.id, r.end_node.id, key=rel_id, **r.properties, type=r.type)
    return g


def _storable(value):
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def from_networkx(nxg, *, id_key="id", default_label=None, default_type="RELATED"):
    """A new strata Graph from a NetworkX graph.  A node's attribute
    'labels' (a string or a list of strings) gives its labels
    (default_label, if any, otherwise); its other attributes become
    properties, and its NetworkX key is stored under id_key (None: not
    stored).  An edge's attribute 'type' gives its relationship type
    (default_type otherwise), its other attributes become properties; an
    undirected edge becomes one relationship from the first node to the
    second."""
    import numpy as np

    from ._strata import Graph

    g = Graph()
    groups = {}
    for key, attrs in nxg.nodes(data=True):
        labels = attrs.get("labels", default_label)
        labels = (labels,) if isinstance(labels, str) else tuple(labels or ())
        props = {k: v for k, v in attrs.items() if k != "labels" and _storable(v)}
        if id_key is not None:
            props[id_key] = key
        groups.setdefault(labels, []).append((key, props))
    strata_id = {}
    with g.transaction():
        for labels, members in groups.items():
            keys = sorted({k for _, props in members for k in props})
            columns = [(k, [props.get(k) for _, props in members]) for k in keys]
            ids = np.frombuffer(g._create_nodes(labels, len(members), columns), dtype=np.int64)
            for (key, _), node_id in zip(members, ids):
                strata_id[key] = int(node_id)
        edges = {}
        for u, v, attrs in nxg.edges(data=True):
            props = {k: x for k, x in attrs.items() if k != "type" and _storable(x)}
            edges.setdefault(attrs.get("type", default_type), []).append((u, v, props))
        for rel_type, members in edges.items():
            starts = np.array([strata_id[u] for u, _, _ in members], dtype=np.int64)
            ends = np.array([strata_id[v] for _, v, _ in members], dtype=np.int64)
            keys = sorted({k for _, _, props in members for k in props})
            columns = [(k, [props.get(k) for _, _, props in members]) for k in keys]
            g._create_relationships(rel_type, starts.tobytes(), ends.tobytes(), columns)
    return g
