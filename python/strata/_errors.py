"""strata's exceptions: one class per category, all under strata.Error."""


class Error(Exception):
    """A failed call.  code: the category (as openCypher names it:
    SyntaxError, TypeError, ...); detail: the openCypher TCK detail code or
    None; line and column: 1-based position in the query, or in file (0
    when none); query: the query text, when there was one; file: the file
    a fault is in (Graph.import_csv), else None."""

    def __init__(self, message, code="Error", detail=None, line=0, column=0, query=None,
                 file=None):
        self.message = message
        self.code = code
        self.detail = detail
        self.line = line
        self.column = column
        self.query = query
        self.file = file
        super().__init__(self._text())

    def _text(self):
        where = self.message
        if self.file is not None:
            where = f"{self.file}:{self.line}: {self.message}" if self.line else self.message
        text = f"{self.code}: {where}" if self.code not in self.message else where
        if self.query and self.line > 0:
            lines = self.query.splitlines() or [""]
            if self.line <= len(lines):
                source = lines[self.line - 1]
                caret = " " * max(self.column - 1, 0) + "^"
                text += f"\n  {source}\n  {caret}"
        return text


class CypherSyntaxError(Error):
    """The query is not valid Cypher."""


class CypherSemanticError(Error):
    """The query is valid Cypher but means nothing (an unbound variable, ...)."""


class CypherTypeError(Error):
    """A value of the wrong type, met while the query ran."""


class ArgumentError(Error):
    """A function, procedure or call got an argument it cannot take."""


class EntityNotFound(Error):
    """A node, relationship or name that does not exist."""


class ConstraintError(Error):
    """A write a constraint refuses (and nothing changed)."""


class StrataIOError(Error):
    """A file could not be read or written, or is not a strata file."""


class OutOfMemory(Error):
    """The engine ran out of memory; the statement was rolled back."""


class Interrupted(Error):
    """The query was interrupted (Graph.interrupt); it was rolled back."""


_BY_CODE = {
    "SyntaxError": CypherSyntaxError,
    "SemanticError": CypherSemanticError,
    "TypeError": CypherTypeError,
    "ArgumentError": ArgumentError,
    "ProcedureError": ArgumentError,
    "EntityNotFound": EntityNotFound,
    "ConstraintVerificationFailed": ConstraintError,
    "IOError": StrataIOError,
    "CorruptFile": StrataIOError,
    "OutOfMemory": OutOfMemory,
    "Interrupted": Interrupted,
}


def make_error(code, detail, message, line, column, query, file=None):
    """The exception for a failure the engine reported (called by _strata)."""
    return _BY_CODE.get(code, Error)(message, code, detail, line, column, query, file)
