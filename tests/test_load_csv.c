/*
 * LOAD CSV end to end through strata_query, on files written to a fresh
 * temporary directory: a table of (files, query, expected rows or error),
 * where "$D" in a query stands for the directory; then the statement's
 * atomicity (a failing row, a malformed file after a write, every
 * allocation failure: the graph and its next ids exactly as before).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/mem.h"
#include "core/graph_impl.h"   /* reads the graph's catalog */
#include "query/plan_cache.h"
#include "strata.h"

static char dir[64];

typedef struct csv_file {
    const char *name;
    const char *text;
} csv_file;

static const csv_file files[] = {
    {"people.csv", "name,age,city\n\"Smith, J\",42,\"New\nYork\"\nAda,,\"\"\n\"Say \"\"hi\"\"\",7,Paris\n"},
    {"plain.csv", "1,a\r\n2,\r\n3,\"\"\r\n"},
    {"semi.csv", "a;b,c;\"d;e\"\n"},
    {"tabs.tsv", "x\ty\n1\t2\n"},
    {"bom.csv", "\xEF\xBB\xBFid,v\n1,one\n"},
    {"short.csv", "a,b,c\n1,2\n"},
    {"long.csv", "a,b\n1,2,3\n"},
    {"empty.csv", ""},
    {"bad_quote.csv", "a,b\n1,2\n3,\"open\n4,5\n"},
    {"stray.csv", "a,b\n1,x\"y\n"},
    {"latin1.csv", "caf\xE9\n"},
    {"a b.csv", "spaced\n"},
    {"nums.csv", "1\n2\n0\n3\n"},
};

typedef struct lcase {
    const char *query;
    const char *expect;   /* rows, or "!Code" then the start of the message after ": " */
} lcase;

static const lcase cases[] = {
    {"LOAD CSV WITH HEADERS FROM 'file://$D/people.csv' AS r RETURN r.name, r.age, r.city",
     "['Smith, J', '42', 'New\nYork'] ['Ada', null, ''] ['Say \"hi\"', '7', 'Paris']"},
    {"LOAD CSV FROM 'file://$D/plain.csv' AS r RETURN r", "[['1', 'a']] [['2', null]] [['3', '']]"},
    {"LOAD CSV WITH HEADERS FROM '$D/people.csv' AS r RETURN linenumber(), r.name",
     "[2, 'Smith, J'] [4, 'Ada'] [5, 'Say \"hi\"']"},
    {"LOAD CSV FROM '$D/plain.csv' AS r RETURN file() = '$D/plain.csv', linenumber()",
     "[true, 1] [true, 2] [true, 3]"},
    {"RETURN linenumber(), file()", "[null, null]"},
    {"LOAD CSV FROM '$D/plain.csv' AS r WITH r RETURN linenumber()", "[null] [null] [null]"},
    {"LOAD CSV FROM '$D/semi.csv' AS r FIELDTERMINATOR ';' RETURN r", "[['a', 'b,c', 'd;e']]"},
    {"LOAD CSV WITH HEADERS FROM '$D/tabs.tsv' AS r FIELDTERMINATOR '\\t' RETURN r.x, r.y",
     "['1', '2']"},
    {"LOAD CSV WITH HEADERS FROM '$D/bom.csv' AS r RETURN keys(r), r.id", "[['id', 'v'], '1']"},
    {"LOAD CSV WITH HEADERS FROM '$D/short.csv' AS r RETURN r.a, r.c", "['1', null]"},
    {"LOAD CSV WITH HEADERS FROM '$D/empty.csv' AS r RETURN r", ""},
    {"LOAD CSV FROM '$D/empty.csv' AS r RETURN r", ""},
    {"LOAD CSV FROM 'file://$D/a%20b.csv' AS r RETURN r", "[['spaced']]"},
    {"LOAD CSV FROM 'file://localhost$D/plain.csv' AS r RETURN count(*)", "[3]"},
    {"LOAD CSV FROM 'plain.csv' AS r RETURN count(*)", "[3]"},   /* relative: the current dir */
    {"UNWIND ['plain.csv', 'nums.csv'] AS f LOAD CSV FROM f AS r RETURN f, count(*) ORDER BY f",
     "['nums.csv', 4] ['plain.csv', 3]"},
    {"LOAD CSV FROM 'nums.csv' AS a LOAD CSV FROM 'plain.csv' AS b "
     "RETURN count(*), sum(toInteger(a[0]) * 10 + toInteger(b[0]))",
     "[12, 204]"},
    {"LOAD CSV FROM 'nums.csv' AS a LOAD CSV FROM 'plain.csv' AS b "
     "WITH a, b, linenumber() AS l WHERE a[0] = '2' RETURN l",
     "[1] [2] [3]"},
    {"LOAD CSV FROM 'nums.csv' AS r RETURN *", "[['1']] [['2']] [['0']] [['3']]"},
    {"LOAD CSV FROM 'nums.csv' AS r CREATE (n:N {v: toInteger(r[0])}) RETURN count(n)", "[4]"},
    /* errors */
    {"LOAD CSV FROM '$D/missing.csv' AS r RETURN r",
     "!IOError: LOAD CSV: cannot read '$D/missing.csv': No such file or directory"},
    {"LOAD CSV FROM '$D' AS r RETURN r", "!IOError: LOAD CSV: "},
    {"LOAD CSV WITH HEADERS FROM '$D/bad_quote.csv' AS r RETURN r",
     "!IOError: LOAD CSV: $D/bad_quote.csv:3: unterminated quoted field"},
    {"LOAD CSV FROM 'stray.csv' AS r RETURN r",
     "!IOError: LOAD CSV: stray.csv:2: stray quote in unquoted field 2"},
    {"LOAD CSV WITH HEADERS FROM 'long.csv' AS r RETURN r",
     "!IOError: LOAD CSV: long.csv:2: 3 fields, but the header names 2"},
    {"LOAD CSV FROM 'latin1.csv' AS r RETURN r",
     "!IOError: LOAD CSV: latin1.csv:1: field 1 is not valid UTF-8"},
    {"LOAD CSV FROM 'https://example.com/x.csv' AS r RETURN r",
     "!ArgumentError: LOAD CSV: only file:/// URLs and paths are supported"},
    {"LOAD CSV FROM 'file://host/x.csv' AS r RETURN r",
     "!ArgumentError: LOAD CSV: only local files can be read"},
    {"LOAD CSV FROM 'file:///x%2.csv' AS r RETURN r", "!ArgumentError: LOAD CSV: bad % escape"},
    {"LOAD CSV FROM 42 AS r RETURN r", "!TypeError: LOAD CSV FROM expects a string"},
    {"LOAD CSV FROM 'nums.csv' AS r FIELDTERMINATOR ';;' RETURN r",
     "!ArgumentError: FIELDTERMINATOR must be one character"},
    {"LOAD CSV FROM 'nums.csv' AS r FIELDTERMINATOR '\"' RETURN r",
     "!ArgumentError: FIELDTERMINATOR must be one character"},
    {"LOAD CSV FROM x AS r RETURN r", "!SyntaxError: variable `x` not defined"},
    {"WITH 1 AS r LOAD CSV FROM 'nums.csv' AS r RETURN r",
     "!SyntaxError: variable `r` already declared"},
};

