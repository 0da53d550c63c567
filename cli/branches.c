/* branches — :branch, :branches, :use, :diff, :discard (branches.h).

   Answers that are rows (:branches, :diff) are built as a list of maps
   and printed by a fixed read-only statement that unwinds it, so they
   come out in every output format exactly as query results do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/branches.h"

#define NAME_MAX_LEN 64

static bool name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > NAME_MAX_LEN)
        return false;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
            return false;
    return true;
}

static char *trim(char *arg)
{
    while (*arg == ' ' || *arg == '\t')
        arg++;
    char *end = arg + strlen(arg);
    while (end > arg && (end[-1] == ' ' || end[-1] == '\t'))
        *--end = '\0';
    return arg;
}

static named_graph *find(session *s, const char *name)
{
    for (size_t i = 0; i < s->ngraphs; i++)
        if (strcmp(s->graphs[i].name, name) == 0)
            return &s->graphs[i];
    return NULL;
}

/* The table starts, at the first :branch, with the graph in use as
   "main".  -1 when out of memory. */
static int ensure_main(session *s)
{
    if (s->ngraphs)
        return 0;
    named_graph *t = calloc(1, sizeof *t);
    char *name = strdup("main");
    if (!t || !name) {
        free(t);
        free(name);
        return -1;
    }
    t[0].name = name;
    s->graphs = t;
    s->ngraphs = 1;
    s->in_use = 0;
    return 0;
}

/* Whether a command that changes the graph in use may run: not inside a
   transaction, whose writes belong to the graph it began on. */
static bool no_transaction(session *s, const char *what)
{
    if (!strata_in_transaction(s->g))
        return true;
    char msg[160];
    snprintf(msg, sizeof msg, "a transaction is open: :commit or :rollback before %s", what);
    session_error(s, msg);
    return false;
}

static void switch_to(session *s, size_t i)
{
    named_graph *cur = &s->graphs[s->in_use], *next = &s->graphs[i];
    cur->g = s->g;
    cur->path = s->path;
    s->g = next->g;
    s->path = next->path;
    next->g = NULL;
    next->path = NULL;
    s->in_use = i;
}

void cmd_branch(session *s, char *arg)
{
    const char *name = trim(arg);
    if (!name_ok(name)) {
        session_error(s, "usage: :branch NAME (1 to 64 letters, digits, '_' or '-')");
        return;
    }
    if (!no_transaction(s, ":branch"))
        return;
    if (ensure_main(s) != 0) {
        session_fail(s, "OutOfMemory", "out of memory naming the graph in use");
        return;
    }
    if (find(s, name)) {
        char msg[128];
        snprintf(msg, sizeof msg, "a graph named '%s' exists already (:branches lists them)",
                 name);
        session_error(s, msg);
        return;
    }
    named_graph *t = realloc(s->graphs, (s->ngraphs + 1) * sizeof *t);
    if (!t) {
        session_fail(s, "OutOfMemory", "out of memory making a branch");
        return;
    }
    s->graphs = t;
    named_graph *e = &t[s->ngraphs];
    *e = (named_graph){ strdup(name), strdup(t[s->in_use].name), NULL, NULL };
    strata_view *v = NULL;
    strata_status st = e->name && e->from ? strata_snapshot(s->g, &v) : STRATA_ENOMEM;
    if (st == STRATA_OK) {
        st = strata_branch(v, &e->g);
        if (st != STRATA_OK)
            session_fail(s, "OutOfMemory", strata_view_errmsg(v));
    } else {
        session_fail(s, "OutOfMemory", "out of memory making a branch");
    }
    strata_view_release(&v);
    if (st != STRATA_OK) {
        free(e->name);
        free(e->from);
        return;
    }
    s->ngraphs++;
    switch_to(s, s->ngraphs - 1);
}

void cmd_use(session *s, char *arg)
{
    const char *name = trim(arg);
    named_graph *e = *name ? find(s, name) : NULL;
    if (!e && strcmp(name, "main") == 0 && s->ngraphs == 0)
        return;   /* no branch yet: main is in use */
    if (!e) {
        char msg[160];
        snprintf(msg, sizeof msg, *name ? "no graph named '%.64s' (:branches lists them)"
                                        : "usage: :use NAME",
                 name);
        session_error(s, msg);
        return;
    }
    if ((size_t)(e - s->graphs) == s->in_use || !no_transaction(s, ":use"))
        return;
    switch_to(s, (size_t)(e - s->graphs));
}

