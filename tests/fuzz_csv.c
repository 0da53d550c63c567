/*
 * fuzz_csv — libFuzzer target for the CSV reader (query/csv.c).
 *
 * Not built by CMake; scripts/fuzz.sh builds and runs it next to the
 * parser's target:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *       -D_GNU_SOURCE -DSTRATA_TESTING -I. tests/fuzz_csv.c query/csv.c storage/mem.c \
 *       -o /tmp/fuzz_csv
 *
 * STRATA_TESTING shrinks the reader's buffer to a few bytes, so that every
 * state meets a refill.  The first byte of an input picks the delimiter, the rest is the file.
 * Besides what the sanitizers catch, the target aborts when a field is not
 * NUL-terminated, when record lines go backwards, when a failure's message
 * does not start with the file's name and a line, and when the records
 * read do not survive a round trip: written back with every field quoted
 * (quotes doubled), they must read back as the same fields.  Each input is
 * also read with a buffer of a few KiB (records read in place) and with
 * reading in place turned off (the state machine alone): the fields and
 * the final status must be the same every way.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/csv.h"

typedef struct record_set {
    char *text;       /* the records written back */
    size_t len, cap;
    char *fields;     /* every field's bytes, each preceded by its length */
    size_t flen, fcap;
} record_set;

static void put(char **buf, size_t *len, size_t *cap, const void *p, size_t n)
{
    if (*len + n > *cap) {
        *cap = (*len + n) * 2 + 64;
        *buf = realloc(*buf, *cap);
        if (!*buf)
            abort();
    }
    memcpy(*buf + *len, p, n);
    *len += n;
}

/* Reads every record; writes them back quoted into rs->text and their
   fields into rs->fields.  Returns the final status. */
static csv_status read_all(const uint8_t *data, size_t size, char delim, record_set *rs)
{
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        abort();
    csv_reader *r = csv_new(f, "fuzz.csv", delim);
    if (!r)
        abort();
    csv_status s;
    uint64_t last_line = 0;
    while ((s = csv_next(r)) == CSV_RECORD) {
        if (csv_record_line(r) <= last_line || csv_nfields(r) == 0)
            abort();
        last_line = csv_record_line(r);
        for (size_t i = 0; i < csv_nfields(r); i++) {
            csv_field fd = csv_get(r, i);
            if (fd.ptr[fd.len] != '\0')
                abort();
            put(&rs->fields, &rs->flen, &rs->fcap, &fd.len, sizeof fd.len);
            put(&rs->fields, &rs->flen, &rs->fcap, fd.ptr, fd.len);
            if (i)
                put(&rs->text, &rs->len, &rs->cap, &delim, 1);
            put(&rs->text, &rs->len, &rs->cap, "\"", 1);
            for (size_t k = 0; k < fd.len; k++)
                put(&rs->text, &rs->len, &rs->cap, fd.ptr[k] == '"' ? "\"\"" : &fd.ptr[k],
                    fd.ptr[k] == '"' ? 2 : 1);
            put(&rs->text, &rs->len, &rs->cap, "\"", 1);
        }
        put(&rs->text, &rs->len, &rs->cap, "\n", 1);
    }
    if (s != CSV_END && strncmp(csv_error(r), "fuzz.csv:", 9) != 0)
        abort();
    csv_free(&r);
    fclose(f);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    char delim = (char)data[0];
    if (delim == '"' || delim == '\n' || delim == '\r')
        delim = ',';
    record_set a = {0}, b = {0};
    csv_status s = read_all(data + 1, size - 1, delim, &a);
    /* the same records whether read in place, with a large buffer, or by
       the state machine alone */
    for (int way = 0; way < 2; way++) {
        record_set c = {0};
        csv_buffer_for_tests = way == 0 ? 4096 : 7;
        csv_in_place_for_tests = way != 1;
        csv_status sc = read_all(data + 1, size - 1, delim, &c);
        csv_buffer_for_tests = 7;
        csv_in_place_for_tests = true;
        if (sc != s || c.flen != a.flen || (a.flen && memcmp(c.fields, a.fields, a.flen) != 0))
            abort();
        free(c.text);
        free(c.fields);
    }
    if (s == CSV_END && a.len > 0) {
        /* the records written back read back the same */
        if (read_all((const uint8_t *)a.text, a.len, delim, &b) != CSV_END ||
            a.flen != b.flen || memcmp(a.fields, b.fields, a.flen) != 0)
            abort();
    }
    free(a.text);
    free(a.fields);
    free(b.text);
    free(b.fields);
    return 0;
}
