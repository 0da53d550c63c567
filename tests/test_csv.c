/*
 * Tests for query/csv: a table of inputs and the records they must give
 * (or the error they must stop with), fields that outgrow the input buffer
 * (a few bytes long in test builds, so every state meets a refill), and
 * every allocation failure.
 *
 * A record renders as "LINE:" and its fields joined by '|', a quoted field
 * inside <>, records joined by ' '; an error renders as "!" and the
 * message.
 *
 * Records that lie whole in the buffer are read in place, the others by
 * the state machine (query/csv.c): every table case and a few thousand
 * random inputs are read both ways and with buffers of a few bytes and of
 * a few KiB, and must render the same.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/csv.h"
#include "storage/mem.h"

typedef struct csv_case {
    const char *input;
    char delimiter;
    const char *expect;
} csv_case;

static const csv_case cases[] = {
    {"a,b,c\n1,2,3\n", ',', "1:a|b|c 2:1|2|3"},
    {"a,b\n1,2", ',', "1:a|b 2:1|2"},                                  /* no final line end */
    {"a,b\r\n1,2\r\n", ',', "1:a|b 2:1|2"},                            /* CRLF */
    {"a\rb\r\nc\n", ',', "1:a 2:b 3:c"},                               /* lone CR */
    {"\"x,y\",z\n", ',', "1:<x,y>|z"},                                 /* embedded delimiter */
    {"\"say \"\"hi\"\"\",2\n", ',', "1:<say \"hi\">|2"},               /* doubled quotes */
    {"\"two\nlines\",b\nnext,row\n", ',', "1:<two\nlines>|b 3:next|row"},
    {"\"crlf\r\ninside\",b\r\nc\r\n", ',', "1:<crlf\r\ninside>|b 3:c"},
    {"a,,\"\"\n", ',', "1:a||<>"},                                     /* empty vs "" */
    {"a,\n", ',', "1:a|"},                                             /* trailing delimiter */
    {",\n", ',', "1:|"},
    {"\"\"\n", ',', "1:<>"},
    {"\xEF\xBB\xBFid,name\n1,x\n", ',', "1:id|name 2:1|x"},            /* BOM skipped */
    {"a,\xEF\xBB\xBF\n", ',', "1:a|\xEF\xBB\xBF"},                     /* not at the start: data */
    {"\xEF\xBB", ',', "1:\xEF\xBB"},                                   /* shorter than a BOM */
    {"a\n\n\r\n\nb\n", ',', "1:a 5:b"},                                /* blank lines skipped */
    {"", ',', ""},
    {"\xEF\xBB\xBF", ',', ""},
    {"a;b,c;\"d;e\"\n", ';', "1:a|b,c|<d;e>"},
    {"a\tb \t c\n", '\t', "1:a|b | c"},
    {"x,\"a\"\"\"\n", ',', "1:x|<a\">"},
    {"\"a\",\"b\"", ',', "1:<a>|<b>"},
    {"caf\xC3\xA9,\xE2\x82\xAC\n", ',', "1:caf\xC3\xA9|\xE2\x82\xAC"},  /* UTF-8 passes through */
    /* errors: file, line, what */
    {"a,b\n\"open,c\nd\n", ',', "!t.csv:2: unterminated quoted field"},
    {"a,b\nc,d\"e\n", ',', "!t.csv:2: stray quote in unquoted field 2"},
    {"a\n\"x\"y,b\n", ',', "!t.csv:2: unexpected 'y' after the closing quote of field 1"},
    {"\"a\nb\" c\n", ',', "!t.csv:2: unexpected ' ' after the closing quote of field 1"},
    {"ok\n\"a\"\x01\n", ',', "!t.csv:2: unexpected byte 0x01 after the closing quote"},
};

typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
        assert_non_null(t->p);
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

/* The quote byte the readers below are set to. */
static char quote_byte = '"';

/* Reads input to the end; the rendering (see the top) in a new string,
   each record's csv_record_utf8 verdict added when `utf8`. */