void cmd_discard(session *s, char *arg)
{
    const char *name = trim(arg);
    named_graph *e = *name ? find(s, name) : NULL;
    if (!e) {
        session_error(s, *name ? "no such graph (:branches lists them)" : "usage: :discard NAME");
        return;
    }
    size_t i = (size_t)(e - s->graphs);
    if (i == s->in_use) {
        session_error(s, "that graph is in use: :use another one first");
        return;
    }
    strata_graph_free(&e->g);
    free(e->name);
    free(e->from);
    free(e->path);
    memmove(e, e + 1, (s->ngraphs - i - 1) * sizeof *e);
    s->ngraphs--;
    if (s->in_use > i)
        s->in_use--;
}

void branches_free(session *s)
{
    for (size_t i = 0; i < s->ngraphs; i++) {
        named_graph *e = &s->graphs[i];
        if (i != s->in_use) {
            if (e->g && strata_in_transaction(e->g))
                strata_rollback(e->g);
            strata_graph_free(&e->g);
            free(e->path);
        }
        free(e->name);
        free(e->from);
    }
    free(s->graphs);
    s->graphs = NULL;
    s->ngraphs = 0;
}

/* ---- rows --------------------------------------------------------------- */

/* A growing array of row maps, listed and printed at the end. */
typedef struct rows {
    strata_value **v;
    size_t n, cap;
    bool failed;
} rows;

static void rows_add(rows *r, const char *const *keys, strata_value *const *vals, size_t n)
{
    strata_value *map = NULL;
    bool ok = !r->failed;
    for (size_t i = 0; i < n; i++)
        ok = ok && vals[i];
    if (ok)
        map = strata_value_map(keys, (const strata_value *const *)vals, n);
    for (size_t i = 0; i < n; i++)
        strata_value_free((strata_value **)&vals[i]);
    if (map && r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        strata_value **v = realloc(r->v, cap * sizeof *v);
        if (v) {
            r->v = v;
            r->cap = cap;
        }
    }
    if (!map || r->n == r->cap) {
        strata_value_free(&map);
        r->failed = true;
        return;
    }
    r->v[r->n++] = map;
}

/* Prints the rows through `UNWIND $rows AS r RETURN ...` on v. */
static void rows_print(session *s, strata_view *v, rows *r, const char *returns)
{
    strata_value *list = r->failed ? NULL
                                   : strata_value_list((const strata_value *const *)r->v, r->n);
    for (size_t i = 0; i < r->n; i++)
        strata_value_free(&r->v[i]);
    free(r->v);
    const char *key = "rows";
    strata_value *params = list ? strata_value_map(&key, (const strata_value *const *)&list, 1)
                                : NULL;
    strata_value_free(&list);
    if (!params) {
        session_fail(s, "OutOfMemory", "out of memory listing the rows");
        return;
    }
    char text[512];
    snprintf(text, sizeof text, "UNWIND $rows AS r RETURN %s", returns);
    session_run_view(s, v, text, params);
    strata_value_free(&params);
}

static strata_value *text_value(const char *s)
{
    return s ? strata_value_string(s, strlen(s)) : strata_value_null();
}

/* ---- :branches ----------------------------------------------------------- */

