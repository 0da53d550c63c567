"""Graph.load_frames: nodes and relationships from pandas DataFrames."""


def _frames(spec, what):
    """(key, frame) pairs of a DataFrame, a dict of them or a list of those."""
    import pandas as pd

    if spec is None:
        return []
    if isinstance(spec, pd.DataFrame):
        return [(None, spec)]
    if isinstance(spec, dict):
        return list(spec.items())
    if isinstance(spec, (list, tuple)):
        return [pair for item in spec for pair in _frames(item, what)]
    raise TypeError(f"{what}: a DataFrame, a dict of DataFrames or a list of those, "
                    f"not {type(spec).__name__}")


def _column_data(series):
    """A column as _create_nodes takes it: a numpy array for int64, float64
    and bool columns, else a list with None where a value is missing."""
    import numpy as np

    dtype = series.dtype
    if dtype.kind in "iu" and dtype != np.uint64:
        return np.ascontiguousarray(series.to_numpy(dtype=np.int64))
    if dtype.kind == "f":
        return np.ascontiguousarray(series.to_numpy(dtype=np.float64))
    if dtype.kind == "b":
        return np.ascontiguousarray(series.to_numpy(dtype=np.bool_))
    return series.astype(object).where(series.notna(), None).tolist()


def _property_columns(frame, skip):
    return [(str(name), _column_data(frame[name])) for name in frame.columns if name not in skip]


def _row_labels(frame, column):
    """Per-row label tuples from a labels column (';'-separated or lists)."""
    out = []
    for value in frame[column].tolist():
        if value is None or (isinstance(value, float) and value != value):
            out.append(())
        elif isinstance(value, str):
            out.append(tuple(l for l in value.split(";") if l))
        else:
            out.append(tuple(value))
    return out


def _groups(keys):
    """Row positions by key, in first-seen order."""
    groups = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return groups


class _IdSpaces:
    """Maps each frame's id column to strata node ids, per id space (the
    importer's ID(Space)): a space is named by the labels a node frame was
    given, or '' for a frame given without a key.  Each space's table, and
    the table of every space together, is built once, when first looked
    up, not again for every frame added or looked up."""

    def __init__(self):
        self.parts = {}     # space -> [Series of strata ids indexed by key]
        self.tables = {}    # space (None: all) -> the concatenated Series

    def add(self, space, keys, ids):
        import pandas as pd

        series = pd.Series(ids, index=pd.Index(keys))
        dup = series.index[series.index.duplicated()]
        if len(dup):
            raise ValueError(f"node id {dup[0]!r} appears twice in id space {space!r}")
        self.parts.setdefault(space, []).append(series)
        self.tables.pop(space, None)
        self.tables.pop(None, None)

    def _table(self, space):
        import pandas as pd

        table = self.tables.get(space)
        if table is None:
            parts = self.parts[space] if space is not None else [
                p for ps in self.parts.values() for p in ps]
            table = pd.concat(parts) if len(parts) > 1 else parts[0]
            if space is not None and table.index.has_duplicates:
                dup = table.index[table.index.duplicated()]
                raise ValueError(f"node id {dup[0]!r} appears twice in id space {space!r}")
            self.tables[space] = table
        return table

    def check(self):
        """Every space's ids are distinct (also across its frames)."""
        for space in self.parts:
            self._table(space)

    def lookup(self, space, keys, where):
        import numpy as np
        import pandas as pd

        if space is None:
            if not self.parts:
                raise ValueError(f"{where}: no node frame had an id column")
            table = self._table(None)
            if table.index.has_duplicates:
                raise ValueError(f"{where}: node ids repeat across id spaces; name the spaces "
                                 f"with a (start_label, TYPE, end_label) key")
        elif space in self.parts:
            table = self._table(space)
        else:
            raise ValueError(f"{where}: no id space {space!r}")
        found = table.reindex(pd.Index(keys))
        missing = found.isna().to_numpy()
        if missing.any():
            row = int(np.argmax(missing))
            raise ValueError(f"{where}, row {row}: no node with id {keys[row]!r}")
        return found.to_numpy(dtype=np.int64)