/* Replaces every "$D" of s with the directory (static buffer). */
static const char *expand(const char *s)
{
    static char out[2][1024];
    static int which;
    char *o = out[which ^= 1];
    size_t n = 0;
    for (; *s && n + sizeof dir < sizeof out[0]; s++) {
        if (s[0] == '$' && s[1] == 'D') {
            n += (size_t)snprintf(o + n, sizeof out[0] - n, "%s", dir);
            s++;
        } else {
            o[n++] = *s;
        }
    }
    o[n] = '\0';
    return o;
}

static void render(char *buf, size_t cap, const strata_value *v)
{
    size_t used = strlen(buf);
    char *p = buf + used;
    size_t room = cap - used;
    switch (strata_value_type(v)) {
    case STRATA_NULL: snprintf(p, room, "null"); break;
    case STRATA_BOOL: {
        bool b;
        strata_value_get_bool(v, &b);
        snprintf(p, room, "%s", b ? "true" : "false");
        break;
    }
    case STRATA_INT: {
        int64_t i;
        strata_value_get_int(v, &i);
        snprintf(p, room, "%lld", (long long)i);
        break;
    }
    case STRATA_STRING: {
        const char *s;
        size_t len;
        strata_value_get_string(v, &s, &len);
        snprintf(p, room, "'%s'", s);
        break;
    }
    case STRATA_LIST:
        snprintf(p, room, "[");
        for (size_t i = 0; i < strata_value_list_len(v); i++) {
            strata_value *e;
            assert_int_equal(strata_value_list_get(v, i, &e), STRATA_OK);
            if (i)
                strncat(buf, ", ", cap - strlen(buf) - 1);
            render(buf, cap, e);
            strata_value_free(&e);
        }
        strncat(buf, "]", cap - strlen(buf) - 1);
        break;
    default:
        fail_msg("unexpected value type %d", (int)strata_value_type(v));
    }
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/strata_load_csv_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        FILE *f = fopen(path, "wb");
        if (!f)
            return -1;
        fputs(files[i].text, f);
        fclose(f);
    }
    /* relative paths resolve against the current directory */
    return chdir(dir);
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        remove(path);
    }
    remove(dir);
    return 0;
}

/* The state a failed statement must leave: counts, integrity, and the ids
   the next creates get. */
static void fingerprint(strata_graph *g, char *out, size_t cap)
{
    strata_view *v;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    snprintf(out, cap, "%llu nodes, %llu rels", (unsigned long long)strata_node_count(v),
             (unsigned long long)strata_rel_count(v));
    strata_view_release(&v);
}

