/*
 * Persistence (docs/FORMAT.md): save a view, load it back, never lose data.
 *
 * Round trips compare the canonical dump (persist_support.h) of the saved
 * view with that of the loaded graph — ids and holes, free-list order,
 * labels, every property value bit for bit, adjacency, scans, index
 * definitions and lookups, index ids — and run strata_integrity_check on
 * the loaded graph.  Values that cannot be properties (null, maps, nested
 * lists, paths) go through the value codec directly.
 *
 * Bad files: the fixture's file truncated at every length, bytes flipped at
 * every offset (each bit at a sample), foreign files, an empty file, a
 * missing file, a directory: each must fail with its status, a message
 * naming the section and offset, *out NULL and no scratch memory left
 * behind (the ASan build checks the graph's memory too).  Allocation
 * failures are injected at every allocation of a load, and of a save
 * (the old file must survive).  A writer thread runs during a save.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "persist_support.h"
#include "support/tmp_dir.h"
#include "core/persist_codec.h"
#include "query/temporal_parse.h"
#include "storage/mem.h"

#define OK(g, call)                                                                       \
    do {                                                                                  \
        strata_status ok_s_ = (call);                                                     \
        if (ok_s_ != STRATA_OK)                                                           \
            fail_msg("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, strata_errstr(ok_s_), \
                     strata_errmsg(g));                                                   \
    } while (0)

static strata_token tok(strata_graph *g, strata_token_kind kind, const char *name)
{
    strata_token t = 0;
    OK(g, strata_token_intern(g, kind, name, &t));
    return t;
}

static strata_id node_new(strata_graph *g, strata_token label)
{
    strata_id id = 0;
    OK(g, strata_node_create(g, &label, 1, &id));
    return id;
}

static strata_id rel_new(strata_graph *g, strata_id a, strata_id b, strata_token type)
{
    strata_id id = 0;
    OK(g, strata_rel_create(g, a, b, type, &id));
    return id;
}

/* Sets key on a node (rel when is_rel) to val, consuming val. */
static void set(strata_graph *g, bool is_rel, strata_id id, const char *key, strata_value *val)
{
    assert_non_null(val);
    strata_token k = tok(g, STRATA_KEY, key);
    if (is_rel)
        OK(g, strata_rel_set(g, id, k, val));
    else
        OK(g, strata_node_set(g, id, k, val));
    strata_value_free(&val);
}

static void query(strata_graph *g, const char *text)
{
    strata_result *r = NULL;
    strata_status s = strata_query(g, text, NULL, &r);
    if (s != STRATA_OK)
        fail_msg("%s: %s", text, r && strata_result_error(r) ? strata_result_error(r)->message
                                                             : strata_errmsg(g));
    strata_result_free(&r);
}

static strata_index index_new(strata_graph *g, strata_index_kind kind, bool rels,
                              strata_token token, size_t n, ...)
{
    strata_token keys[8];
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        keys[i] = va_arg(ap, strata_token);
    va_end(ap);
    strata_index idx = 0;
    OK(g, strata_index_create(g, kind, rels, token, keys, n, &idx));
    return idx;
}

/* A graph of every property kind, labels, types, holes on both free lists,
   a self-loop and parallel relationships, and indices of every kind on
   nodes and relationships (one dropped, so index ids have a gap). */
