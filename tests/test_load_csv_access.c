/*
 * LOAD CSV's file access (strata_set_csv_options) and its limits: the
 * import directory (relative, file:/// and absolute paths resolve under
 * it; `..`, escapes and symbolic links leading out are refused), LOAD CSV
 * disabled, non-regular files refused without blocking, a header naming a
 * column twice, and the cap on a field's size.  Each refusal leaves the
 * graph as it was.  Files live in a fresh temporary directory:
 *
 *   T/secret.csv           outside the import directory
 *   T/imp/                 the import directory
 *   T/imp/a.csv, T/imp/sub/b.csv
 *   T/imp/out.csv   ->  ../secret.csv   (a link leading out)
 *   T/imp/in.csv    ->  sub/b.csv       (a link staying inside)
 *   T/imp/subout    ->  ..              (a directory link leading out)
 *   T/imp/fifo, T/imp/dir
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strata.h"

static char top[64], imp[96];

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void at(char *buf, size_t n, const char *base, const char *rel)
{
    snprintf(buf, n, "%s/%s", base, rel);
}

static int setup(void **state)
{
    (void)state;
    char p[256];
    snprintf(top, sizeof top, "/tmp/strata_csvaccess_XXXXXX");
    assert_non_null(mkdtemp(top));
    at(imp, sizeof imp, top, "imp");
    assert_int_equal(mkdir(imp, 0700), 0);
    at(p, sizeof p, top, "secret.csv");
    write_file(p, "secret\n", 7);
    at(p, sizeof p, imp, "a.csv");
    write_file(p, "x,y\n1,2\n", 8);
    at(p, sizeof p, imp, "sub");
    assert_int_equal(mkdir(p, 0700), 0);
    at(p, sizeof p, imp, "sub/b.csv");
    write_file(p, "b\n", 2);
    at(p, sizeof p, imp, "out.csv");
    assert_int_equal(symlink("../secret.csv", p), 0);
    at(p, sizeof p, imp, "in.csv");
    assert_int_equal(symlink("sub/b.csv", p), 0);
    at(p, sizeof p, imp, "subout");
    assert_int_equal(symlink("..", p), 0);
    at(p, sizeof p, imp, "fifo");
    assert_int_equal(mkfifo(p, 0600), 0);
    at(p, sizeof p, imp, "dir");
    assert_int_equal(mkdir(p, 0700), 0);
    at(p, sizeof p, imp, "dup.csv");
    write_file(p, "id,name,id\n1,a,2\n", 17);
    at(p, sizeof p, imp, "long.csv");
    write_file(p, "a,b\n1,0123456789\n2,01234567890\n", 31);
    at(p, sizeof p, imp, "longq.csv");
    write_file(p, "a\n\"012\n\n56789\"\n\"0123\n\n56789\"\n", 29);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    assert_int_equal(system(cmd), 0);
    return 0;
}

/* Runs q; returns its rows as text ("a|b;..."), or "!Category: message". */
static char *run(strata_graph *g, const char *q)
{
    static char out[4096];
    strata_result *r = NULL;
    strata_status s = strata_query(g, q, NULL, &r);
    const strata_query_error *e = strata_result_error(r);
    if (s != STRATA_OK) {
        assert_non_null(e);
        snprintf(out, sizeof out, "!%s: %s", e->code, e->message);
        strata_result_free(&r);
        return out;
    }
    size_t len = 0;
    out[0] = '\0';
    const strata_value *const *row;
    size_t nc = strata_result_columns(r, NULL);
    while (strata_result_next(r, &row)) {
        for (size_t c = 0; c < nc; c++) {
            const char *str = "null";
            size_t n = 4;
            if (strata_value_type(row[c]) == STRATA_STRING)
                assert_int_equal(strata_value_get_string(row[c], &str, &n), STRATA_OK);
            len += (size_t)snprintf(out + len, sizeof out - len, "%s%.*s", c ? "|" : "",
                                    (int)n, str);
        }
        len += (size_t)snprintf(out + len, sizeof out - len, ";");
    }
    assert_null(strata_result_error(r));
    strata_result_free(&r);
    return out;
}

#define EXPECT(g, q, want)                                                                 \
    do {                                                                                   \
        const char *got_ = run(g, q);                                                      \
        if (strncmp(got_, want, strlen(want)) != 0)                                        \
            fail_msg("%s\n  got:  %s\n  want: %s...", q, got_, want);                      \
    } while (0)

static uint64_t node_count(strata_graph *g)
{
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    uint64_t n = strata_node_count(v);
    strata_view_release(&v);
    return n;
}

