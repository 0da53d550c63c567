"""Graph.import_csv: the bulk importer (strata_import) over CSV files."""
import os


def _paths(files, what):
    """A tuple of str paths from a path or a list/tuple of them."""
    if isinstance(files, (str, bytes, os.PathLike)):
        files = [files]
    if not isinstance(files, (list, tuple)) or not files:
        raise TypeError(f"{what}: a path or a non-empty list of paths, not {files!r}")
    out = []
    for f in files:
        if not isinstance(f, (str, bytes, os.PathLike)):
            raise TypeError(f"{what}: a path, not {type(f).__name__}")
        out.append(os.fsdecode(os.fspath(f)))
    return tuple(out)


def _labels(spec, what):
    """Labels as a tuple of str: None, "A", "A:B" (as strata import's
    --nodes=A:B=FILE) or a list/tuple of names."""
    if spec is None:
        return ()
    if isinstance(spec, str):
        return tuple(l for l in spec.split(":") if l)
    if isinstance(spec, (list, tuple)) and all(isinstance(l, str) for l in spec):
        return tuple(spec)
    raise TypeError(f"{what}: labels are a str ('A' or 'A:B') or a list of str, not {spec!r}")


def _type(spec, what):
    if spec is None or isinstance(spec, str):
        return spec or None
    raise TypeError(f"{what}: a relationship type is a str, not {spec!r}")


def _groups(spec, what, key):
    """(files, key) pairs: spec is a path, a (files, key) tuple, a dict
    {key: files}, or a list of those; files a path or a list of paths,
    the first holding the header."""
    if spec is None:
        return []
    if isinstance(spec, (str, bytes, os.PathLike)):
        return [(_paths(spec, what), key(None, what))]
    if isinstance(spec, tuple):
        if len(spec) != 2:
            raise TypeError(f"{what}: a group is (files, {'labels' if key is _labels else 'type'})"
                            f", not {spec!r}")
        return [(_paths(spec[0], what), key(spec[1], what))]
    if isinstance(spec, dict):
        return [(_paths(files, what), key(k, what)) for k, files in spec.items()]
    if isinstance(spec, list):
        return [group for item in spec for group in _groups_item(item, what, key)]
    raise TypeError(f"{what}: a path, a (files, {'labels' if key is _labels else 'type'}) "
                    f"tuple, a dict or a list of those, not {type(spec).__name__}")


def _groups_item(item, what, key):
    if isinstance(item, list):
        raise TypeError(f"{what}: a list inside the list; give a group of several files as "
                        f"(files, {'labels' if key is _labels else 'type'})")
    return _groups(item, what, key)


def _byte(ch, what):
    if ch in ("\\t", "TAB"):
        ch = "\t"
    if not isinstance(ch, str) or len(ch.encode("utf-8")) != 1 or ch in "\r\n":
        raise ValueError(f"{what}: one ASCII character that is not a line end, not {ch!r}")
    return ord(ch)


def import_csv(self, nodes=None, relationships=None, *, delimiter=",", array_delimiter=";",
               quote='"', skip_bad_rows=False, field_max=None):
    """Adds the nodes and relationships of CSV files to the graph, with
    the header conventions of `strata import` (docs/IMPORT.md): all of
    them, or on any error none.

    nodes: a path; a (files, labels) tuple, labels "A", "A:B" or a list
    of names given to every node of the group; a dict {labels: files}; or
    a list of those.  files is one path or a list of paths of which the
    first holds the header.  relationships: the same with a type (for
    rows whose :TYPE is empty or absent) in place of labels.  Every node
    group loads before any relationship group.

    skip_bad_rows: leave out rows that do not fit (a field that does not
    parse as its column's type, an unknown START_ID or END_ID, a repeated
    id, the wrong number of fields) instead of failing; they are counted
    and the first 100 listed in the report's 'skipped'.

    Returns {'nodes', 'relationships', 'properties', 'rows', 'bad_rows',
    'skipped'}.  Raises the strata.Error subclass of the fault, with
    .file, .line and .column: StrataIOError (a file cannot be read),
    CypherTypeError (a field that is not of its column's type),
    EntityNotFound (an unknown end), ConstraintError (a repeated id),
    ArgumentError (malformed CSV, a bad header, a wrong field count).
    The GIL is released while the files are read; Ctrl-C stops the
    import (rolled back) with KeyboardInterrupt."""
    sources = [(False, files, labels, None)
               for files, labels in _groups(nodes, "nodes", _labels)]
    sources += [(True, files, (), type_)
                for files, type_ in _groups(relationships, "relationships", _type)]
    if field_max is not None and (not isinstance(field_max, int) or field_max < 1):
        raise ValueError(f"field_max: a positive number of bytes, not {field_max!r}")
    return self._import_csv(sources, _byte(delimiter, "delimiter"),
                            _byte(array_delimiter, "array_delimiter"), _byte(quote, "quote"),
                            bool(skip_bad_rows), field_max or 0)
