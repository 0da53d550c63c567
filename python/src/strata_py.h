/*
 * The strata extension module (_strata): CPython objects over the public
 * API in strata.h, and nothing else of the engine.  Built for the stable
 * ABI of Python 3.11 (Py_LIMITED_API), so one build serves later
 * versions too.
 *
 * Objects and what they own:
 *   Graph   a strata_graph; a lock that serialises the calls that write
 *           (strata.h: statements run on one writer at a time); for a
 *           graph on a path (strata.open), what opening it found
 *   View    a strata_view (and a reference to its Graph object, for
 *           interrupts)
 *   Result  a strata_result and the object that ran it; a View of the
 *           result's state, made when the first node or relationship is
 *           converted, which every Node and Relationship of the result
 *           keeps alive
 *   Node, Relationship   a View and an id: labels, type and properties
 *           are read from that view when asked for
 *   Path    a tuple of nodes and a tuple of relationships
 *
 * The GIL is released around every call into the engine that can take
 * time: query execution, reading a result's rows, save, load and import.
 */
#ifndef STRATA_PY_H
#define STRATA_PY_H

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030B0000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <strata.h>

typedef struct GraphObject {
    PyObject_HEAD
    strata_graph *g;           /* NULL once closed */
    PyThread_type_lock writer; /* held across strata_query and transaction calls */
    PyObject *recovery;        /* what strata.open found (a dict), or NULL */
} GraphObject;

typedef struct ViewObject {
    PyObject_HEAD
    strata_view *v;            /* NULL once released */
    PyObject *graph;           /* the Graph object, or NULL */
} ViewObject;

typedef struct ResultObject {
    PyObject_HEAD
    strata_result *r;
    PyObject *graph;           /* the Graph object whose query this is (interrupts) */
    PyObject *view;            /* ViewObject of the result's state, made on demand */
    PyObject *columns;         /* tuple of str */
    Py_ssize_t ncols;
    bool done;
    strata_cancel *cancel;     /* a view query's, watched while it is read (owned), or NULL */
} ResultObject;

typedef struct EntityObject {  /* Node and Relationship */
    PyObject_HEAD
    PyObject *view;            /* ViewObject */
    strata_id id;
} EntityObject;

typedef struct PathObject {
    PyObject_HEAD
    PyObject *nodes;           /* tuple of Node */
    PyObject *relationships;   /* tuple of Relationship */
} PathObject;

extern PyTypeObject *Graph_Type, *View_Type, *Result_Type, *Node_Type, *Relationship_Type,
    *Path_Type;

/* What the Python half of the package registers at import (strata/__init__.py). */
typedef struct py_helpers {
    PyObject *make_error;     /* (code, detail, message, line, column, query) -> exception */
    PyObject *duration_type;  /* strata.Duration */
    PyObject *make_temporal;  /* (type, days, nanos, offset, zone) -> date/time/datetime */
    PyObject *temporal_fields;/* (obj) -> (type, days, nanos, offset, zone) or None */
    PyObject *make_change;    /* strata.Change(kind, id, name, start, end, old, new) */
} py_helpers;
extern py_helpers helpers;

/* module.c */
/* Raises the exception for a failed call (status and message); NULL. */
PyObject *raise_status(strata_status st, const char *message);
/* Raises the exception for a fault in a file (file may be NULL; line and
   column 0 when none), with its file as the exception's .file; NULL. */
PyObject *raise_fault(strata_status st, const char *message, const char *file, long line,
                      long column);
/* Raises the exception a failed query's result describes; NULL. */
PyObject *raise_query_error(strata_result *r, const char *query, strata_status st,
                            const char *fallback);
/* Runs fn(arg) without the GIL; on the main thread a SIGINT meanwhile
   calls strata_interrupt(g) and strata_cancel_request(cancel) (either may
   be NULL), and Python raises KeyboardInterrupt once the GIL is back.
   -1 without running fn, the exception set, when a signal handler raised
   before it (a SIGINT that came between two calls). */
typedef void (*engine_call)(void *arg);
int run_without_gil(strata_graph *g, strata_cancel *cancel, engine_call fn, void *arg);

/* values.c */
/* A new Python object for v; nodes and relationships read through view
   (a ViewObject).  NULL with an exception set on failure. */
PyObject *value_to_py(const strata_value *v, PyObject *view);
/* A new strata value for o; where names it in a TypeError ("parameter
   'x'", "property 'age' of row 3").  NULL with an exception set. */
strata_value *py_to_value(PyObject *o, const char *where);
/* A map value of query parameters from a dict (or NULL for None). */
int params_to_value(PyObject *params, strata_value **out);

/* graph.c */
PyObject *view_wrap(strata_view *v, PyObject *graph);   /* steals v */
PyObject *graph_adopt(strata_graph *g);                 /* a Graph owning g (freed on failure) */
int graph_types_init(PyObject *module);

/* bulk.c: Graph._create_nodes and Graph._create_relationships */
PyObject *graph_create_nodes(PyObject *graph, PyObject *args);
PyObject *graph_create_relationships(PyObject *graph, PyObject *args);

/* branch.c: View.branch() and View.diff(other) */
PyObject *view_branch(PyObject *view, PyObject *unused);
PyObject *view_diff(PyObject *view, PyObject *other);

/* import.c: Graph._import_csv (strata_import) */
PyObject *graph_import_csv(PyObject *graph, PyObject *args);

/* durable.c: strata.open, Graph.checkpoint and Graph.log_stats */
PyObject *py_open(PyObject *self, PyObject *args, PyObject *kw);
PyObject *graph_checkpoint(PyObject *graph, PyObject *unused);
PyObject *graph_log_stats(PyObject *graph, PyObject *unused);

/* result.c */
PyObject *result_wrap(strata_result *r, PyObject *graph, strata_cancel *cancel);   /* steals r, cancel */
int result_type_init(PyObject *module);

/* entities.c */
PyObject *node_new(PyObject *view, strata_id id);
PyObject *relationship_new(PyObject *view, strata_id id);
PyObject *path_new(PyObject *nodes, PyObject *relationships);
int entity_types_init(PyObject *module);

#endif
