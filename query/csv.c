/*
 * csv — the streaming RFC 4180 reader (csv.h states what it accepts and
 * its invariants).
 *
 * One state machine over bytes:
 *
 *   FIELD_START  --'"'-->            QUOTED
 *   FIELD_START  --other byte-->     UNQUOTED
 *   UNQUOTED     --'"'-->            error: stray quote
 *   QUOTED       --'"'-->            CLOSED     (a quote, or the end of the field)
 *   CLOSED       --'"'-->            QUOTED     (it was "": one quote)
 *   CLOSED       --other byte-->     error: text after the closing quote
 *   FIELD_START, UNQUOTED, CLOSED --delimiter--> FIELD_START (field ends)
 *   FIELD_START, UNQUOTED, CLOSED --CR/LF/EOF--> record ends
 *   QUOTED       --EOF-->            error: unterminated quote
 *
 * Runs of ordinary bytes are copied with one memcpy (the tables `stop`
 * mark the bytes that end a run), so a plain field costs a scan and a copy.
 * Input comes through a buffer refilled with fread; test builds make it a
 * few bytes long so that every state meets the buffer's end.
 *
 * A record that lies whole in the buffer and is well-formed — nearly every
 * record of a large file — is read in place instead (read_in_place): one
 * scan finds its fields, then each field's end is overwritten with its
 * NUL (and a quoted field's doubled quotes closed up), so the fields point
 * into the buffer and nothing is copied; the scan also notes whether the
 * record is all ASCII, which makes csv_record_utf8 free.  Anything else —
 * a record the buffer cuts (after one move of it to the buffer's front
 * and a read), a malformed one, a field over the limit — goes through the
 * state machine above, which names the error.  Both give the same
 * records (tests/test_csv.c reads random inputs both ways).
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "query/csv.h"
#include "storage/mem.h"
#include "storage/utf8.h"

#ifdef STRATA_TESTING
size_t csv_buffer_for_tests = 7;
bool csv_in_place_for_tests = true;
#define CSV_BUFFER csv_buffer_for_tests
#else
/* 1 MiB: fread calls become negligible next to the parse */
#define CSV_BUFFER (1u << 20)
#endif

enum csv_state { FIELD_START, UNQUOTED, QUOTED, CLOSED };

typedef struct field_pos {
    size_t off, len;   /* from the record's base */
    bool quoted;
} field_pos;

struct csv_reader {
    FILE *f;
    char *name;
    unsigned char delim;
    unsigned char quote;        /* '"' unless csv_set_quote */
    unsigned char *in;          /* in_cap (CSV_BUFFER) bytes and one more */
    size_t in_cap;
    size_t in_len, in_pos;
    bool eof;
    char *rec;                  /* the record's fields, each NUL-terminated */
    size_t rec_len, rec_cap;
    const char *base;           /* the record's fields: rec, or in when read in place */
    bool ascii;                 /* the record read in place is all ASCII */
    field_pos *fields;
    size_t nfields, cap_fields;
    uint64_t line;              /* the line of the next byte */
    uint64_t record_line;
    size_t field_max;           /* csv_set_field_max */
    bool skip_lf;               /* a CR ended the last line: a LF next is part of it */
    bool started;               /* the BOM check has run */
    unsigned char stop_plain[256];  /* ends a run in an unquoted field */
    unsigned char stop_quoted[256]; /* ends a run in a quoted field */
    csv_status failed;          /* CSV_RECORD while not failed */
    uint64_t err_line;
    char err[320];
};

/* The bytes that end a run copied whole (copy_run). */
static void set_stops(csv_reader *r)
{
    memset(r->stop_plain, 0, sizeof r->stop_plain);
    memset(r->stop_quoted, 0, sizeof r->stop_quoted);
    r->stop_plain[r->delim] = r->stop_plain[r->quote] = 1;
    r->stop_plain['\r'] = r->stop_plain['\n'] = 1;
    r->stop_quoted[r->quote] = r->stop_quoted['\n'] = 1;
}