static strata_graph *fixture(void)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token person = tok(g, STRATA_LABEL, "Person"), city = tok(g, STRATA_LABEL, "City");
    strata_token knows = tok(g, STRATA_RELTYPE, "KNOWS"), lives = tok(g, STRATA_RELTYPE, "LIVES_IN");
    strata_token name = tok(g, STRATA_KEY, "name"), age = tok(g, STRATA_KEY, "age");
    strata_token uid = tok(g, STRATA_KEY, "uid"), country = tok(g, STRATA_KEY, "country");
    strata_token since = tok(g, STRATA_KEY, "since");
    tok(g, STRATA_LABEL, "Unused");
    strata_id p[8], c[3];
    static const char *const names[] = { "ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal" };
    for (int i = 0; i < 8; i++) {
        p[i] = node_new(g, person);
        set(g, false, p[i], "name", strata_value_string(names[i], strlen(names[i])));
        set(g, false, p[i], "age", strata_value_int(20 + i % 3));
        set(g, false, p[i], "uid", strata_value_int(1000 + i));
    }
    for (int i = 0; i < 3; i++) {
        c[i] = node_new(g, city);
        set(g, false, c[i], "name", strata_value_string(i ? "Paris" : "Rome", i ? 5 : 4));
        set(g, false, c[i], "country", strata_value_string(i == 2 ? "US" : "FR", 2));
    }
    OK(g, strata_node_add_label(g, p[0], city));
    /* Scalars at their edges. */
    set(g, false, p[1], "nan", strata_value_float(NAN));
    set(g, false, p[1], "negzero", strata_value_float(-0.0));
    set(g, false, p[1], "inf", strata_value_float(-INFINITY));
    set(g, false, p[1], "big", strata_value_int(INT64_MIN));
    set(g, false, p[1], "flag", strata_value_bool(false));
    set(g, false, p[2], "inline", strata_value_string("a\0b", 3));
    static const char heap[] = "a heap string\0with a NUL inside, long enough for the heap";
    set(g, false, p[2], "heap", strata_value_string(heap, sizeof heap));
    set(g, false, p[2], "empty", strata_value_string("", 0));
    strata_value *items[4] = { strata_value_int(1), strata_value_string("two", 3),
                               strata_value_float(3.5), strata_value_bool(true) };
    set(g, false, p[3], "mixed", strata_value_list((const strata_value *const *)items, 4));
    for (int i = 0; i < 4; i++)
        strata_value_free(&items[i]);
    set(g, false, p[3], "nolist", strata_value_list(NULL, 0));
    query(g, "CREATE (:Temporal {d: date('2020-02-29'), lt: localtime('12:34:56.789'), "
             "t: time('12:00:00.000000001+01:00'), "
             "ldt: localdatetime('1969-12-31T23:59:59.999999999'), "
             "dtz: datetime('2021-03-28T02:30[Europe/Stockholm]'), "
             "dto: datetime('2020-01-01T00:00-05:30'), dur: duration('P1Y2M3DT4H5M6.7S'), "
             "neg: duration({days: -3, seconds: 5}), "
             "dates: [date('2020-01-01'), date('-0044-03-15')]})");
    /* Relationships: a self-loop, parallel ones, properties. */
    strata_id r0 = rel_new(g, p[0], p[1], knows);
    set(g, true, r0, "since", strata_value_int(2001));
    set(g, true, rel_new(g, p[0], p[1], knows), "since", strata_value_int(2002));
    set(g, true, rel_new(g, p[2], p[2], knows), "since", strata_value_int(2003));
    for (int i = 0; i < 8; i++)
        set(g, true, rel_new(g, p[i], c[i % 3], lives), "code", strata_value_int(i));
    rel_new(g, c[1], p[5], knows);
    /* Holes: deletes in an order that makes the free lists non-trivial. */
    OK(g, strata_node_detach_delete(g, p[4]));
    OK(g, strata_node_detach_delete(g, p[6]));
    OK(g, strata_rel_delete(g, r0));
    OK(g, strata_node_detach_delete(g, p[5]));
    /* Indices of every kind, on nodes and on relationships. */
    strata_token code = tok(g, STRATA_KEY, "code");
    index_new(g, STRATA_INDEX_HASH, false, person, 1, name);
    strata_index dropped = index_new(g, STRATA_INDEX_RANGE, false, city, 1, name);
    index_new(g, STRATA_INDEX_RANGE, false, person, 1, age);
    index_new(g, STRATA_INDEX_UNIQUE, false, person, 1, uid);
    index_new(g, STRATA_INDEX_HASH, false, city, 2, name, country);
    index_new(g, STRATA_INDEX_HASH, true, knows, 1, since);
    index_new(g, STRATA_INDEX_UNIQUE, true, lives, 1, code);
    index_new(g, STRATA_INDEX_RANGE, true, knows, 1, since);
    OK(g, strata_index_drop(g, dropped));
    return g;
}