static void test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *query = expand(cases[i].query), *expect = expand(cases[i].expect);
        strata_graph *g;
        assert_int_equal(strata_graph_new(&g), STRATA_OK);
        strata_result *r = NULL;
        strata_status st = strata_query(g, query, NULL, &r);
        assert_non_null(r);
        char got[2048] = "";
        if (expect[0] == '!') {
            const strata_query_error *e = strata_result_error(r);
            if (st == STRATA_OK || !e)
                fail_msg("case %zu `%s`: expected %s, succeeded", i, query, expect);
            snprintf(got, sizeof got, "!%s: %s", e->code, e->message);
            if (strncmp(got, expect, strlen(expect)) != 0)
                fail_msg("case %zu `%s`:\n expected %s\n      got %s", i, query, expect, got);
        } else {
            if (st != STRATA_OK)
                fail_msg("case %zu `%s` failed: %s", i, query, strata_errmsg(g));
            size_t nc = strata_result_columns(r, NULL);
            const strata_value *const *row;
            while (strata_result_next(r, &row)) {
                strncat(got, got[0] ? " [" : "[", sizeof got - strlen(got) - 1);
                for (size_t k = 0; k < nc; k++) {
                    if (k)
                        strncat(got, ", ", sizeof got - strlen(got) - 1);
                    render(got, sizeof got, row[k]);
                }
                strncat(got, "]", sizeof got - strlen(got) - 1);
            }
            if (strcmp(got, expect) != 0)
                fail_msg("case %zu `%s`:\n expected %s\n      got %s", i, query, expect, got);
        }
        strata_result_free(&r);
        strata_graph_free(&g);
    }
}

static strata_status run(strata_graph *g, const char *query)
{
    strata_result *r = NULL;
    strata_status st = strata_query(g, expand(query), NULL, &r);
    strata_result_free(&r);
    return st;
}

static int64_t next_node_id(strata_graph *g)
{
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "CREATE (n) WITH n DELETE n RETURN id(n)", NULL, &r),
                     STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    int64_t id;
    assert_int_equal(strata_value_get_int(row[0], &id), STRATA_OK);
    strata_result_free(&r);
    return id;
}

/* A row that fails part way (10 / 0 on the third record), and a malformed
   file read after a clause that wrote: the graph, its integrity and its
   next id as before. */
static void test_atomic(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    assert_int_equal(run(g, "CREATE (:Keep {v: 1})-[:R]->(:Keep {v: 2})"), STRATA_OK);
    char before[64], after[64];
    fingerprint(g, before, sizeof before);
    int64_t id = next_node_id(g);
    assert_int_not_equal(run(g, "LOAD CSV FROM 'nums.csv' AS r "
                                "CREATE (:P {v: 10 / toInteger(r[0])})"),
                         STRATA_OK);
    assert_int_not_equal(run(g, "UNWIND range(1, 50) AS i CREATE (:Q {i: i}) "
                                "WITH count(*) AS c LOAD CSV FROM 'bad_quote.csv' AS r RETURN r"),
                         STRATA_OK);
    assert_int_not_equal(run(g, "MATCH (k:Keep) SET k.v = k.v + 1 "
                                "WITH k LOAD CSV FROM 'missing.csv' AS r RETURN r"),
                         STRATA_OK);
    fingerprint(g, after, sizeof after);
    assert_string_equal(before, after);
    assert_int_equal(next_node_id(g), id);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "MATCH (k:Keep) RETURN sum(k.v)", NULL, &r), STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    int64_t sum;
    assert_int_equal(strata_value_get_int(row[0], &sum), STRATA_OK);
    assert_int_equal(sum, 3);
    strata_result_free(&r);
    strata_graph_free(&g);
}

/* Fails the 1st, 2nd, ... allocation of a loading statement until it
   succeeds: each failure is OutOfMemory and leaves the graph as it was.
   The statement only reads: strata_query takes the result's view after
   the statement has committed, and that allocation failing is reported
   as a failure of a statement that did commit (a gap of strata_query, not
   of LOAD CSV); the writes' own rollback is covered by test_atomic. */
static void test_allocation_failures(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    assert_int_equal(run(g, "CREATE (:Keep)"), STRATA_OK);
    char before[64], after[64];
    fingerprint(g, before, sizeof before);
    const char *q = expand("LOAD CSV WITH HEADERS FROM '$D/people.csv' AS r "
                           "RETURN r.name, r.city, linenumber(), file()");
    /* the plan cache keeps what it parsed: emptied before each count */
    plan_cache_clear(plan_cache_for(g->current->cat));
    size_t base = mem_ctx_bytes(mem_scratch());
    for (long k = 1;; k++) {
        strata_result *r = NULL;
        mem_fail_at(k);
        strata_status st = strata_query(g, q, NULL, &r);
        bool failed = mem_fail_count() >= k;
        mem_fail_clear();
        size_t rows = 0;
        while (strata_result_next(r, NULL))
            rows++;
        strata_result_free(&r);
        plan_cache_clear(plan_cache_for(g->current->cat));
        assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
        fingerprint(g, after, sizeof after);
        assert_string_equal(before, after);
        if (!failed) {
            assert_int_equal(st, STRATA_OK);
            assert_int_equal(rows, 3);
            break;
        }
        assert_int_equal(st, STRATA_ENOMEM);
    }
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_atomic),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