csv_reader *csv_new(FILE *f, const char *name, char delimiter)
{
    mem_ctx *m = mem_scratch();
    csv_reader *r = mem_calloc(m, sizeof *r);
    if (!r)
        return NULL;
    size_t name_size = strlen(name) + 1;
    r->name = mem_alloc(m, name_size);
    r->in_cap = CSV_BUFFER;
    r->in = mem_alloc(m, r->in_cap + 1);   /* + the NUL of a field read in place */
    if (!r->name || !r->in) {
        csv_free(&r);
        return NULL;
    }
    memcpy(r->name, name, name_size);
    r->f = f;
    r->delim = (unsigned char)delimiter;
    r->quote = '"';
    r->line = 1;
    r->field_max = CSV_FIELD_MAX;
    r->failed = CSV_RECORD;
    set_stops(r);
    return r;
}

void csv_set_quote(csv_reader *r, char quote)
{
    r->quote = (unsigned char)quote;
    set_stops(r);
}

void csv_free(csv_reader **rp)
{
    if (!rp || !*rp)
        return;
    csv_reader *r = *rp;
    mem_ctx *m = mem_scratch();
    if (r->name)
        mem_free(m, r->name);
    if (r->in)
        mem_free(m, r->in);
    if (r->rec)
        mem_free(m, r->rec);
    if (r->fields)
        mem_free(m, r->fields);
    mem_free(m, r);
    *rp = NULL;
}

static csv_status fail(csv_reader *r, csv_status s, uint64_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static csv_status fail(csv_reader *r, csv_status s, uint64_t line, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->err, sizeof r->err, "%s:%llu: %s", r->name, (unsigned long long)line, what);
    r->err_line = line;
    r->failed = s;
    return s;
}

/* Moves what is left of the buffer to its front and reads more.  0 when
   bytes are available, 1 at end of file, -1 on a read error. */
static int refill(csv_reader *r)
{
    if (r->in_pos < r->in_len)
        return 0;
    if (r->eof)
        return 1;
    r->in_len = fread(r->in, 1, r->in_cap, r->f);
    r->in_pos = 0;
    if (r->in_len > 0)
        return 0;
    if (ferror(r->f))
        return -1;
    r->eof = true;
    return 1;
}

/* Skips a UTF-8 byte order mark at the start of the file.  The buffer holds
   at least 3 bytes unless the file is shorter. */
static int skip_bom(csv_reader *r)
{
    while (r->in_len < 3 && !r->eof) {
        size_t got = fread(r->in + r->in_len, 1, r->in_cap - r->in_len, r->f);
        if (got == 0) {
            if (ferror(r->f))
                return -1;
            r->eof = true;
        }
        r->in_len += got;
    }
    if (r->in_len >= 3 && memcmp(r->in, "\xEF\xBB\xBF", 3) == 0)
        r->in_pos = 3;
    return 0;
}

static int rec_reserve(csv_reader *r, size_t more)
{
    if (r->rec_cap - r->rec_len >= more)
        return 0;
    size_t need = r->rec_len + more;
    if (need < r->rec_len)
        return -1;
    size_t cap = r->rec_cap ? r->rec_cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = mem_realloc(mem_scratch(), r->rec, cap);
    if (!p)
        return -1;
    r->rec = p;
    r->rec_cap = cap;
    return 0;
}

void csv_set_field_max(csv_reader *r, size_t max)
{
    r->field_max = max == 0 ? 1 : max > SIZE_MAX / 2 ? SIZE_MAX / 2 : max;
}

/* Appends to the field being built (fields[nfields]), refusing to grow it
   past field_max bytes and its closing NUL: -1 then, with r failed.  (A
   field of field_max + 1 bytes passes here and fails at its NUL.) */
static int rec_append(csv_reader *r, const void *p, size_t n)
{
    if (n == 0)
        return 0;   /* an empty run before the record buffer exists */
    size_t have = r->rec_len - r->fields[r->nfields].off;
    if (have + n > r->field_max + 1) {
        fail(r, CSV_BAD, r->record_line,
             "field %zu is longer than %zu bytes, the most a field may hold", r->nfields + 1,
             r->field_max);
        return -1;
    }
    if (rec_reserve(r, n) != 0)
        return -1;
    memcpy(r->rec + r->rec_len, p, n);
    r->rec_len += n;
    return 0;
}