static char *render_as(const char *input, size_t len, char delimiter, bool utf8)
{
    FILE *f = fmemopen((void *)input, len ? len : 1, "r");
    assert_non_null(f);
    if (len == 0)
        fgetc(f);   /* fmemopen needs a size of at least 1: consume it */
    csv_reader *r = csv_new(f, "t.csv", delimiter);
    assert_non_null(r);
    csv_set_quote(r, quote_byte);
    text t = {0};
    puts_(&t, "");
    csv_status s;
    while ((s = csv_next(r)) == CSV_RECORD) {
        char buf[32];
        snprintf(buf, sizeof buf, "%s%llu:", t.len ? " " : "",
                 (unsigned long long)csv_record_line(r));
        puts_(&t, buf);
        for (size_t i = 0; i < csv_nfields(r); i++) {
            csv_field fd = csv_get(r, i);
            assert_int_equal(fd.ptr[fd.len], '\0');
            if (i)
                puts_(&t, "|");
            if (fd.quoted)
                puts_(&t, "<");
            put(&t, fd.ptr, fd.len);
            if (fd.quoted)
                puts_(&t, ">");
        }
        size_t bad_field = 0, bad_at = 0;
        if (utf8 && !csv_record_utf8(r, &bad_field, &bad_at)) {
            char mark[48];
            snprintf(mark, sizeof mark, "~%zu.%zu", bad_field, bad_at);
            puts_(&t, mark);
        }
    }
    if (s != CSV_END) {
        assert_int_equal(s, CSV_BAD);
        t.len = 0;
        puts_(&t, "!");
        puts_(&t, csv_error(r));
        /* failures stick */
        assert_int_equal(csv_next(r), CSV_BAD);
    }
    csv_free(&r);
    assert_null(r);
    fclose(f);
    return t.p;
}

/* The ways a reader may be set up: buffer size and reading in place. */
static const struct reader_mode {
    size_t buffer;
    bool in_place;
} modes[] = {{7, true}, {7, false}, {4096, true}, {4096, false}, {3, true}, {23, true}};

/* render_as in every mode; fails unless they all agree.  The rendering. */
static char *render_all(const char *input, size_t len, char delimiter, bool utf8)
{
    char *first = NULL;
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        csv_buffer_for_tests = modes[m].buffer;
        csv_in_place_for_tests = modes[m].in_place;
        char *got = render_as(input, len, delimiter, utf8);
        csv_buffer_for_tests = 7;
        csv_in_place_for_tests = true;
        if (!first) {
            first = got;
            continue;
        }
        if (strcmp(first, got) != 0)
            fail_msg("buffer %zu, in place %d:\n expected: %s\n      got: %s", modes[m].buffer,
                     modes[m].in_place, first, got);
        free(got);
    }
    return first;
}

static char *render(const char *input, size_t len, char delimiter)
{
    return render_all(input, len, delimiter, false);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const csv_case *c = &cases[i];
        char *got = render(c->input, strlen(c->input), c->delimiter);
        bool ok = c->expect[0] == '!' ? strncmp(got, c->expect, strlen(c->expect)) == 0
                                      : strcmp(got, c->expect) == 0;
        if (!ok)
            fail_msg("case %zu: input \"%s\"\n expected: %s\n      got: %s", i, c->input,
                     c->expect, got);
        free(got);
    }
}

/* A field and a record far longer than the input buffer. */
static void test_long_fields(void **state)
{
    (void)state;
    size_t n = 100000;
    char *in = malloc(2 * n + 16);
    assert_non_null(in);
    size_t len = 0;
    in[len++] = '"';
    for (size_t i = 0; i < n; i++)
        in[len++] = i % 1000 == 999 ? '\n' : 'a' + (char)(i % 26);
    memcpy(in + len, "\",", 2);
    len += 2;
    for (size_t i = 0; i < n; i++)
        in[len++] = 'z';
    memcpy(in + len, "\nend\n", 5);
    len += 5;
    FILE *f = fmemopen(in, len, "r");
    csv_reader *r = csv_new(f, "long.csv", ',');
    assert_int_equal(csv_next(r), CSV_RECORD);
    assert_int_equal(csv_nfields(r), 2);
    csv_field a = csv_get(r, 0), b = csv_get(r, 1);
    assert_int_equal(a.len, n);
    assert_memory_equal(a.ptr, in + 1, n);
    assert_int_equal(b.len, n);
    assert_int_equal(b.ptr[n - 1], 'z');
    assert_int_equal(csv_next(r), CSV_RECORD);
    assert_int_equal(csv_record_line(r), 1 + n / 1000 + 1);
    assert_string_equal(csv_get(r, 0).ptr, "end");
    assert_int_equal(csv_next(r), CSV_END);
    csv_free(&r);
    fclose(f);
    free(in);
}

