/*
 * Strings are UTF-8 everywhere (storage/utf8.h): the reader itself, then
 * every entry point that takes bytes from outside, each refusing
 * malformed UTF-8 with a message naming where — the C API's string values,
 * map keys, token and index names; Cypher literals, escapes and comments;
 * LOAD CSV fields and file names; strings in a saved file.
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

#include "core/persist_codec.h"
#include "storage/utf8.h"
#include "strata.h"

typedef struct bad_case {
    const char *bytes;
    size_t len;
    size_t bad;   /* the offset utf8_check reports */
} bad_case;

#define BAD(s, at) {s, sizeof s - 1, at}

/* Malformed, each kind once: where the check must stop. */
static const bad_case bad[] = {
    BAD("\xff", 0),                 /* never a UTF-8 byte */
    BAD("ab\xfe", 2),
    BAD("a\x80z", 1),               /* a lone continuation byte */
    BAD("Caf\xc3", 3),              /* cut short at the end */
    BAD("Caf\xc3(", 3),             /* cut short by an ASCII byte */
    BAD("\xe2\x82", 0),
    BAD("\xc0\xaf", 0),             /* overlong '/' */
    BAD("\xc1\xbf", 0),
    BAD("\xe0\x80\xaf", 0),         /* overlong, three bytes */
    BAD("\xf0\x80\x80\xaf", 0),     /* overlong, four bytes */
    BAD("x\xed\xa0\x80", 1),        /* UTF-16 high surrogate U+D800 */
    BAD("\xed\xbf\xbf", 0),         /* low surrogate U+DFFF */
    BAD("\xf4\x90\x80\x80", 0),     /* U+110000 */
    BAD("\xf5\x80\x80\x80", 0),
    BAD("é€😀\xf0\x9f\x98", 9),      /* good characters, then a cut one */
};

/* Well-formed, the edges of each width included. */
static const char *const good[] = {
    "", "a", "\x7f", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80",
    "\xef\xbf\xbf", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf", "Café", "日本", "😀",
};

static void test_reader(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t at = 999;
        if (utf8_check(bad[i].bytes, bad[i].len, &at))
            fail_msg("case %zu accepted", i);
        assert_int_equal(at, bad[i].bad);
    }
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        assert_true(utf8_check(good[i], strlen(good[i]), NULL));
    assert_true(utf8_check("a\0b", 3, NULL));   /* U+0000 is a character */
    /* every scalar value round-trips; every surrogate is refused */
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        char enc[UTF8_MAX_BYTES];
        uint32_t back = 0;
        size_t n = utf8_encode(cp, enc);
        bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
        size_t m = utf8_decode(enc, n, &back);
        if (surrogate ? m != 0 : (m != n || back != cp))
            fail_msg("U+%04X", (unsigned)cp);
    }
    assert_int_equal(utf8_count("aé€😀", strlen("aé€😀")), 4);
    assert_int_equal(utf8_skip("aé€😀", strlen("aé€😀"), 2), 3);
    assert_int_equal(utf8_skip("aé", 3, 9), 3);
}

/* ---- the C API ---- */

static void test_api_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        strata_value *v = strata_value_string(bad[i].bytes, bad[i].len);
        if (v)
            fail_msg("strata_value_string accepted case %zu", i);
        const char *key = bad[i].bytes;
        strata_value *one = strata_value_int(1);
        if (strlen(key) == bad[i].len) {   /* as a NUL-terminated key */
            strata_value *m = strata_value_map(&key, (const strata_value *const *)&one, 1);
            if (m)
                fail_msg("strata_value_map accepted key %zu", i);
        }
        strata_value_free(&one);
    }
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        strata_value *v = strata_value_string(good[i], strlen(good[i]));
        assert_non_null(v);
        const char *s;
        size_t n;
        assert_int_equal(strata_value_get_string(v, &s, &n), STRATA_OK);
        assert_memory_equal(s, good[i], n);
        strata_value_free(&v);
    }
    strata_value *nul = strata_value_string("a\0b", 3);
    assert_non_null(nul);
    strata_value_free(&nul);
}