/* Room for field nfields; -1 when out of memory. */
static int reserve_field(csv_reader *r)
{
    if (r->nfields < r->cap_fields)
        return 0;
    size_t cap = r->cap_fields ? r->cap_fields * 2 : 16;
    field_pos *p = mem_realloc(mem_scratch(), r->fields, mem_array_size(cap, sizeof *p));
    if (!p)
        return -1;
    r->fields = p;
    r->cap_fields = cap;
    return 0;
}

/* The field being built starts at fields[nfields].off. */
static int field_begin(csv_reader *r)
{
    if (reserve_field(r) != 0)
        return -1;
    r->fields[r->nfields] = (field_pos){r->rec_len, 0, false};
    return 0;
}

static int field_end(csv_reader *r)
{
    field_pos *fp = &r->fields[r->nfields];
    fp->len = r->rec_len - fp->off;
    if (fp->len < r->field_max && r->rec_len < r->rec_cap)
        r->rec[r->rec_len++] = '\0';   /* the common case of rec_append's */
    else if (rec_append(r, "", 1) != 0)
        return -1;
    r->nfields++;
    return 0;
}

/* Copies the run of ordinary bytes at the read position (bytes for which
   stop[] is 0) into the record. */
static int copy_run(csv_reader *r, const unsigned char *stop)
{
    const unsigned char *p = r->in + r->in_pos, *end = r->in + r->in_len, *q = p;
    while (q < end && !stop[*q])
        q++;
    r->in_pos += (size_t)(q - p);
    return rec_append(r, p, (size_t)(q - p));
}

/* A line end outside quotes: CR, LF or CRLF (the LF is swallowed on the
   next read, which may come after a refill). */
static void line_end(csv_reader *r, int c)
{
    r->line++;
    r->skip_lf = c == '\r';
}

/* Runs the state machine until the record ends.  The record's first byte
   has not been consumed yet. */
static csv_status read_record(csv_reader *r)
{
    enum csv_state st = FIELD_START;
    uint64_t quote_line = 0;
    if (field_begin(r) != 0)
        goto nomem;
    for (;;) {
        int more = refill(r);
        if (more < 0)
            return fail(r, CSV_BAD, r->line, "read error: %s", strerror(errno));
        if (more > 0) {   /* end of file ends the record */
            if (st == QUOTED)
                return fail(r, CSV_BAD, quote_line,
                            "unterminated quoted field (the quote opened here is never "
                            "closed)");
            if (field_end(r) == 0)
                return CSV_RECORD;
            goto nomem;
        }
        if (st == UNQUOTED || st == QUOTED) {
            if (copy_run(r, st == QUOTED ? r->stop_quoted : r->stop_plain) != 0)
                goto nomem;
            if (r->in_pos == r->in_len)
                continue;
        }
        int c = r->in[r->in_pos++];
        switch (st) {
        case QUOTED:
            if (c == r->quote) {
                st = CLOSED;
                continue;
            }
            r->line++;   /* a LF inside quotes: part of the field */
            if (rec_append(r, "\n", 1) != 0)
                goto nomem;
            continue;
        case CLOSED:
            if (c == r->quote) {   /* "" inside quotes */
                st = QUOTED;
                char q = (char)r->quote;
                if (rec_append(r, &q, 1) != 0)
                    goto nomem;
                continue;
            }
            if (c != r->delim && c != '\r' && c != '\n') {
                char shown[16];
                if (c >= ' ' && c < 127)
                    snprintf(shown, sizeof shown, "'%c'", c);
                else
                    snprintf(shown, sizeof shown, "byte 0x%02x", c);
                return fail(r, CSV_BAD, r->line,
                            "unexpected %s after the closing quote of field %zu (a quote "
                            "inside a quoted field is written \"\")",
                            shown, r->nfields + 1);
            }
            break;
        case UNQUOTED:
            if (c == r->quote)
                return fail(r, CSV_BAD, r->line,
                            "stray quote in unquoted field %zu (quote the whole field and "
                            "double the quote)",
                            r->nfields + 1);
            break;
        case FIELD_START:
            if (c == r->quote) {
                st = QUOTED;
                quote_line = r->line;
                r->fields[r->nfields].quoted = true;
                continue;
            }
            if (c != r->delim && c != '\r' && c != '\n') {
                /* c opens a run that copy_run takes whole, itself included
                   (it is no stop byte of an unquoted field: not the
                   quote, the delimiter or a line end) */
                st = UNQUOTED;
                r->in_pos--;
                continue;
            }
            break;
        }
        /* c is a delimiter or a line end outside quotes */
        if (field_end(r) != 0)
            goto nomem;
        if (c != r->delim) {
            line_end(r, c);
            return CSV_RECORD;
        }
        st = FIELD_START;
        if (field_begin(r) != 0)
            goto nomem;
    }
nomem:
    if (r->failed != CSV_RECORD)
        return r->failed;   /* a field over the limit (rec_append) */
    return fail(r, CSV_NOMEM, r->line, "out of memory reading a record");
}