void cmd_branches(session *s, char *arg)
{
    (void)arg;
    strata_view *v = session_view(s);
    if (!v) {
        session_error(s, strata_errmsg(s->g));
        return;
    }
    rows r = { 0 };
    static const char *const keys[] = { "created_from", "in_use", "name", "nodes",
                                        "private_bytes", "relationships" };
    size_t n = s->ngraphs ? s->ngraphs : 1;
    for (size_t i = 0; i < n; i++) {
        const named_graph *e = s->ngraphs ? &s->graphs[i] : NULL;
        bool in_use = !e || i == s->in_use;
        strata_memstats ms = { 0 };
        strata_memory_stats(in_use ? s->g : e->g, &ms);
        strata_value *vals[] = {
            text_value(e ? e->from : NULL),
            strata_value_bool(in_use),
            text_value(e ? e->name : "main"),
            strata_value_int((int64_t)ms.nodes),
            strata_value_int((int64_t)ms.private_bytes),
            strata_value_int((int64_t)ms.relationships),
        };
        rows_add(&r, keys, vals, 6);
    }
    rows_print(s, v, &r,
               "r.name AS name, r.created_from AS created_from, r.in_use AS in_use, "
               "r.nodes AS nodes, r.relationships AS relationships, "
               "r.private_bytes AS private_bytes");
    strata_view_release(&v);
}

/* ---- :diff ------------------------------------------------------------------ */

static const char *const change_names[] = {
    [STRATA_NODE_CREATED] = "node created",
    [STRATA_NODE_DELETED] = "node deleted",
    [STRATA_LABEL_ADDED] = "label added",
    [STRATA_LABEL_REMOVED] = "label removed",
    [STRATA_NODE_PROPERTY_SET] = "property set",
    [STRATA_NODE_PROPERTY_REMOVED] = "property removed",
    [STRATA_REL_CREATED] = "relationship created",
    [STRATA_REL_DELETED] = "relationship deleted",
    [STRATA_REL_PROPERTY_SET] = "relationship property set",
    [STRATA_REL_PROPERTY_REMOVED] = "relationship property removed",
};

/* An owned copy of a borrowed value (the API copies through a list), or
   null for none; NULL when out of memory. */
static strata_value *opt_value(const strata_value *v)
{
    if (!v)
        return strata_value_null();
    strata_value *list = strata_value_list(&v, 1), *copy = NULL;
    if (list)
        strata_value_list_get(list, 0, &copy);
    strata_value_free(&list);
    return copy;
}

static int add_change(const strata_change *c, void *arg)
{
    rows *r = arg;
    static const char *const keys[] = { "change", "end", "id", "name", "new", "old", "start" };
    bool rel = c->kind == STRATA_REL_CREATED || c->kind == STRATA_REL_DELETED;
    bool named = c->kind != STRATA_NODE_CREATED && c->kind != STRATA_NODE_DELETED;
    strata_value *vals[] = {
        text_value(change_names[c->kind]),
        rel ? strata_value_int((int64_t)c->end) : strata_value_null(),
        strata_value_int((int64_t)c->id),
        text_value(named ? c->name : NULL),
        opt_value(c->new_value),
        opt_value(c->old_value),
        rel ? strata_value_int((int64_t)c->start) : strata_value_null(),
    };
    rows_add(r, keys, vals, 7);
    return r->failed;
}

/* :diff NAME — what the graph in use changed since NAME: the changes that
   turn NAME's committed state into the committed state in use. */
void cmd_diff(session *s, char *arg)
{
    const char *name = trim(arg);
    named_graph *e = *name ? find(s, name) : NULL;
    bool self = (e && (size_t)(e - s->graphs) == s->in_use) ||
                (!e && s->ngraphs == 0 && strcmp(name, "main") == 0);
    if (!e && !self) {
        session_error(s, *name ? "no graph named that (:branches lists them)"
                               : "usage: :diff NAME");
        return;
    }
    strata_view *from = NULL, *to = NULL;
    if (strata_snapshot(self ? s->g : e->g, &from) != STRATA_OK ||
        strata_snapshot(s->g, &to) != STRATA_OK) {
        session_fail(s, "OutOfMemory", "out of memory taking the views to compare");
        strata_view_release(&from);
        return;
    }
    rows r = { 0 };
    strata_status st = strata_diff(from, to, add_change, &r);
    if (st == STRATA_EINVAL) {
        session_error(s, strata_view_errmsg(from));   /* unrelated graphs */
        free(r.v);
    } else {
        r.failed = r.failed || st != STRATA_OK;   /* out of memory */
        rows_print(s, to, &r,
                   "r.change AS change, r.id AS id, r.name AS name, r.start AS start, "
                   "r.end AS `end`, r.old AS old, r.new AS new");
    }
    strata_view_release(&from);
    strata_view_release(&to);
}