static void test_api_names(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token t = 77;
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "ok\xed\xa0\x80", &t), STRATA_EINVAL);
    assert_int_equal(t, 77);
    assert_non_null(strstr(strata_errmsg(g), "must be valid UTF-8 (byte 3 is not)"));
    strata_token label;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "L", &label), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "k", &t), STRATA_OK);
    strata_index idx;
    assert_int_equal(strata_index_create_named(g, STRATA_INDEX_HASH, false, label, &t, 1,
                                               "by\xff", &idx),
                     STRATA_EINVAL);
    assert_non_null(strstr(strata_errmsg(g), "index name must be valid UTF-8 (byte 3 is not)"));
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_token_lookup(v, STRATA_LABEL, "L\xc3", &t), STRATA_EINVAL);
    assert_non_null(strstr(strata_view_errmsg(v), "(byte 2 is not)"));
    assert_int_equal(strata_indexes(v, NULL, 0, &(size_t){0}), STRATA_OK);
    strata_view_release(&v);
    strata_graph_free(&g);
}

/* ---- Cypher ---- */

static void expect_error(strata_graph *g, const char *q, const char *code, const char *detail,
                         const char *message, uint32_t column)
{
    strata_result *r = NULL;
    strata_query(g, q, NULL, &r);
    const strata_query_error *e = strata_result_error(r);
    if (!e)
        fail_msg("no error for %s", q);
    assert_string_equal(e->code, code);
    if (detail)
        assert_string_equal(e->detail, detail);
    if (!strstr(e->message, message))
        fail_msg("%s: message '%s' lacks '%s'", q, e->message, message);
    if (column)
        assert_int_equal(e->column, column);
    strata_result_free(&r);
}

static void test_cypher_text(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    static const char *const code = "SyntaxError";
    expect_error(g, "RETURN 'a\xffz'", code, "InvalidUnicodeCharacter", "invalid UTF-8", 10);
    expect_error(g, "RETURN '\\uD800'", code, "InvalidUnicodeLiteral", "unpaired UTF-16", 9);
    expect_error(g, "RETURN '\\uD800\\u0041'", code, "InvalidUnicodeLiteral", "unpaired", 9);
    expect_error(g, "RETURN 'x\\uDC00'", code, "InvalidUnicodeLiteral", "no Unicode", 10);
    expect_error(g, "RETURN '\\U0000D800'", code, "InvalidUnicodeLiteral", "no Unicode", 9);
    expect_error(g, "RETURN '\\U00110000'", code, "InvalidUnicodeLiteral", "no Unicode", 9);
    expect_error(g, "RETURN {`k\xc3`: 1}", code, "InvalidUnicodeCharacter", "invalid UTF-8", 0);
    /* comments too: their text reaches column names */
    expect_error(g, "RETURN 1 /* \xff */ + 1", code, "InvalidUnicodeCharacter", "invalid", 13);
    expect_error(g, "RETURN 1 // \xc0\xaf\n", code, "InvalidUnicodeCharacter", "invalid", 13);
    /* a surrogate pair is one character */
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "RETURN '\\uD83D\\uDE00' /* é */ AS s", NULL, &r),
                     STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    const char *s;
    size_t n;
    assert_int_equal(strata_value_get_string(row[0], &s, &n), STRATA_OK);
    assert_int_equal(n, 4);
    assert_memory_equal(s, "\xf0\x9f\x98\x80", 4);
    strata_result_free(&r);
    strata_graph_free(&g);
}

/* ---- files: LOAD CSV and the loader ---- */

static char dir[64];