/* ---- records read in place -------------------------------------------- */

/* What scan_in_place found. */
enum { SCAN_NOMEM = -1, SCAN_SLOW = 0, SCAN_RECORD = 1, SCAN_CUT = 2 };

/* Closes up the doubled quotes of the quoted field at p (len bytes as
   written, its closing quote after them); its length without them. */
static size_t unescape(char *p, size_t len, char quote)
{
    size_t w = 0;
    for (size_t i = 0; i < len; i++) {
        p[w++] = p[i];
        i += p[i] == quote;   /* "" stands for one quote: skip the second */
    }
    return w;
}

/* Finds the fields of the record at the read position without changing
   anything: SCAN_RECORD with fields[0, nfields) set (offsets from in,
   lengths as written, doubled quotes counted twice) and *after the
   position past the record's line end; SCAN_CUT when the buffer ends
   inside the record; SCAN_SLOW for a record the state machine must read
   (malformed, or a field over the limit); SCAN_NOMEM. */
static int scan_in_place(csv_reader *r, size_t *after, uint64_t *lines, bool *escaped,
                         unsigned char *high)
{
    const unsigned char *in = r->in, *p = in + r->in_pos, *end = in + r->in_len;
    const unsigned char q = r->quote, d = r->delim;
    unsigned char acc = 0;
    *lines = 0;
    *escaped = false;
    for (r->nfields = 0;; r->nfields++) {
        if (reserve_field(r) != 0)
            return SCAN_NOMEM;
        const unsigned char *start = p;
        bool quoted = p < end && *p == q;
        if (quoted) {
            start = ++p;
            for (;;) {
                while (p < end && !r->stop_quoted[*p])
                    acc |= *p++;
                if (p == end)
                    return r->eof ? SCAN_SLOW : SCAN_CUT;   /* unterminated: its error */
                if (*p++ == '\n') {
                    ++*lines;
                    continue;
                }
                if (p < end && *p == q) {   /* "": a quote byte stays in the field */
                    p++;
                    acc |= q;
                    *escaped = true;
                    continue;
                }
                break;
            }
            if (p == end && !r->eof)
                return SCAN_CUT;   /* what follows the closing quote is not known */
            if (p < end && *p != d && *p != '\r' && *p != '\n')
                return SCAN_SLOW;
        } else {
            while (p < end && !r->stop_plain[*p])
                acc |= *p++;
            if (p < end && *p == q)
                return SCAN_SLOW;   /* a stray quote */
            if (p == end && !r->eof)
                return SCAN_CUT;
        }
        size_t len = (size_t)(p - start) - quoted;
        if (len > r->field_max)
            return SCAN_SLOW;
        r->fields[r->nfields] = (field_pos){(size_t)(start - in), len, quoted};
        if (p == end) {   /* the end of the file ends the record */
            r->nfields++;
            break;
        }
        unsigned char c = *p++;
        if (c != d) {
            r->nfields++;
            ++*lines;
            r->skip_lf = c == '\r';
            break;
        }
    }
    *after = (size_t)(p - in);
    *high = acc;
    return SCAN_RECORD;
}