static void set_dir(strata_graph *g, const char *dir)
{
    strata_csv_options o = { .import_dir = dir };
    assert_int_equal(strata_set_csv_options(g, &o), STRATA_OK);
}

static void test_default_reads_any_file(void **state)
{
    (void)state;
    strata_graph *g;
    char q[256];
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_csv_options o;
    assert_int_equal(strata_get_csv_options(g, &o), STRATA_OK);
    assert_false(o.disabled);
    assert_null(o.import_dir);
    assert_int_equal(o.field_max, STRATA_CSV_FIELD_MAX);
    snprintf(q, sizeof q, "LOAD CSV FROM 'file://%s/secret.csv' AS r RETURN r[0]", top);
    EXPECT(g, q, "secret;");
    strata_graph_free(&g);
}

static void test_import_dir(void **state)
{
    (void)state;
    strata_graph *g;
    char q[512], want[256];
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    set_dir(g, imp);
    static const char *const reads[][2] = {
        { "LOAD CSV FROM 'file:///a.csv' AS r RETURN r[0]", "x;1;" },
        { "LOAD CSV FROM 'a.csv' AS r RETURN r[0]", "x;1;" },
        { "LOAD CSV FROM '/a.csv' AS r RETURN r[0]", "x;1;" },
        { "LOAD CSV FROM 'file:///sub/b.csv' AS r RETURN r[0]", "b;" },
        { "LOAD CSV FROM 'sub/../a.csv' AS r RETURN r[0]", "x;1;" },
        { "LOAD CSV FROM 'in.csv' AS r RETURN r[0]", "b;" },
    };
    for (size_t i = 0; i < sizeof reads / sizeof *reads; i++)
        EXPECT(g, reads[i][0], reads[i][1]);
    /* file() is the canonical path inside the directory */
    char *canon = realpath(imp, NULL);
    assert_non_null(canon);
    snprintf(want, sizeof want, "%s/sub/b.csv;", canon);
    free(canon);
    EXPECT(g, "LOAD CSV FROM 'in.csv' AS r RETURN file()", want);

    static const char *const refused[] = {
        "LOAD CSV FROM '../secret.csv' AS r RETURN r",
        "LOAD CSV FROM 'file:///../secret.csv' AS r RETURN r",
        "LOAD CSV FROM 'file:///%2e%2e/secret.csv' AS r RETURN r",
        "LOAD CSV FROM 'sub/../../secret.csv' AS r RETURN r",
        "LOAD CSV FROM '../nonexistent.csv' AS r RETURN r",
        "LOAD CSV FROM 'out.csv' AS r RETURN r",
        "LOAD CSV FROM 'subout/secret.csv' AS r RETURN r",
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        EXPECT(g, refused[i], "!SecurityError: LOAD CSV: '");
    /* an absolute path outside is read as a path inside, so not found */
    snprintf(q, sizeof q, "LOAD CSV FROM '%s/secret.csv' AS r RETURN r", top);
    EXPECT(g, q, "!IOError: LOAD CSV: cannot read '");

    /* a refusal after a write undoes the write */
    EXPECT(g, "CREATE (:X) WITH 1 AS one LOAD CSV FROM 'out.csv' AS r CREATE (:Y)",
           "!SecurityError");
    assert_int_equal(node_count(g), 0);

    /* queries on views read the same settings */
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    strata_result *r = NULL;
    assert_int_not_equal(strata_view_query(v, "LOAD CSV FROM 'out.csv' AS r RETURN r", NULL, &r),
                         STRATA_OK);
    assert_string_equal(strata_result_error(r)->code, "SecurityError");
    strata_result_free(&r);
    strata_view_release(&v);

    /* back to unrestricted */
    strata_csv_options o = { 0 };
    assert_int_equal(strata_set_csv_options(g, &o), STRATA_OK);
    EXPECT(g, "LOAD CSV FROM 'a.csv' AS r RETURN r", "!IOError");
    strata_graph_free(&g);
}

static void test_bad_import_dir(void **state)
{
    (void)state;
    strata_graph *g;
    char p[256];
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    set_dir(g, imp);
    at(p, sizeof p, top, "missing");
    strata_csv_options o = { .import_dir = p };
    assert_int_equal(strata_set_csv_options(g, &o), STRATA_ENOTFOUND);
    assert_non_null(strstr(strata_errmsg(g), "missing"));
    at(p, sizeof p, top, "secret.csv");
    assert_int_equal(strata_set_csv_options(g, &o), STRATA_EINVAL);
    assert_int_equal(strata_set_csv_options(g, NULL), STRATA_EINVAL);
    /* the settings in force did not change */
    assert_int_equal(strata_get_csv_options(g, &o), STRATA_OK);
    assert_non_null(o.import_dir);
    assert_non_null(strstr(o.import_dir, "/imp"));
    strata_graph_free(&g);
}

static void test_disabled(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_csv_options o = { .disabled = true };
    assert_int_equal(strata_set_csv_options(g, &o), STRATA_OK);
    EXPECT(g, "CREATE (:X) WITH 1 AS one LOAD CSV FROM 'file:///etc/hostname' AS r RETURN r",
           "!SecurityError: LOAD CSV is disabled");
    assert_int_equal(node_count(g), 0);
    EXPECT(g, "RETURN 1 AS one", "");   /* the rest of Cypher runs */
    strata_graph_free(&g);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "LOAD CSV blocked on a FIFO\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

static void test_non_regular_files(void **state)
{
    (void)state;
    strata_graph *g;
    char q[256];
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    signal(SIGALRM, on_alarm);
    alarm(10);   /* a blocking open would hang here */
    snprintf(q, sizeof q, "LOAD CSV FROM '%s/fifo' AS r RETURN r", imp);
    EXPECT(g, q, "!IOError: LOAD CSV: '");
    assert_non_null(strstr(run(g, q), "is not a regular file (a FIFO)"));
    set_dir(g, imp);
    EXPECT(g, "LOAD CSV FROM 'fifo' AS r RETURN r", "!IOError");
    EXPECT(g, "LOAD CSV FROM 'dir' AS r RETURN r", "!IOError");
    assert_non_null(strstr(run(g, "LOAD CSV FROM 'dir' AS r RETURN r"), "(a directory)"));
    alarm(0);
    strata_graph_free(&g);
}

static void test_duplicate_header(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    set_dir(g, imp);
    EXPECT(g, "LOAD CSV WITH HEADERS FROM 'dup.csv' AS r RETURN r.id",
           "!IOError: LOAD CSV: dup.csv:1: the header names column 'id' twice (fields 1 and 3)");
    /* without headers the same file is just rows */
    EXPECT(g, "LOAD CSV FROM 'dup.csv' AS r RETURN r[2]", "id;2;");
    strata_graph_free(&g);
}

static void test_field_cap(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_csv_options o = { .import_dir = imp, .field_max = 10 };
    assert_int_equal(strata_set_csv_options(g, &o), STRATA_OK);
    /* 10 bytes pass (line 2), 11 fail (line 3) */
    EXPECT(g, "LOAD CSV WITH HEADERS FROM 'long.csv' AS r RETURN r.b",
           "!IOError: LOAD CSV: long.csv:3: field 2 is longer than 10 bytes");
    /* quoted fields holding line ends count every byte; the line is the
       record's first */
    EXPECT(g, "LOAD CSV WITH HEADERS FROM 'longq.csv' AS r RETURN r.a",
           "!IOError: LOAD CSV: longq.csv:5: field 1 is longer than 10 bytes");
    strata_graph_free(&g);

    /* the default cap */
    char p[256], q[300];
    at(p, sizeof p, top, "huge.csv");
    size_t n = STRATA_CSV_FIELD_MAX + 1;
    char *text = malloc(n);
    assert_non_null(text);
    memset(text, 'x', n);
    write_file(p, text, n);
    write_file(p, text, n - 1);   /* exactly the cap: read */
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    snprintf(q, sizeof q, "LOAD CSV FROM '%s' AS r RETURN size(r[0]) AS n", p);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, q, NULL, &r), STRATA_OK);
    const strata_value *const *row;
    int64_t len = 0;
    assert_true(strata_result_next(r, &row));
    assert_int_equal(strata_value_get_int(row[0], &len), STRATA_OK);
    assert_int_equal(len, (int64_t)STRATA_CSV_FIELD_MAX);
    strata_result_free(&r);
    write_file(p, text, n);   /* one byte more: refused */
    free(text);
    assert_non_null(strstr(run(g, q), "huge.csv:1: field 1 is longer than 16777216 bytes"));
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_reads_any_file),
        cmocka_unit_test(test_import_dir),
        cmocka_unit_test(test_bad_import_dir),
        cmocka_unit_test(test_disabled),
        cmocka_unit_test(test_non_regular_files),
        cmocka_unit_test(test_duplicate_header),
        cmocka_unit_test(test_field_cap),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
