/*
 * Branches (strata_branch) and diff (strata_diff): isolation both ways,
 * branches of branches and any free order, what a branch copies (the copy
 * counter), private memory, indices, queries, save and load, allocation
 * failure, and the diff's changes and their order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strata.h"
#include "storage/mem.h"
#include "storage/pvec.h"

static strata_token tok(strata_graph *g, strata_token_kind kind, const char *name)
{
    strata_token t;
    assert_int_equal(strata_token_intern(g, kind, name, &t), STRATA_OK);
    return t;
}

static strata_id node(strata_graph *g, const strata_token *labels, size_t n)
{
    strata_id id;
    assert_int_equal(strata_node_create(g, labels, n, &id), STRATA_OK);
    return id;
}

static strata_id rel(strata_graph *g, strata_id a, strata_id b, strata_token t)
{
    strata_id id;
    assert_int_equal(strata_rel_create(g, a, b, t, &id), STRATA_OK);
    return id;
}

static void set_int(strata_graph *g, strata_id n, strata_token k, int64_t i)
{
    strata_value *v = strata_value_int(i);
    assert_int_equal(strata_node_set(g, n, k, v), STRATA_OK);
    strata_value_free(&v);
}

static strata_view *snap(strata_graph *g)
{
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    return v;
}

static strata_graph *branch(strata_view *v)
{
    strata_graph *b;
    assert_int_equal(strata_branch(v, &b), STRATA_OK);
    return b;
}

/* The node's integer property, or -1 when it has none. */
static int64_t get_int(strata_view *v, strata_id n, strata_token k)
{
    strata_value *val;
    assert_int_equal(strata_node_get(v, n, k, &val), STRATA_OK);
    int64_t i = -1;
    if (strata_value_type(val) == STRATA_INT)
        assert_int_equal(strata_value_get_int(val, &i), STRATA_OK);
    strata_value_free(&val);
    return i;
}

static int64_t graph_int(strata_graph *g, strata_id n, strata_token k)
{
    strata_view *v = snap(g);
    int64_t i = get_int(v, n, k);
    strata_view_release(&v);
    return i;
}

static void check(strata_graph *g)
{
    strata_view *v = snap(g);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    strata_view_release(&v);
}

/* ---- isolation ----------------------------------------------------------- */

static void test_writes_stay_on_their_side(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token k = tok(g, STRATA_KEY, "k");
    strata_token person = tok(g, STRATA_LABEL, "Person");
    for (int i = 0; i < 100; i++)
        set_int(g, node(g, &person, 1), k, i);
    strata_view *v = snap(g);
    strata_graph *b = branch(v);
    strata_view_release(&v);

    set_int(b, 5, k, 500);
    set_int(g, 6, k, 600);
    strata_id fresh = node(b, NULL, 0);
    assert_int_equal(fresh, 100);
    assert_int_equal(graph_int(g, 5, k), 5);
    assert_int_equal(graph_int(b, 5, k), 500);
    assert_int_equal(graph_int(b, 6, k), 6);
    assert_int_equal(graph_int(g, 6, k), 600);
    strata_view *gv = snap(g), *bv = snap(b);
    assert_false(strata_node_exists(gv, 100));
    assert_true(strata_node_exists(bv, 100));
    assert_int_equal(strata_node_count(gv), 100);
    assert_int_equal(strata_node_count(bv), 101);
    strata_view_release(&gv);
    strata_view_release(&bv);

    /* A branch of the branch, then the original freed first. */
    v = snap(b);
    strata_graph *bb = branch(v);
    strata_view_release(&v);
    strata_graph_free(&g);
    set_int(bb, 5, k, 5000);
    assert_int_equal(graph_int(b, 5, k), 500);
    strata_graph_free(&b);
    assert_int_equal(graph_int(bb, 5, k), 5000);
    assert_int_equal(graph_int(bb, 7, k), 7);
    check(bb);
    strata_graph_free(&bb);
}

