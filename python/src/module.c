/* The module: registration of the Python half's helpers, errors, the
   SIGINT bridge, and strata.load. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "strata_py.h"

py_helpers helpers;

/* ---- errors -------------------------------------------------------------- */

static const char *status_code(strata_status st)
{
    switch (st) {
    case STRATA_ENOMEM: return "OutOfMemory";
    case STRATA_EINVAL: return "ArgumentError";
    case STRATA_ENOTFOUND: return "EntityNotFound";
    case STRATA_ETYPE: return "TypeError";
    case STRATA_ECONNECTED:
    case STRATA_ECONSTRAINT: return "ConstraintVerificationFailed";
    case STRATA_EFULL: return "OutOfMemory";
    case STRATA_EIO: return "IOError";
    case STRATA_ECORRUPT: return "CorruptFile";
    case STRATA_EINTERRUPTED: return "Interrupted";
    default: return "Error";
    }
}

static PyObject *raise_made(const char *code, const char *detail, const char *message,
                            long line, long column, const char *query)
{
    if (!helpers.make_error) {
        PyErr_SetString(PyExc_RuntimeError, message);
        return NULL;
    }
    PyObject *exc = PyObject_CallFunction(helpers.make_error, "szslls", code, detail, message,
                                          line, column, query);
    if (exc) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
    return NULL;
}

PyObject *raise_fault(strata_status st, const char *message, const char *file, long line,
                      long column)
{
    if (!helpers.make_error || !file)
        return raise_made(status_code(st), NULL, message, line, column, NULL);
    PyObject *path = PyUnicode_DecodeFSDefault(file);
    if (!path)
        return NULL;
    PyObject *exc = PyObject_CallFunction(helpers.make_error, "szsllOO", status_code(st), NULL,
                                          message, line, column, Py_None, path);
    Py_DECREF(path);
    if (exc) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
    return NULL;
}

PyObject *raise_status(strata_status st, const char *message)
{
    return raise_made(status_code(st), NULL, message && *message ? message : strata_errstr(st),
                      0, 0, NULL);
}

PyObject *raise_query_error(strata_result *r, const char *query, strata_status st,
                            const char *fallback)
{
    const strata_query_error *e = r ? strata_result_error(r) : NULL;
    if (!e)
        return raise_status(st, fallback);
    /* An interrupt that came from Ctrl-C is Python's KeyboardInterrupt. */
    if (e->code && !strcmp(e->code, "Interrupted") && PyErr_CheckSignals() < 0)
        return NULL;
    return raise_made(e->code ? e->code : "Error", e->detail, e->message, (long)e->line,
                      (long)e->column, query);
}

/* ---- the SIGINT bridge ------------------------------------------------- */

/* The graph whose call the main thread is running without the GIL.  The
   handler interrupts it, then hands the signal to the handler that was
   there before (Python's, which raises KeyboardInterrupt once the GIL is
   back). */
static strata_graph *volatile running_graph;
static strata_cancel *volatile running_cancel;
static struct sigaction previous_sigint;
static unsigned long main_thread;

static void on_sigint(int sig, siginfo_t *info, void *ctx)
{
    strata_graph *g = running_graph;
    strata_cancel *c = running_cancel;
    if (g)
        strata_interrupt(g);
    if (c)
        strata_cancel_request(c);
    if (previous_sigint.sa_flags & SA_SIGINFO) {
        if (previous_sigint.sa_sigaction)
            previous_sigint.sa_sigaction(sig, info, ctx);
    } else if (previous_sigint.sa_handler != SIG_DFL && previous_sigint.sa_handler != SIG_IGN) {
        previous_sigint.sa_handler(sig);
    }
}

static void install_sigint_bridge(void)
{
    struct sigaction now;
    if (sigaction(SIGINT, NULL, &now) != 0)
        return;
    /* Only in front of a handler that is a function (Python's). */
    if (!(now.sa_flags & SA_SIGINFO) && (now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN))
        return;
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_sigint;
    ours.sa_flags = SA_SIGINFO | (now.sa_flags & SA_RESTART);
    sigemptyset(&ours.sa_mask);
    previous_sigint = now;
    sigaction(SIGINT, &ours, NULL);
}

int run_without_gil(strata_graph *g, strata_cancel *cancel, engine_call fn, void *arg)
{
    bool on_main = PyThread_get_thread_ident() == main_thread;
    if (on_main) {
        running_graph = g;
        running_cancel = cancel;
        /* A SIGINT before the bridge was armed (between two calls, say
           two rows of a result) only tripped Python's flag, and nothing
           would stop the call: raise it now instead.  One after arming
           reaches the engine too. */
        if (PyErr_CheckSignals() < 0) {
            running_graph = NULL;
            running_cancel = NULL;
            return -1;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    fn(arg);
    Py_END_ALLOW_THREADS
    if (on_main) {
        running_graph = NULL;
        running_cancel = NULL;
    }
    return 0;
}

/* ---- module functions ------------------------------------------------ */

static PyObject *py_register(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = { "make_error", "duration_type", "make_temporal", "temporal_fields",
                             "make_change", NULL };
    PyObject *a, *b, *c, *d, *e;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO", names, &a, &b, &c, &d, &e))
        return NULL;
    PyObject **slots[] = { &helpers.make_error, &helpers.duration_type, &helpers.make_temporal,
                           &helpers.temporal_fields, &helpers.make_change };
    PyObject *given[] = { a, b, c, d, e };
    for (int i = 0; i < 5; i++) {
        PyObject *old = *slots[i];
        *slots[i] = Py_NewRef(given[i]);
        Py_XDECREF(old);
    }
    Py_RETURN_NONE;
}

typedef struct load_call {
    const char *path;
    strata_graph *g;
    strata_status st;
    char err[512];
} load_call;

static void do_load(void *arg)
{
    load_call *c = arg;
    c->st = strata_load_ex(c->path, &c->g, c->err, sizeof c->err);
}

static PyObject *py_load(PyObject *self, PyObject *arg)
{
    (void)self;
    PyObject *bytes;
    if (!PyUnicode_FSConverter(arg, &bytes))
        return NULL;
    load_call c = { .path = PyBytes_AsString(bytes) };
    int ran = run_without_gil(NULL, NULL, do_load, &c);
    Py_DECREF(bytes);
    if (ran < 0)
        return NULL;
    if (c.st != STRATA_OK)
        return raise_status(c.st, c.err);
    return graph_adopt(c.g);
}

static PyMethodDef module_methods[] = {
    { "_register", (PyCFunction)(void (*)(void))py_register, METH_VARARGS | METH_KEYWORDS,
      "Registers the helpers of the Python half of the package." },
    { "load", py_load, METH_O, "load(path) -> Graph: a graph saved with Graph.save." },
    { "open", (PyCFunction)(void (*)(void))py_open, METH_VARARGS | METH_KEYWORDS,
      "open(path, sync='full', *, truncate_corrupt=False, checkpoint_bytes=None) -> Graph:\n"
      "the database at path (created when missing), every commit logged." },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_strata", "strata's engine, over libstrata's public API.", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__strata(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (graph_types_init(m) < 0 || result_type_init(m) < 0 || entity_types_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    main_thread = PyThread_get_thread_ident();
    install_sigint_bridge();
    return m;
}