/* Every allocation failure gives NULL or CSV_NOMEM and leaks nothing;
   once allocations succeed, the records are right. */
static void test_allocation_failures(void **state)
{
    (void)state;
    static const char in[] = "h1,h2,h3,h4,h5,h6,h7,h8,h9,h10,h11,h12,h13,h14,h15,h16,h17\n"
                             "\"a long quoted field, longer than the first record buffer: "
                             "............................................................"
                             "............................................................"
                             "............................................................"
                             "..........................................................\",b\n";
    size_t base = mem_ctx_bytes(mem_scratch());
    for (long k = 1;; k++) {
        FILE *f = fmemopen((void *)in, sizeof in - 1, "r");
        mem_fail_at(k);
        csv_reader *r = csv_new(f, "t.csv", ',');
        csv_status s = CSV_NOMEM;
        size_t records = 0;
        if (r)
            while ((s = csv_next(r)) == CSV_RECORD)
                records++;
        bool failed = mem_fail_count() >= k;
        mem_fail_clear();
        if (failed) {
            assert_true(r == NULL || s == CSV_NOMEM);
            if (r)
                assert_non_null(strstr(csv_error(r), "out of memory"));
        }
        csv_free(&r);
        fclose(f);
        assert_int_equal(mem_ctx_bytes(mem_scratch()), base);
        if (!failed) {
            assert_int_equal(s, CSV_END);
            assert_int_equal(records, 2);
            break;
        }
    }
}

/* Random inputs of the bytes that matter (delimiters, quotes, line ends,
   UTF-8 and bytes that are not, NUL) read every way give the same
   records, errors and UTF-8 verdicts. */
static void test_random_inputs(void **state)
{
    (void)state;
    static const char *const pieces[] = {"a", "bc", ",", ",", "\"", "\"\"", "\n", "\r\n",
                                         "\r", " ", "\xC3\xA9", "\xE2\x82\xAC", "\xFF",
                                         "\xC3", ";", "12", "-3.5"};
    const size_t npieces = sizeof pieces / sizeof *pieces;
    uint64_t x = 88172645463325252ull;
    char buf[256];
    for (int round = 0; round < 4000; round++) {
        size_t len = 0;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = x % 40;
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            const char *p = x % 50 == 0 ? "\0" : pieces[x % npieces];
            size_t pl = x % 50 == 0 ? 1 : strlen(p);
            memcpy(buf + len, p, pl);
            len += pl;
        }
        /* inputs that are well-formed as well: every quote closed */
        if (round % 2) {
            size_t quotes = 0;
            for (size_t i = 0; i < len; i++)
                quotes += buf[i] == '"';
            if (quotes % 2)
                buf[len++] = '"';
        }
        /* a quote byte that is not ASCII: a doubled one stays in the
           field, whose UTF-8 must then be checked */
        quote_byte = round % 4 == 3 ? '\xB4' : '"';
        for (size_t i = 0; quote_byte != '"' && i < len; i++)
            buf[i] = buf[i] == '"' ? '\xB4' : buf[i];
        free(render_all(buf, len, round % 3 ? ',' : ';', true));
    }
    quote_byte = '"';
}

/* A doubled quote byte that is not ASCII leaves a byte of it in the
   field: not UTF-8 on its own, whichever way the record is read. */
static void test_quote_byte_not_ascii(void **state)
{
    (void)state;
    quote_byte = '\xB4';
    static const char input[] = "\xB4" "a\xB4\xB4" "b\xB4,x\n";
    char *got = render_all(input, sizeof input - 1, ',', true);
    quote_byte = '"';
    assert_string_equal(got, "1:<a\xB4" "b>|x~0.1");
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_random_inputs),
        cmocka_unit_test(test_quote_byte_not_ascii),
        cmocka_unit_test(test_long_fields),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