/* Moves the unread bytes to the front of the buffer and reads more after
   them; -1 when nothing more could be read (the state machine then meets
   the end of the file or the read error itself). */
static int shift_and_read(csv_reader *r)
{
    if (r->eof || r->in_pos == 0)
        return -1;   /* at the end, or the record is longer than the buffer */
    size_t have = r->in_len - r->in_pos;
    memmove(r->in, r->in + r->in_pos, have);
    r->in_pos = 0;
    r->in_len = have;
    size_t got = fread(r->in + have, 1, r->in_cap - have, r->f);
    r->in_len += got;
    if (got == 0 && !ferror(r->f))
        r->eof = true;
    return got ? 0 : -1;
}

/* Reads the record at the read position in place (see the top): 1 when
   read, 0 when the state machine must read it (nothing is consumed then),
   -1 when out of memory. */
static int read_in_place(csv_reader *r)
{
#ifdef STRATA_TESTING
    if (!csv_in_place_for_tests)
        return 0;
#endif
    size_t after;
    uint64_t lines;
    bool escaped;
    unsigned char high;
    int got;
    while ((got = scan_in_place(r, &after, &lines, &escaped, &high)) == SCAN_CUT)
        if (shift_and_read(r) != 0)
            break;
    if (got != SCAN_RECORD) {
        r->nfields = 0;   /* skip_lf is set only with a record */
        return got == SCAN_NOMEM ? -1 : 0;
    }
    char *in = (char *)r->in;
    for (size_t i = 0; i < r->nfields; i++) {
        field_pos *f = &r->fields[i];
        if (escaped && f->quoted)
            f->len = unescape(in + f->off, f->len, (char)r->quote);
        in[f->off + f->len] = '\0';   /* over its delimiter, line end or quote */
    }
    r->in_pos = after;
    r->line += lines;
    r->base = in;
    r->ascii = high < 0x80;
    return 1;
}

csv_status csv_next(csv_reader *r)
{
    if (r->failed != CSV_RECORD)
        return r->failed;
    r->nfields = 0;
    r->rec_len = 0;
    if (!r->started) {
        r->started = true;
        if (skip_bom(r) != 0)
            return fail(r, CSV_BAD, 1, "read error: %s", strerror(errno));
    }
    /* skip blank lines (and the LF of a CRLF split from its CR) */
    for (;;) {
        int more = refill(r);
        if (more < 0)
            return fail(r, CSV_BAD, r->line, "read error: %s", strerror(errno));
        if (more > 0)
            return CSV_END;
        int c = r->in[r->in_pos];
        if (c == '\n' && r->skip_lf) {
            r->skip_lf = false;
            r->in_pos++;
            continue;
        }
        r->skip_lf = false;
        if (c != '\r' && c != '\n')
            break;
        r->in_pos++;
        line_end(r, c);
    }
    r->record_line = r->line;
    int in_place = read_in_place(r);
    if (in_place != 0)
        return in_place > 0 ? CSV_RECORD
                            : fail(r, CSV_NOMEM, r->line, "out of memory reading a record");
    csv_status s = read_record(r);
    r->base = r->rec;
    r->ascii = false;
    return s;
}

size_t csv_nfields(const csv_reader *r) { return r->nfields; }

csv_field csv_get(const csv_reader *r, size_t i)
{
    const field_pos *fp = &r->fields[i];
    return (csv_field){r->base + fp->off, fp->len, fp->quoted};
}

bool csv_record_utf8(const csv_reader *r, size_t *field, size_t *offset)
{
    if (r->ascii)
        return true;
    for (size_t i = 0; i < r->nfields; i++) {
        size_t bad;
        if (!utf8_check(r->base + r->fields[i].off, r->fields[i].len, &bad)) {
            *field = i;
            *offset = bad;
            return false;
        }
    }
    return true;
}

uint64_t csv_record_line(const csv_reader *r) { return r->record_line; }
const char *csv_error(const csv_reader *r) { return r->err; }
uint64_t csv_error_line(const csv_reader *r) { return r->err_line; }
const char *csv_name(const csv_reader *r) { return r->name; }