static void test_branch_of_an_old_view(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token k = tok(g, STRATA_KEY, "k");
    strata_id n = node(g, NULL, 0);
    set_int(g, n, k, 1);
    strata_view *old = snap(g);
    set_int(g, n, k, 2);
    strata_graph *b = branch(old);
    assert_int_equal(graph_int(b, n, k), 1);
    set_int(b, n, k, 3);
    assert_int_equal(get_int(old, n, k), 1);
    assert_int_equal(graph_int(g, n, k), 2);
    strata_view_release(&old);
    strata_graph_free(&b);
    assert_int_equal(graph_int(g, n, k), 2);
    strata_graph_free(&g);
}

static void test_transactions_and_queries_in_a_branch(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r;
    assert_int_equal(strata_query(g, "UNWIND range(1, 50) AS i CREATE (:P {i: i})", NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);
    strata_view *v = snap(g);
    strata_graph *b = branch(v);
    strata_view_release(&v);

    assert_int_equal(strata_begin(b), STRATA_OK);
    assert_int_equal(strata_query(b, "MATCH (p:P) WHERE p.i <= 10 DETACH DELETE p", NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);
    assert_int_equal(strata_rollback(b), STRATA_OK);
    assert_int_equal(strata_query(b, "MATCH (p:P) WHERE p.i <= 10 SET p.i = -p.i", NULL, &r),
                     STRATA_OK);
    strata_result_free(&r);

    const strata_value *const *row;
    assert_int_equal(strata_query(g, "MATCH (p:P) WHERE p.i < 0 RETURN count(*)", NULL, &r),
                     STRATA_OK);
    assert_true(strata_result_next(r, &row));
    int64_t c;
    assert_int_equal(strata_value_get_int(row[0], &c), STRATA_OK);
    assert_int_equal(c, 0);
    strata_result_free(&r);
    assert_int_equal(strata_query(b, "MATCH (p:P) WHERE p.i < 0 RETURN count(*)", NULL, &r),
                     STRATA_OK);
    assert_true(strata_result_next(r, &row));
    assert_int_equal(strata_value_get_int(row[0], &c), STRATA_OK);
    assert_int_equal(c, 10);
    strata_result_free(&r);
    strata_graph_free(&g);
    strata_graph_free(&b);
}

/* ---- what a branch copies ------------------------------------------------- */

#define BIG_N 10000

static void test_copy_counter(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token k = tok(g, STRATA_KEY, "k");
    for (int i = 0; i < BIG_N; i++)
        set_int(g, node(g, NULL, 0), k, i);

    /* What a SET under a held view copies. */
    strata_view *held = snap(g);
    uint64_t before = mem_copied_entries();
    set_int(g, 1234, k, -1);
    uint64_t under_view = mem_copied_entries() - before;
    strata_view_release(&held);
    assert_true(under_view > 0 && under_view <= 100);

    /* Branching copies nothing; the first SET in the branch copies what
       the SET under a held view copied. */
    strata_view *v = snap(g);
    before = mem_copied_entries();
    strata_graph *b = branch(v);
    assert_int_equal(mem_copied_entries() - before, 0);
    strata_view_release(&v);
    before = mem_copied_entries();
    set_int(b, 4321, k, -1);
    assert_int_equal(mem_copied_entries() - before, under_view);
    /* and the source, written after, copies its own path only */
    before = mem_copied_entries();
    set_int(g, 4321, k, -2);
    assert_true(mem_copied_entries() - before <= under_view);

    /* Freeing the source leaves the branch whole. */
    strata_graph_free(&g);
    assert_int_equal(graph_int(b, 4321, k), -1);
    assert_int_equal(graph_int(b, 1234, k), -1);
    assert_int_equal(graph_int(b, 9999, k), 9999);
    check(b);
    strata_graph_free(&b);
}

static void test_private_bytes(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token k = tok(g, STRATA_KEY, "k");
    for (int i = 0; i < BIG_N; i++)
        set_int(g, node(g, NULL, 0), k, i);
    strata_memstats ms;
    assert_int_equal(strata_memory_stats(g, &ms), STRATA_OK);
    /* Alone, the graph's storage is all private. */
    assert_true(ms.private_bytes > ms.graph_bytes / 2);
    uint64_t alone = ms.private_bytes;

    strata_view *v = snap(g);
    strata_graph *b = branch(v);
    strata_view_release(&v);
    strata_memstats bs;
    assert_int_equal(strata_memory_stats(b, &bs), STRATA_OK);
    assert_true(bs.private_bytes < 1024);   /* a version header */
    assert_int_equal(bs.graph_bytes, ms.graph_bytes + (bs.graph_bytes - ms.graph_bytes));
    assert_int_equal(strata_memory_stats(g, &ms), STRATA_OK);
    assert_true(ms.private_bytes < 1024);   /* everything is shared now */

    for (int i = 0; i < 100; i++)
        set_int(b, (strata_id)i * 97, k, -i);
    assert_int_equal(strata_memory_stats(b, &bs), STRATA_OK);
    /* 100 paths and records: far more than nothing, far less than the graph */
    assert_true(bs.private_bytes > 100 * sizeof(void *));
    assert_true(bs.private_bytes < alone / 4);
    strata_graph_free(&b);
    set_int(g, 0, k, 0);   /* the next write folds back */
    assert_int_equal(strata_memory_stats(g, &ms), STRATA_OK);
    assert_true(ms.private_bytes > alone / 2);
    strata_graph_free(&g);
}

/* ---- indices ---------------------------------------------------------------- */

static strata_result *run(strata_graph *g, const char *q)
{
    strata_result *r;
    assert_int_equal(strata_query(g, q, NULL, &r), STRATA_OK);
    const strata_value *const *row;
    while (strata_result_next(r, &row))
        ;
    assert_null(strata_result_error(r));
    return r;
}

static size_t index_count(strata_graph *g)
{
    strata_view *v = snap(g);
    size_t n;
    assert_int_equal(strata_indexes(v, NULL, 0, &n), STRATA_OK);
    strata_view_release(&v);
    return n;
}

static void test_indices_are_inherited_and_ddl_stays(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r = run(g, "CREATE INDEX p_i FOR (p:P) ON (p.i)");
    strata_result_free(&r);
    r = run(g, "UNWIND range(1, 200) AS i CREATE (:P {i: i, j: i})");
    strata_result_free(&r);
    strata_view *v = snap(g);
    strata_graph *b = branch(v);
    strata_view_release(&v);
    assert_int_equal(index_count(b), 1);
    r = run(b, "CREATE INDEX p_j FOR (p:P) ON (p.j)");
    strata_result_free(&r);
    r = run(b, "MATCH (p:P {i: 7}) SET p.i = 7000");
    strata_result_free(&r);
    assert_int_equal(index_count(b), 2);
    assert_int_equal(index_count(g), 1);
    r = run(g, "DROP INDEX p_i");
    strata_result_free(&r);
    assert_int_equal(index_count(g), 0);
    assert_int_equal(index_count(b), 2);

    /* The branch's index answers with the branch's data. */
    const strata_value *const *row;
    assert_int_equal(strata_query(b, "MATCH (p:P {i: 7000}) RETURN p.j", NULL, &r), STRATA_OK);
    assert_true(strata_result_next(r, &row));
    int64_t j;
    assert_int_equal(strata_value_get_int(row[0], &j), STRATA_OK);
    assert_int_equal(j, 7);
    strata_result_free(&r);
    assert_int_equal(strata_query(g, "MATCH (p:P {i: 7000}) RETURN p", NULL, &r), STRATA_OK);
    assert_false(strata_result_next(r, &row));
    strata_result_free(&r);
    check(g);
    check(b);
    strata_graph_free(&g);
    strata_graph_free(&b);
}

/* ---- diff ------------------------------------------------------------------- */

typedef struct change_log {
    char lines[64][96];
    size_t n;
    int stop_after;   /* 0: never */
} change_log;

static const char *const kind_names[] = { "node+", "node-", "label+", "label-", "prop", "prop-",
                                          "rel+",  "rel-",  "rprop", "rprop-" };

static void value_text(const strata_value *v, char *buf, size_t cap)
{
    int64_t i;
    if (!v)
        snprintf(buf, cap, "none");
    else if (strata_value_get_int(v, &i) == STRATA_OK)
        snprintf(buf, cap, "%lld", (long long)i);
    else
        snprintf(buf, cap, "?");
}

static int record(const strata_change *c, void *arg)
{
    change_log *log = arg;
    assert_true(log->n < 64);
    char *line = log->lines[log->n++];
    char o[24], n[24];
    value_text(c->old_value, o, sizeof o);
    value_text(c->new_value, n, sizeof n);
    switch (c->kind) {
    case STRATA_NODE_CREATED:
    case STRATA_NODE_DELETED:
        snprintf(line, 96, "%s %llu", kind_names[c->kind], (unsigned long long)c->id);
        break;
    case STRATA_REL_CREATED:
    case STRATA_REL_DELETED:
        snprintf(line, 96, "%s %llu %s %llu->%llu", kind_names[c->kind],
                 (unsigned long long)c->id, c->name, (unsigned long long)c->start,
                 (unsigned long long)c->end);
        break;
    case STRATA_LABEL_ADDED:
    case STRATA_LABEL_REMOVED:
        snprintf(line, 96, "%s %llu %s", kind_names[c->kind], (unsigned long long)c->id,
                 c->name);
        break;
    default:
        snprintf(line, 96, "%s %llu %s %s %s", kind_names[c->kind], (unsigned long long)c->id,
                 c->name, o, n);
    }
    return log->stop_after && (int)log->n >= log->stop_after;
}

static void expect_log(const change_log *log, const char *const *want, size_t n)
{
    for (size_t i = 0; i < log->n || i < n; i++) {
        const char *got = i < log->n ? log->lines[i] : "(nothing)";
        const char *exp = i < n ? want[i] : "(nothing)";
        if (strcmp(got, exp) != 0)
            fail_msg("change %zu: got '%s', expected '%s'", i, got, exp);
    }
}

static void test_diff_reports_every_kind_in_order(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token a = tok(g, STRATA_LABEL, "A"), bl = tok(g, STRATA_LABEL, "B");
    strata_token k = tok(g, STRATA_KEY, "k"), t = tok(g, STRATA_RELTYPE, "T");
    for (int i = 0; i < 40; i++)
        set_int(g, node(g, &a, 1), k, i);
    strata_id r0 = rel(g, 0, 1, t);
    rel(g, 1, 2, t);
    strata_view *base = snap(g);
    strata_graph *b = branch(base);

    set_int(b, 3, k, 33);
    assert_int_equal(strata_node_remove(b, 4, k), STRATA_OK);
    assert_int_equal(strata_node_add_label(b, 5, bl), STRATA_OK);
    assert_int_equal(strata_node_remove_label(b, 6, a), STRATA_OK);
    assert_int_equal(strata_rel_delete(b, r0), STRATA_OK);
    assert_int_equal(strata_node_detach_delete(b, 2), STRATA_OK);   /* and rel 1 */
    strata_id fresh = node(b, &bl, 1);   /* takes id 2 again (LIFO free list) */
    assert_int_equal(fresh, 2);
    strata_id n40 = node(b, NULL, 0);
    set_int(b, n40, k, 7);
    strata_id r2 = rel(b, 3, n40, t);
    strata_value *v9 = strata_value_int(9);
    assert_int_equal(strata_rel_set(b, r2, k, v9), STRATA_OK);
    strata_value_free(&v9);

    strata_view *now = snap(b);
    change_log log = { 0 };
    assert_int_equal(strata_diff(base, now, record, &log), STRATA_OK);
    /* rel 1 is reused by r2 (LIFO): other endpoints, so deleted and
       created; node 2 was deleted and re-created: its changes (labels
       and properties each in token order). */
    assert_int_equal(r2, 1);
    const char *want[] = {
        "rel- 0 T 0->1",
        "rel- 1 T 1->2",
        "label- 2 A",
        "label+ 2 B",
        "prop- 2 k 2 none",
        "prop 3 k 3 33",
        "prop- 4 k 4 none",
        "label+ 5 B",
        "label- 6 A",
        "node+ 40",
        "prop 40 k none 7",
        "rel+ 1 T 3->40",
        "rprop 1 k none 9",
    };
    expect_log(&log, want, sizeof want / sizeof want[0]);

    /* The other way round is the inverse. */
    change_log back = { 0 };
    assert_int_equal(strata_diff(now, base, record, &back), STRATA_OK);
    const char *inverse[] = {
        "rel- 1 T 3->40",
        "rprop- 1 k 9 none",
        "label+ 2 A",
        "label- 2 B",
        "prop 2 k none 2",
        "prop 3 k 33 3",
        "prop 4 k none 4",
        "label- 5 B",
        "label+ 6 A",
        "node- 40",
        "prop- 40 k 7 none",
        "rel+ 0 T 0->1",
        "rel+ 1 T 1->2",
    };
    expect_log(&back, inverse, sizeof inverse / sizeof inverse[0]);

    /* A view against itself, and a graph against its own later state. */
    change_log none = { 0 };
    assert_int_equal(strata_diff(now, now, record, &none), STRATA_OK);
    assert_int_equal(none.n, 0);
    strata_view *g0 = snap(g);
    set_int(g, 39, k, 390);
    strata_view *g1 = snap(g);
    change_log own = { 0 };
    assert_int_equal(strata_diff(g0, g1, record, &own), STRATA_OK);
    const char *own_want[] = { "prop 39 k 39 390" };
    expect_log(&own, own_want, 1);

    /* Stopping early. */
    change_log stop = { .stop_after = 2 };
    assert_int_equal(strata_diff(base, now, record, &stop), STRATA_EINTERRUPTED);
    assert_int_equal(stop.n, 2);

    strata_view_release(&g0);
    strata_view_release(&g1);
    strata_view_release(&base);
    strata_view_release(&now);
    strata_graph_free(&g);
    strata_graph_free(&b);
}

static int count_changes(const strata_change *c, void *arg)
{
    (void)c;
    ++*(size_t *)arg;
    return 0;
}

static void test_diff_between_two_branches(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token k = tok(g, STRATA_KEY, "k");
    for (int i = 0; i < 1000; i++)
        set_int(g, node(g, NULL, 0), k, i);
    strata_view *v = snap(g);
    strata_graph *x = branch(v), *y = branch(v);
    strata_view_release(&v);
    strata_token fresh = tok(x, STRATA_KEY, "fresh");   /* interned in one branch */
    set_int(x, 10, fresh, 1);
    set_int(y, 20, k, -20);
    strata_view *xv = snap(x), *yv = snap(y);
    change_log log = { 0 };
    assert_int_equal(strata_diff(xv, yv, record, &log), STRATA_OK);
    const char *want[] = { "prop- 10 fresh 1 none", "prop 20 k 20 -20" };
    expect_log(&log, want, 2);
    strata_view_release(&xv);
    strata_view_release(&yv);
    strata_graph_free(&x);
    strata_graph_free(&y);
    strata_graph_free(&g);
}

static void test_diff_of_unrelated_graphs_is_an_error(void **state)
{
    (void)state;
    strata_graph *g, *h;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    assert_int_equal(strata_graph_new(&h), STRATA_OK);
    strata_view *a = snap(g), *b = snap(h);
    size_t n = 0;
    assert_int_equal(strata_diff(a, b, count_changes, &n), STRATA_EINVAL);
    assert_non_null(strstr(strata_view_errmsg(a), "unrelated"));
    assert_int_equal(strata_diff(a, a, NULL, NULL), STRATA_EINVAL);
    assert_int_equal(strata_diff(NULL, a, count_changes, &n), STRATA_EINVAL);
    strata_graph *out = NULL;
    assert_int_equal(strata_branch(NULL, &out), STRATA_EINVAL);
    assert_int_equal(strata_branch(a, NULL), STRATA_EINVAL);
    strata_view_release(&a);
    strata_view_release(&b);
    strata_graph_free(&g);
    strata_graph_free(&h);
}

/* ---- save and load ------------------------------------------------------------ */

static void test_save_and_load_a_branch(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_result *r = run(g, "UNWIND range(1, 100) AS i CREATE (:P {i: i})-[:T]->(:Q)");
    strata_result_free(&r);
    strata_view *v = snap(g);
    strata_graph *b = branch(v);
    strata_view_release(&v);
    r = run(b, "MATCH (p:P) WHERE p.i % 2 = 0 DETACH DELETE p");
    strata_result_free(&r);
    char path[] = "/tmp/strata-branch-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(strata_save(b, path), STRATA_OK);
    strata_graph *l;
    assert_int_equal(strata_load(path, &l), STRATA_OK);
    unlink(path);
    strata_view *lv = snap(l), *bv = snap(b);
    assert_int_equal(strata_node_count(lv), 150);
    assert_int_equal(strata_node_count(lv), strata_node_count(bv));
    assert_int_equal(strata_rel_count(lv), 50);
    /* A loaded graph is a new lineage: a diff with its source is refused,
       and a branch of it works. */
    size_t n = 0;
    assert_int_equal(strata_diff(bv, lv, count_changes, &n), STRATA_EINVAL);
    strata_graph *lb = branch(lv);
    r = run(lb, "MATCH (p:P) SET p.i = 0");
    strata_result_free(&r);
    strata_view *lbv = snap(lb);
    assert_int_equal(strata_diff(lv, lbv, count_changes, &n), STRATA_OK);
    assert_int_equal(n, 50);
    strata_view_release(&lbv);
    strata_view_release(&lv);
    strata_view_release(&bv);
    strata_graph_free(&lb);
    strata_graph_free(&l);
    strata_graph_free(&b);
    strata_graph_free(&g);
}

/* ---- allocation failure --------------------------------------------------------- */

static void test_allocation_failure(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token k = tok(g, STRATA_KEY, "k");
    for (int i = 0; i < 300; i++)
        set_int(g, node(g, NULL, 0), k, i);
    strata_view *v = snap(g);
    strata_graph *other = branch(v);
    for (int i = 0; i < 300; i += 3)
        set_int(other, (strata_id)i, k, -i);
    strata_view *ov = snap(other);
    size_t want = 0;
    assert_int_equal(strata_diff(v, ov, count_changes, &want), STRATA_OK);
    assert_int_equal(want, 99);   /* 0 is its own negation */

    bool branched = false, diffed = false;
    for (long at = 1; !(branched && diffed); at++) {
        strata_graph *b = NULL;
        mem_fail_at(at);
        strata_status s = strata_branch(v, &b);
        mem_fail_clear();
        if (s == STRATA_OK) {
            branched = true;
            strata_graph_free(&b);
        } else {
            assert_int_equal(s, STRATA_ENOMEM);
            assert_null(b);
        }
        size_t n = 0;
        mem_fail_at(at);
        s = strata_diff(v, ov, count_changes, &n);
        mem_fail_clear();
        if (s == STRATA_OK) {
            diffed = true;
            assert_int_equal(n, want);
        } else {
            assert_int_equal(s, STRATA_ENOMEM);
        }
    }
    /* Both graphs as they were. */
    assert_int_equal(graph_int(g, 3, k), 3);
    assert_int_equal(graph_int(other, 3, k), -3);
    check(g);
    check(other);
    strata_view_release(&v);
    strata_view_release(&ov);
    strata_graph_free(&other);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_stay_on_their_side),
        cmocka_unit_test(test_branch_of_an_old_view),
        cmocka_unit_test(test_transactions_and_queries_in_a_branch),
        cmocka_unit_test(test_copy_counter),
        cmocka_unit_test(test_private_bytes),
        cmocka_unit_test(test_indices_are_inherited_and_ddl_stays),
        cmocka_unit_test(test_diff_reports_every_kind_in_order),
        cmocka_unit_test(test_diff_between_two_branches),
        cmocka_unit_test(test_diff_of_unrelated_graphs_is_an_error),
        cmocka_unit_test(test_save_and_load_a_branch),
        cmocka_unit_test(test_allocation_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