static strata_graph *load_ok(const char *path)
{
    strata_graph *g = NULL;
    char err[512];
    strata_status s = strata_load_ex(path, &g, err, sizeof err);
    if (s != STRATA_OK)
        fail_msg("load %s: %s (%s)", path, strata_errstr(s), err);
    assert_string_equal(err, "");
    return g;
}

static void assert_same_dump(const char *want, strata_graph *g)
{
    char *got = dump_graph(g);
    if (strcmp(want, got) != 0) {
        fprintf(stderr, "--- saved\n%s--- loaded\n%s", want, got);
        fail_msg("the loaded graph differs from the saved view");
    }
    free(got);
}

/* ---- round trips ----------------------------------------------------------- */

static void test_crc32c_check_value(void **state)
{
    (void)state;
    /* The check value of the CRC-32C (Castagnoli) catalogue entry. */
    assert_int_equal(crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(crc32c(crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
    assert_int_equal(crc32c_portable(0, "123456789", 9), 0xE3069283u);
}

/* crc32c (the processor's instruction where there is one) against the
   tables, at every length and alignment a word loop and its tail see. */
static void test_crc32c_instruction_matches_tables(void **state)
{
    (void)state;
    unsigned char buf[80];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; off + n <= sizeof buf; n++) {
            uint32_t seed = (uint32_t)(n * 2654435761u);
            assert_int_equal(crc32c(seed, buf + off, n), crc32c_portable(seed, buf + off, n));
        }
}

static void test_round_trip_fixture(void **state)
{
    (void)state;
    strata_graph *g = fixture();
    char *want = dump_graph(g);
    assert_non_null(strstr(want, "Europe/Stockholm"));
    assert_non_null(strstr(want, "node 4 free"));
    OK(g, strata_save(g, tmp_path("fixture.db")));
    strata_graph *h = load_ok(tmp_path("fixture.db"));
    assert_same_dump(want, h);
    check_integrity(h);
    /* Saving the loaded graph gives the same bytes: nothing drifts. */
    OK(h, strata_save(h, tmp_path("again.db")));
    strata_graph *k = load_ok(tmp_path("again.db"));
    assert_same_dump(want, k);
    /* Both go on alike: the same ids, index handles and constraints. */
    strata_graph *pair[2] = { g, k };
    strata_id ids[2][3];
    strata_index idx[2];
    for (int i = 0; i < 2; i++) {
        strata_graph *x = pair[i];
        strata_token person = tok(x, STRATA_LABEL, "Person");
        ids[i][0] = node_new(x, person);
        ids[i][1] = node_new(x, person);
        OK(x, strata_rel_create(x, ids[i][0], ids[i][1], tok(x, STRATA_RELTYPE, "KNOWS"),
                                &ids[i][2]));
        strata_value *dup = strata_value_int(1000);
        assert_int_equal(strata_node_set(x, ids[i][0], tok(x, STRATA_KEY, "uid"), dup),
                         STRATA_ECONSTRAINT);
        strata_value_free(&dup);
        idx[i] = index_new(x, STRATA_INDEX_HASH, false, person, 1, tok(x, STRATA_KEY, "nan"));
    }
    assert_memory_equal(ids[0], ids[1], sizeof ids[0]);
    assert_int_equal(idx[0], idx[1]);
    char *a = dump_graph(g);
    assert_same_dump(a, k);
    check_integrity(k);
    free(a);
    free(want);
    strata_graph_free(&g);
    strata_graph_free(&h);
    strata_graph_free(&k);
}

static void test_round_trip_empty_graph(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    char *want = dump_graph(g);
    OK(g, strata_save(g, tmp_path("empty.db")));
    strata_graph *h = load_ok(tmp_path("empty.db"));
    assert_same_dump(want, h);
    check_integrity(h);
    free(want);
    strata_graph_free(&g);
    strata_graph_free(&h);
}

/* Nodes and relationships all deleted: only holes and tokens remain. */
static void test_round_trip_all_holes(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token l = tok(g, STRATA_LABEL, "L"), t = tok(g, STRATA_RELTYPE, "T");
    strata_id a = node_new(g, l), b = node_new(g, l), c = node_new(g, l);
    rel_new(g, a, b, t);
    rel_new(g, b, c, t);
    index_new(g, STRATA_INDEX_UNIQUE, false, l, 1, tok(g, STRATA_KEY, "k"));
    OK(g, strata_node_detach_delete(g, b));
    OK(g, strata_node_delete(g, c));
    OK(g, strata_node_delete(g, a));
    OK(g, strata_index_drop(g, 0));
    char *want = dump_graph(g);
    OK(g, strata_save(g, tmp_path("holes.db")));
    strata_graph *h = load_ok(tmp_path("holes.db"));
    assert_same_dump(want, h);
    check_integrity(h);
    free(want);
    strata_graph_free(&g);
    strata_graph_free(&h);
}

/* A loaded graph is an ordinary graph: statements, rollback, views. */
static void test_loaded_graph_takes_writes(void **state)
{
    (void)state;
    strata_graph *g = fixture();
    OK(g, strata_save(g, tmp_path("w.db")));
    strata_graph *h = load_ok(tmp_path("w.db"));
    char *before = dump_graph(h);
    strata_view *held = NULL;
    OK(h, strata_snapshot(h, &held));
    OK(h, strata_begin(h));
    query(h, "MATCH (p:Person) SET p.age = p.age + 1 CREATE (p)-[:KNOWS]->(:Person {uid: -1 - p.uid})");
    query(h, "MATCH (c:City) DETACH DELETE c");
    OK(h, strata_rollback(h));
    assert_same_dump(before, h);
    query(h, "MATCH (p:Person {name: 'ann'}) SET p.name = 'anna'");
    check_integrity(h);
    char *held_dump = dump_view(held);
    assert_string_equal(before, held_dump);
    strata_view_release(&held);
    free(held_dump);
    free(before);
    strata_graph_free(&g);
    strata_graph_free(&h);
}

/* Values that cannot be properties still round-trip through the codec. */
static void test_codec_every_value(void **state)
{
    (void)state;
    mem_ctx *m = mem_scratch();
    value v[24];
    size_t n = 0;
    v[n++] = value_null();
    v[n++] = value_bool(true);
    v[n++] = value_int(INT64_MAX);
    v[n++] = value_int(-1);
    v[n++] = value_float(NAN);
    v[n++] = value_float(-0.0);
    v[n++] = value_float(INFINITY);
    value_string(m, "x\0y", 3, &v[n++]);
    value_string(m, "a long string, stored on the heap\0!", 35, &v[n++]);
    v[n++] = value_node(42);
    v[n++] = value_rel(7);
    /* [1, [null, 'in'], {}] and {a: [1.5], b: {c: null}} */
    value inner[2] = { value_null(), value_null() }, outer[3], nested;
    value_string(m, "in", 2, &inner[1]);
    outer[0] = value_int(1);
    assert_int_equal(value_list_from(m, inner, 2, &outer[1]), 0);
    assert_int_equal(value_map_from(m, NULL, NULL, 0, &outer[2]), 0);
    assert_int_equal(value_list_from(m, outer, 3, &nested), 0);
    v[n++] = nested;
    value keys[2], vals[2], ck, cv, one = value_float(1.5);
    value_string(m, "b", 1, &keys[0]);
    value_string(m, "a", 1, &keys[1]);
    value_string(m, "c", 1, &ck);
    cv = value_null();
    assert_int_equal(value_map_from(m, &ck, &cv, 1, &vals[0]), 0);
    assert_int_equal(value_list_from(m, &one, 1, &vals[1]), 0);
    assert_int_equal(value_map_from(m, keys, vals, 2, &v[n++]), 0);
    value path[3] = { value_node(1), value_rel(2), value_node(3) };
    assert_int_equal(value_path_from(m, path, 3, &v[n++]), 0);
    static const struct { value_type kind; const char *text; } temporals[] = {
        { VAL_DATE, "2020-02-29" }, { VAL_LOCALTIME, "23:59:59.999999999" },
        { VAL_TIME, "00:00:01-18:00" }, { VAL_LOCALDATETIME, "-0044-03-15T12:00:00.5" },
        { VAL_DATETIME, "2021-10-31T02:30+01:00[Europe/Stockholm]" },
        { VAL_DATETIME, "1900-01-01T00:00Z" },
    };
    for (size_t i = 0; i < sizeof temporals / sizeof temporals[0]; i++) {
        temporal t;
        temporal_err e;
        if (temporal_parse(temporals[i].kind, temporals[i].text, strlen(temporals[i].text), &t,
                           &e) != 0)
            fail_msg("%s: %s", temporals[i].text, e.msg);
        assert_int_equal(temporal_to_value(m, &t, &v[n++]), 0);
    }
    duration d = { -14, 3, -86401, 999999999 };
    assert_int_equal(duration_to_value(m, &d, &v[n++]), 0);

    FILE *f = tmpfile();
    assert_non_null(f);
    unsigned char buf[64];   /* small: the large-string path writes through */
    pwriter w;
    pw_init(&w, fileno(f), buf, sizeof buf);
    for (size_t i = 0; i < n; i++)
        pw_value(&w, &v[i]);
    pw_flush(&w);
    assert_int_equal(w.err, 0);
    off_t size = lseek(fileno(f), 0, SEEK_END);
    assert_true(size > 0);
    unsigned char *bytes = malloc((size_t)size);
    assert_int_equal(pread(fileno(f), bytes, (size_t)size, 0), size);
    preader r;
    pr_init(&r, bytes, 0, (size_t)size, m, "test");
    for (size_t i = 0; i < n; i++) {
        value got;
        if (pr_value(&r, &got) != 0)
            fail_msg("value %zu: %s", i, r.err);
        sbuf a = { 0 }, b = { 0 };
        dump_raw(&a, &v[i]);
        dump_raw(&b, &got);
        assert_string_equal(a.p, b.p);
        free(a.p);
        free(b.p);
        value_release(&got);
        value_release(&v[i]);
    }
    assert_int_equal(pr_left(&r), 0);
    free(bytes);
    fclose(f);
}

/* Values nested past the bound are refused, not recursed into. */
static void test_codec_depth_bound(void **state)
{
    (void)state;
    unsigned char deep[4 * (PCODEC_MAX_DEPTH + 8)];
    size_t n = 0;
    for (int i = 0; i < PCODEC_MAX_DEPTH + 4; i++) {
        deep[n++] = 6;   /* a list */
        deep[n++] = 1;   /* of one item */
    }
    deep[n++] = 0;
    preader r;
    value got;
    pr_init(&r, deep, 0, n, mem_scratch(), "test");
    assert_int_equal(pr_value(&r, &got), -1);
    assert_int_equal(r.status, STRATA_ECORRUPT);
    assert_non_null(strstr(r.err, "nest deeper"));
    /* A huge count with few bytes behind it sizes nothing. */
    unsigned char huge[] = { 6, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0 };
    pr_init(&r, huge, 0, sizeof huge, mem_scratch(), "test");
    assert_int_equal(pr_value(&r, &got), -1);
    assert_non_null(strstr(r.err, "out of range"));
}

/* ---- concurrent writer --------------------------------------------------------- */

typedef struct writer_arg {
    strata_graph *g;
    atomic_bool stop;
    atomic_long writes;
} writer_arg;

static void *writer(void *p)
{
    writer_arg *a = p;
    strata_token l = 0, k = 0;
    /* Person.age is indexed: the index's level stack changes under the
       views the saves take. */
    strata_token_intern(a->g, STRATA_LABEL, "Person", &l);
    strata_token_intern(a->g, STRATA_KEY, "age", &k);
    while (!atomic_load(&a->stop) && a->writes < 20000) {
        strata_id id;
        if (strata_node_create(a->g, &l, 1, &id) != STRATA_OK)
            break;
        strata_value *v = strata_value_int(a->writes);
        strata_node_set(a->g, id, k, v);
        strata_value_free(&v);
        if (a->writes % 3 == 0)
            strata_node_delete(a->g, id);
        a->writes++;
    }
    return NULL;
}

static void test_save_during_writes(void **state)
{
    (void)state;
    strata_graph *g = fixture();
    writer_arg a = { .g = g, .writes = 0 };
    atomic_init(&a.stop, false);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, writer, &a), 0);
    for (int round = 0; round < 5; round++) {
        strata_view *v = NULL;
        OK(g, strata_snapshot(g, &v));
        char *want = dump_view(v);
        OK(g, strata_save_view(v, tmp_path("busy.db")));
        strata_graph *h = load_ok(tmp_path("busy.db"));
        assert_same_dump(want, h);
        check_integrity(h);
        strata_graph_free(&h);
        free(want);
        strata_view_release(&v);
        /* strata_save takes its own view: a whole, consistent state. */
        OK(g, strata_save(g, tmp_path("busy2.db")));
        h = load_ok(tmp_path("busy2.db"));
        check_integrity(h);
        strata_graph_free(&h);
    }
    /* the writer may not have been scheduled yet on a loaded machine */
    while (atomic_load(&a.writes) == 0)
        sched_yield();
    atomic_store(&a.stop, true);
    pthread_join(t, NULL);
    strata_graph_free(&g);
}