def _load_nodes(g, key, frame, spaces, id, labels):
    import numpy as np

    given = (key,) if isinstance(key, str) else tuple(key or ())
    if labels not in frame.columns:   # one group: no per-row copies
        made = g._create_nodes(given, len(frame), _property_columns(frame, ()))
        ids = np.frombuffer(made, dtype=np.int64)
    else:
        props = frame.drop(columns=[labels])
        ids = np.empty(len(frame), dtype=np.int64)
        for extra, rows in _groups(_row_labels(frame, labels)).items():
            all_labels = given + tuple(l for l in extra if l not in given)
            made = g._create_nodes(all_labels, len(rows), _property_columns(props.iloc[rows], ()))
            ids[rows] = np.frombuffer(made, dtype=np.int64)
    if id in frame.columns:
        spaces.add(given[0] if given else "", frame[id].to_numpy(), ids)
    return len(frame)


def _load_relationships(g, key, frame, spaces, start, end, type):
    import numpy as np

    if isinstance(key, tuple) and len(key) == 3:
        start_space, rel_type, end_space = key
    else:
        start_space, rel_type, end_space = None, key, None
    where = f"relationships {key!r}" if key is not None else "relationships"
    for column in (start, end):
        if column not in frame.columns:
            raise ValueError(f"{where}: no column {column!r}")
    starts = spaces.lookup(start_space, frame[start].to_numpy(), where + f", column {start!r}")
    ends = spaces.lookup(end_space, frame[end].to_numpy(), where + f", column {end!r}")
    if rel_type is None:
        if type not in frame.columns:
            raise ValueError(f"{where}: no type given and no column {type!r}")
        row_types = frame[type].tolist()
    elif not isinstance(rel_type, str) or not rel_type:
        raise ValueError(f"{where}: a relationship type must be a non-empty string")
    props = frame.drop(columns=[c for c in (start, end, type) if c in frame.columns])
    if rel_type is not None:   # one group: no per-row copies
        g._create_relationships(rel_type, starts.tobytes(), ends.tobytes(),
                                _property_columns(props, ()))
        return len(frame)
    for t, rows in _groups(row_types).items():
        if not isinstance(t, str) or not t:
            raise ValueError(f"{where}, row {rows[0]}: a relationship type must be a "
                             f"non-empty string, not {t!r}")
        idx = np.asarray(rows)
        g._create_relationships(t, starts[idx].tobytes(), ends[idx].tobytes(),
                                _property_columns(props.iloc[rows], ()))
    return len(frame)


def load_frames(self, nodes=None, relationships=None, *, id="id", start="start", end="end",
                labels=":LABEL", type=":TYPE"):
    """Creates nodes and relationships from pandas DataFrames, all in one
    transaction: every row, or on any error none.

    nodes: a DataFrame, a dict {label or tuple of labels: DataFrame}, or a
    list of those.  Each column becomes a property (a missing value sets
    none); a column named by ``labels`` adds labels per row (strings
    separated by ';', or lists).  The column named by ``id`` is also each
    node's key in the id space of its frame (the frame's first label; ''
    for a frame given without one), as the importer's ID(Space) columns.

    relationships: a DataFrame, a dict {TYPE or (start_space, TYPE,
    end_space): DataFrame}, or a list of those.  Columns ``start`` and
    ``end`` hold node keys, looked up in the named spaces (in every space
    when none is named, where a key must then be unique); without a TYPE
    key a ``type`` column gives each row's type; the other columns become
    properties.

    Returns {'nodes': created, 'relationships': created}."""
    spaces = _IdSpaces()
    own = not self.in_transaction
    if own:
        self.begin()
    try:
        n = sum(_load_nodes(self, key, frame, spaces, id, labels)
                for key, frame in _frames(nodes, "nodes"))
        spaces.check()
        r = sum(_load_relationships(self, key, frame, spaces, start, end, type)
                for key, frame in _frames(relationships, "relationships"))
    except BaseException:
        if own:
            self.rollback()
        raise
    if own:
        self.commit()
    return {"nodes": n, "relationships": r}