static const char *path_of(const char *name)
{
    static char buf[2][256];
    static int turn;
    char *p = buf[turn ^= 1];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

static void write_file(const char *name, const void *bytes, size_t n)
{
    FILE *f = fopen(path_of(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

static void test_load_csv(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    static const char text[] = "a,b\nok,fine\nx,caf\xc3(\n";
    write_file("bad.csv", text, sizeof text - 1);
    char q[256];
    snprintf(q, sizeof q, "LOAD CSV FROM '%s' AS r CREATE (:R {v: r[1]})", path_of("bad.csv"));
    expect_error(g, q, "IOError", NULL,
                 "bad.csv:3: field 2 is not valid UTF-8 (byte 4 of the field)", 0);
    /* the statement wrote nothing */
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_node_count(v), 0);
    strata_view_release(&v);
    /* headers are fields too */
    static const char head[] = "n\xff\n1\n";
    write_file("head.csv", head, sizeof head - 1);
    snprintf(q, sizeof q, "LOAD CSV WITH HEADERS FROM '%s' AS r RETURN r", path_of("head.csv"));
    expect_error(g, q, "IOError", NULL, "head.csv:1: field 1 is not valid UTF-8 (byte 2", 0);
    /* a %-escape can spell bytes that are no text */
    expect_error(g, "LOAD CSV FROM 'file:///tmp/caf%E9.csv' AS r RETURN r", "ArgumentError",
                 NULL, "the file name is not valid UTF-8 once %-decoded (byte 9)", 0);
    strata_graph_free(&g);
}

static unsigned char *read_file(const char *name, size_t *n)
{
    FILE *f = fopen(path_of(name), "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static void put_u32(unsigned char *p, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

/* Re-checksums the section holding byte at, so only the content is bad. */
static void reseal(unsigned char *f, size_t n, size_t at)
{
    size_t off = 16;
    while (off + PCODEC_SECTION_HEADER <= n) {
        uint64_t len = 0;
        for (int i = 0; i < 8; i++)
            len |= (uint64_t)f[off + 8 + i] << (8 * i);
        unsigned char *payload = f + off + PCODEC_SECTION_HEADER;
        if (at >= off + PCODEC_SECTION_HEADER && at < off + PCODEC_SECTION_HEADER + len) {
            put_u32(f + off + 16, crc32c(0, payload, (size_t)len));
            put_u32(f + off + 20, crc32c(0, f + off, 20));
            return;
        }
        off += PCODEC_SECTION_HEADER + (size_t)len;
    }
    fail_msg("no section holds byte %zu", at);
}

/* Saves a graph holding `find` (a label or a string in a property), swaps
   it for `repl` (as long) in the file and loads that. */
static void expect_load_refuses(const char *find, const char *repl, size_t bad_at,
                                const char *section)
{
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token label, key;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "Café", &label), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "p", &key), STRATA_OK);
    strata_id node;
    assert_int_equal(strata_node_create(g, &label, 1, &node), STRATA_OK);
    strata_value *s = strata_value_string("price 5€", strlen("price 5€"));
    strata_value *item = strata_value_string("née", strlen("née"));
    strata_value *list = strata_value_list((const strata_value *const *)&item, 1);
    assert_int_equal(strata_node_set(g, node, key, s), STRATA_OK);
    strata_token key2;
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "q", &key2), STRATA_OK);
    assert_int_equal(strata_node_set(g, node, key2, list), STRATA_OK);
    strata_value_free(&s);
    strata_value_free(&item);
    strata_value_free(&list);
    assert_int_equal(strata_save(g, path_of("ok.db")), STRATA_OK);
    strata_graph_free(&g);

    size_t n;
    unsigned char *f = read_file("ok.db", &n);
    unsigned char *hit = memmem(f, n, find, strlen(find));
    assert_non_null(hit);
    assert_int_equal(strlen(repl), strlen(find));
    memcpy(hit, repl, strlen(repl));
    size_t at = (size_t)(hit - f) + bad_at;
    reseal(f, n, at);
    write_file("bad.db", f, n);
    free(f);

    char err[512], want[128];
    strata_graph *h = NULL;
    assert_int_equal(strata_load_ex(path_of("bad.db"), &h, err, sizeof err), STRATA_ECORRUPT);
    assert_null(h);
    snprintf(want, sizeof want, "section %s at byte %zu: a string of", section, at);
    if (!strstr(err, want) || !strstr(err, "is not valid UTF-8"))
        fail_msg("'%s' lacks '%s'", err, want);
}

static void test_loader(void **state)
{
    (void)state;
    expect_load_refuses("Caf\xc3\xa9", "Caf\xc3(", 3, "TOKN");            /* a label */
    expect_load_refuses("5\xe2\x82\xac", "5\xed\xa0\x80", 1, "NODE");    /* a surrogate */
    expect_load_refuses("n\xc3\xa9" "e", "n\xc0\xa9" "e", 1, "NODE");    /* in a list */
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/strata_utf8_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    static const char *const names[] = {"bad.csv", "head.csv", "ok.db", "bad.db"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        remove(path_of(names[i]));
    remove(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader),
        cmocka_unit_test(test_api_values),
        cmocka_unit_test(test_api_names),
        cmocka_unit_test(test_cypher_text),
        cmocka_unit_test(test_load_csv),
        cmocka_unit_test(test_loader),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