/* ---- bad input ------------------------------------------------------------------ */

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*n ? *n : 1);
    assert_int_equal(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static void write_all(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

/* A load that must fail with want; returns nothing, leaves nothing. */
static void expect_load_fails(const char *path, strata_status want, const char *needle)
{
    size_t scratch = mem_ctx_bytes(mem_scratch());
    strata_graph *g = (strata_graph *)&g;   /* must come back NULL */
    char err[512] = "unset";
    strata_status s = strata_load_ex(path, &g, err, sizeof err);
    if (s != want)
        fail_msg("%s: %s (%s), expected %s", path, strata_errstr(s), err, strata_errstr(want));
    assert_null(g);
    assert_non_null(strstr(err, path));
    if (needle && !strstr(err, needle))
        fail_msg("message '%s' lacks '%s'", err, needle);
    assert_int_equal(mem_ctx_bytes(mem_scratch()), scratch);
}

static void test_truncated_at_every_length(void **state)
{
    (void)state;
    strata_graph *g = fixture();
    OK(g, strata_save(g, tmp_path("whole.db")));
    strata_graph_free(&g);
    size_t n;
    unsigned char *b = read_all(tmp_path("whole.db"), &n);
    const char *cut = tmp_path("cut.db");
    for (size_t len = 0; len < n; len++) {
        write_all(cut, b, len);
        expect_load_fails(cut, STRATA_ECORRUPT, len >= 16 ? "section" : NULL);
    }
    /* And one byte too many. */
    unsigned char *more = malloc(n + 1);
    memcpy(more, b, n);
    more[n] = 0;
    write_all(cut, more, n + 1);
    expect_load_fails(cut, STRATA_ECORRUPT, "follow the trailer");
    free(more);
    free(b);
}

static void test_flipped_bytes_and_bits(void **state)
{
    (void)state;
    strata_graph *g = fixture();
    OK(g, strata_save(g, tmp_path("whole.db")));
    strata_graph_free(&g);
    size_t n;
    unsigned char *b = read_all(tmp_path("whole.db"), &n);
    const char *bad = tmp_path("flipped.db");
    for (size_t off = 0; off < n; off++) {
        /* Every byte inverted; every bit alone at every seventh offset. */
        for (int bit = -1; bit < (off % 7 == 0 ? 8 : 0); bit++) {
            unsigned char keep = b[off];
            b[off] ^= bit < 0 ? 0xFF : (unsigned char)(1u << bit);
            write_all(bad, b, n);
            expect_load_fails(bad, STRATA_ECORRUPT, NULL);
            b[off] = keep;
        }
    }
    free(b);
}

static void test_foreign_and_missing_files(void **state)
{
    (void)state;
    static const unsigned char png[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0,
                                         13, 'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1 };
    write_all(tmp_path("image.png"), png, sizeof png);
    expect_load_fails(tmp_path("image.png"), STRATA_ECORRUPT, "not a strata file");
    const char *text = "CREATE (n:Person {name: 'ann'})\n";
    write_all(tmp_path("text.cypher"), text, strlen(text));
    expect_load_fails(tmp_path("text.cypher"), STRATA_ECORRUPT, "not a strata file");
    write_all(tmp_path("empty.db"), "", 0);
    expect_load_fails(tmp_path("empty.db"), STRATA_ECORRUPT, "empty");
    expect_load_fails(tmp_path("no-such-file.db"), STRATA_ENOTFOUND, "No such file");
    expect_load_fails(tmp_dir, STRATA_EIO, "directory");
    /* A newer format version is named as such. */
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    OK(g, strata_save(g, tmp_path("v2.db")));
    strata_graph_free(&g);
    size_t n;
    unsigned char *b = read_all(tmp_path("v2.db"), &n);
    b[8] = 2;
    write_all(tmp_path("v2.db"), b, n);
    free(b);
    expect_load_fails(tmp_path("v2.db"), STRATA_ECORRUPT, "format version 2");
    /* Arguments. */
    assert_int_equal(strata_load(NULL, &g), STRATA_EINVAL);
    assert_int_equal(strata_load(tmp_path("v2.db"), NULL), STRATA_EINVAL);
    char err[64];
    assert_int_equal(strata_load_ex(NULL, &g, err, sizeof err), STRATA_EINVAL);
    assert_non_null(strstr(err, "NULL"));
    assert_null(g);
}

/* A file whose checksums are right but whose content is not: a relationship
   to a deleted node.  Built by saving, editing and re-checksumming. */
static void test_checksummed_but_inconsistent(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token l = tok(g, STRATA_LABEL, "L"), t = tok(g, STRATA_RELTYPE, "T");
    strata_id a = node_new(g, l), b = node_new(g, l);
    node_new(g, l);
    rel_new(g, a, b, t);
    OK(g, strata_node_delete(g, 2));
    OK(g, strata_save(g, tmp_path("ok.db")));
    strata_graph_free(&g);
    size_t n;
    unsigned char *f = read_all(tmp_path("ok.db"), &n);
    /* Find RELS: its payload is slots 1, live 1, type 1, start 0, end 1. */
    unsigned char *rels = memmem(f, n, "RELS", 4);
    assert_non_null(rels);
    unsigned char *payload = rels + PCODEC_SECTION_HEADER;
    assert_int_equal(payload[4], 1);   /* end node 1 */
    payload[4] = 2;                    /* the deleted node */
    uint64_t len = 0;
    for (int i = 0; i < 8; i++)
        len |= (uint64_t)rels[8 + i] << (8 * i);
    uint32_t crc = crc32c(0, payload, (size_t)len);
    for (int i = 0; i < 4; i++)
        rels[16 + i] = (unsigned char)(crc >> (8 * i));
    crc = crc32c(0, rels, 20);
    for (int i = 0; i < 4; i++)
        rels[20 + i] = (unsigned char)(crc >> (8 * i));
    write_all(tmp_path("bad-ref.db"), f, n);
    free(f);
    expect_load_fails(tmp_path("bad-ref.db"), STRATA_ECORRUPT, "end node 2 does not exist");
}

/* ---- allocation failures ----------------------------------------------------- */

static void test_load_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g = fixture();
    OK(g, strata_save(g, tmp_path("oom.db")));
    char *want = dump_graph(g);
    strata_graph_free(&g);
    size_t scratch = mem_ctx_bytes(mem_scratch());
    for (long k = 1;; k++) {
        strata_graph *h = NULL;
        char err[512];
        mem_fail_at(k);
        strata_status s = strata_load_ex(tmp_path("oom.db"), &h, err, sizeof err);
        mem_fail_clear();
        if (s == STRATA_OK) {
            assert_true(k > 10);
            assert_same_dump(want, h);
            check_integrity(h);
            strata_graph_free(&h);
            break;
        }
        if (s != STRATA_ENOMEM)
            fail_msg("allocation %ld failed: %s (%s)", k, strata_errstr(s), err);
        assert_null(h);
        assert_non_null(strstr(err, "out of memory"));
        assert_int_equal(mem_ctx_bytes(mem_scratch()), scratch);
    }
    free(want);
}

static void test_failed_save_keeps_the_old_file(void **state)
{
    (void)state;
    strata_graph *g = fixture();
    const char *path = tmp_path("keep.db");
    OK(g, strata_save(g, path));
    size_t n0;
    unsigned char *before = read_all(path, &n0);
    query(g, "CREATE (:Person {name: 'new'})");
    for (long k = 1; k <= 4; k++) {
        mem_fail_at(k);
        strata_status s = strata_save(g, path);
        mem_fail_clear();
        if (s == STRATA_OK)
            break;
        assert_int_equal(s, STRATA_ENOMEM);
        assert_non_null(strstr(strata_errmsg(g), "out of memory"));
        size_t n1;
        unsigned char *after = read_all(path, &n1);
        assert_int_equal(n0, n1);
        assert_memory_equal(before, after, n0);
        free(after);
    }
    /* A directory that does not exist: EIO naming the path. */
    const char *nowhere = tmp_path("missing-dir/x.db");
    assert_int_equal(strata_save(g, nowhere), STRATA_EIO);
    assert_non_null(strstr(strata_errmsg(g), nowhere));
    /* Saving over a directory fails; the directory stays. */
    assert_int_equal(mkdir(tmp_path("a-dir"), 0755), 0);
    assert_int_equal(strata_save(g, tmp_path("a-dir")), STRATA_EIO);
    struct stat st;
    assert_int_equal(stat(tmp_path("a-dir"), &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    /* No temporary file is left behind by any of it. */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c tmp- >/dev/null", tmp_dir);
    assert_int_not_equal(system(cmd), 0);
    assert_int_equal(strata_save(NULL, path), STRATA_EINVAL);
    assert_int_equal(strata_save(g, NULL), STRATA_EINVAL);
    assert_int_equal(strata_save_view(NULL, path), STRATA_EINVAL);
    free(before);
    strata_graph_free(&g);
}

/* With STRATA_LOADER_CORPUS=DIR set, writes the fuzz target's seed files. */
static void test_write_loader_corpus(void **state)
{
    (void)state;
    const char *out = getenv("STRATA_LOADER_CORPUS");
    if (!out)
        skip();
    char path[600];
    strata_graph *g = fixture();
    snprintf(path, sizeof path, "%s/fixture.db", out);
    OK(g, strata_save(g, path));
    strata_graph_free(&g);
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token l = tok(g, STRATA_LABEL, "L");
    strata_id a = node_new(g, l), b = node_new(g, l);
    rel_new(g, a, b, tok(g, STRATA_RELTYPE, "T"));
    set(g, false, a, "k", strata_value_string("v", 1));
    snprintf(path, sizeof path, "%s/small.db", out);
    OK(g, strata_save(g, path));
    strata_graph_free(&g);
}

static int make_dir(void **state)
{
    (void)state;
    return tmp_dir_make("strata-persist");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_check_value),
        cmocka_unit_test(test_crc32c_instruction_matches_tables),
        cmocka_unit_test(test_round_trip_fixture),
        cmocka_unit_test(test_round_trip_empty_graph),
        cmocka_unit_test(test_round_trip_all_holes),
        cmocka_unit_test(test_loaded_graph_takes_writes),
        cmocka_unit_test(test_codec_every_value),
        cmocka_unit_test(test_codec_depth_bound),
        cmocka_unit_test(test_save_during_writes),
        cmocka_unit_test(test_truncated_at_every_length),
        cmocka_unit_test(test_flipped_bytes_and_bits),
        cmocka_unit_test(test_foreign_and_missing_files),
        cmocka_unit_test(test_checksummed_but_inconsistent),
        cmocka_unit_test(test_load_allocation_failures),
        cmocka_unit_test(test_failed_save_keeps_the_old_file),
        cmocka_unit_test(test_write_loader_corpus),
    };
    return cmocka_run_group_tests(tests, make_dir, tmp_dir_remove);
}
