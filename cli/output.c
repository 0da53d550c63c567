/* output — rendering results.  Values are read through the public value
   API (strata.h: borrowed list and map items, no copies); nodes and
   relationships through the result's view. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cypher_text.h"
#include "cli/output.h"
#include "cli/printable.h"
#include "cli/strbuf.h"
#include "cli/table.h"

static void sb_json_string(strbuf *b, const char *s, size_t len)
{
    strbuf_put(b, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        switch (c) {
        case '"': strbuf_put(b, "\\\"", 2); break;
        case '\\': strbuf_put(b, "\\\\", 2); break;
        case '\n': strbuf_put(b, "\\n", 2); break;
        case '\r': strbuf_put(b, "\\r", 2); break;
        case '\t': strbuf_put(b, "\\t", 2); break;
        default:
            if (c < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                strbuf_put(b, esc, 6);
            } else {
                strbuf_put(b, (const char *)&c, 1);
            }
        }
    }
    strbuf_put(b, "\"", 1);
}

static void json_value(strbuf *b, strata_view *v, const strata_value *val);

static void json_props(strbuf *b, strata_view *v, bool node, strata_id id)
{
    entity_keys_buf keys;
    entity_keys(v, node, id, &keys);
    size_t n = keys.n;
    strata_value *h = n ? strata_value_null() : NULL;
    if (n && !h)
        b->failed = true;
    strbuf_str(b, "{");
    for (size_t i = 0; i < n && h; i++) {
        if (node)
            strata_node_read(v, id, keys.k[i].token, h);
        else
            strata_rel_read(v, id, keys.k[i].token, h);
        if (i)
            strbuf_str(b, ", ");
        sb_json_string(b, keys.k[i].name, strlen(keys.k[i].name));
        strbuf_str(b, ": ");
        json_value(b, v, h);
    }
    strbuf_str(b, "}");
    strata_value_free(&h);
    entity_keys_free(&keys);
}

static void json_node(strbuf *b, strata_view *v, strata_id id)
{
    char num[32];
    snprintf(num, sizeof num, "%llu", (unsigned long long)id);
    strbuf_str(b, "{\"~node\": {\"id\": ");
    strbuf_str(b, num);
    strbuf_str(b, ", \"labels\": [");
    token_buf labels;
    node_label_tokens(v, id, &labels);
    for (size_t i = 0; i < labels.n; i++) {
        const char *name = "";
        strata_token_name(v, STRATA_LABEL, labels.t[i], &name);
        if (i)
            strbuf_str(b, ", ");
        sb_json_string(b, name, strlen(name));
    }
    token_buf_free(&labels);
    strbuf_str(b, "], \"properties\": ");
    json_props(b, v, true, id);
    strbuf_str(b, "}}");
}

static void json_rel(strbuf *b, strata_view *v, strata_id id)
{
    strata_id s = 0, e = 0;
    strata_token t = 0;
    const char *type = "";
    strata_rel_info(v, id, &s, &e, &t);
    strata_token_name(v, STRATA_RELTYPE, t, &type);
    char num[96];
    snprintf(num, sizeof num, "{\"~relationship\": {\"id\": %llu, \"type\": ",
             (unsigned long long)id);
    strbuf_str(b, num);
    sb_json_string(b, type, strlen(type));
    snprintf(num, sizeof num, ", \"start\": %llu, \"end\": %llu, \"properties\": ",
             (unsigned long long)s, (unsigned long long)e);
    strbuf_str(b, num);
    json_props(b, v, false, id);
    strbuf_str(b, "}}");
}

static const char *temporal_tag(strata_type t)
{
    switch (t) {
    case STRATA_DATE: return "~date";
    case STRATA_LOCALTIME: return "~localtime";
    case STRATA_TIME: return "~time";
    case STRATA_LOCALDATETIME: return "~localdatetime";
    case STRATA_DATETIME: return "~datetime";
    default: return "~duration";
    }
}

/* Numbers, strings and temporals, outside json_value's recursive frame:
   their buffers would otherwise sit in every level of a deeply nested
   value (1,000 levels, strata.h, must print on a small stack). */
static __attribute__((noinline)) void json_scalar(strbuf *b, const strata_value *val)
{
    char num[160];
    int64_t i;
    double f;
    size_t len;
    const char *s;
    strata_type t = strata_value_type(val);
    if (strata_value_get_int(val, &i) == STRATA_OK) {
        snprintf(num, sizeof num, "%lld", (long long)i);
        strbuf_str(b, num);
    } else if (strata_value_get_float(val, &f) == STRATA_OK) {
        if (isnan(f))
            strbuf_str(b, "{\"~float\": \"NaN\"}");
        else if (isinf(f))
            strbuf_str(b, f > 0 ? "{\"~float\": \"Infinity\"}" : "{\"~float\": \"-Infinity\"}");
        else {
            float_text(num, sizeof num, f);
            strbuf_str(b, num);
        }
    } else if (strata_value_get_string(val, &s, &len) == STRATA_OK) {
        sb_json_string(b, s, len);
    } else {   /* temporals */
        int n = strata_value_temporal_text(val, num, sizeof num);
        strbuf_str(b, "{\"");
        strbuf_str(b, temporal_tag(t));
        strbuf_str(b, "\": ");
        sb_json_string(b, num, n < 0 ? 0 : (size_t)n);
        strbuf_str(b, "}");
    }
}

/* {"~path": [node, rel, node, ...]} */
static void json_path(strbuf *b, strata_view *v, const strata_value *path)
{
    size_t len = strata_value_path_len(path);
    strata_id id = 0;
    strbuf_str(b, "{\"~path\": [");
    for (size_t i = 0; i <= len; i++) {
        strata_value_path_node(path, i, &id);
        if (i)
            strbuf_str(b, ", ");
        json_node(b, v, id);
        if (i == len)
            break;
        strata_value_path_rel(path, i, &id);
        strbuf_str(b, ", ");
        json_rel(b, v, id);
    }
    strbuf_str(b, "]}");
}

static void json_value(strbuf *b, strata_view *v, const strata_value *val)
{
    bool flag;
    strata_id id = 0;
    switch (strata_value_type(val)) {
    case STRATA_NULL: strbuf_str(b, "null"); break;
    case STRATA_BOOL:
        strata_value_get_bool(val, &flag);
        strbuf_str(b, flag ? "true" : "false");
        break;
    case STRATA_LIST:
        strbuf_str(b, "[");
        for (size_t i = 0; i < strata_value_list_len(val); i++) {
            if (i)
                strbuf_str(b, ", ");
            json_value(b, v, strata_value_list_at(val, i));
        }
        strbuf_str(b, "]");
        break;
    case STRATA_PATH: json_path(b, v, val); break;
    case STRATA_MAP:
        strbuf_str(b, "{");
        for (size_t i = 0; i < strata_value_map_len(val); i++) {
            const char *key = "";
            const strata_value *item = strata_value_map_at(val, i, &key);
            if (i)
                strbuf_str(b, ", ");
            sb_json_string(b, key, strlen(key));
            strbuf_str(b, ": ");
            json_value(b, v, item);
        }
        strbuf_str(b, "}");
        break;
    case STRATA_NODE:
        strata_value_get_id(val, &id);
        json_node(b, v, id);
        break;
    case STRATA_RELATIONSHIP:
        strata_value_get_id(val, &id);
        json_rel(b, v, id);
        break;
    default:
        json_scalar(b, val);
        break;
    }
}

void out_json_string(strbuf *b, const char *s, size_t len) { sb_json_string(b, s, len); }

void out_json_value(strbuf *b, strata_view *v, const strata_value *val)
{
    json_value(b, v, val);
}

bool out_is_json(out_format fmt) { return fmt == FMT_JSONL || fmt == FMT_JSON; }

void out_json_line(FILE *f, out_format fmt, strbuf *b)
{
    if (b->failed || !b->p) {
        strata_query_error oom = { "OutOfMemory", NULL, "out of memory rendering the output",
                                   1, 1 };
        out_error(f, fmt, &oom);
    } else {
        fprintf(f, "%s\n", b->p);
    }
    strbuf_free(b);
    fflush(f);
}

int out_format_parse(const char *name, out_format *out)
{
    static const char *names[] = {"jsonl", "json", "csv", "table"};
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (out_format)i;
            return 0;
        }
    return -1;
}

/* A plain-text cell for csv output: strings bare, the rest as JSON. */
static void text_cell(strbuf *b, strata_view *v, const strata_value *val)
{
    char t[160];
    int n;
    size_t len;
    const char *s;
    if (strata_value_get_string(val, &s, &len) == STRATA_OK) {
        strbuf_put(b, s, len);
    } else if ((n = strata_value_temporal_text(val, t, sizeof t)) >= 0) {
        strbuf_put(b, t, (size_t)n);
    } else {
        json_value(b, v, val);
    }
}

double out_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- streaming ---------------------------------------------------------------
 * A result is printed as strata_result_next yields its rows, through a
 * buffer written out each time it passes STREAM_CHUNK, so memory stays
 * flat however many rows there are.  A result whose text fits in one
 * chunk is written whole or, if reading it fails, not at all: the caller
 * prints the error alone, as the jsonl contract has it.  A failure after
 * a chunk went out cannot take it back; jsonl then closes the line as
 * {"columns": [...], "rows": [rows so far], "error": {...}} (docs/QUERY.md).
 * Chunks end at row boundaries, so the text written is always whole rows. */

/* 64 KiB: big enough that a write is rare per row, small enough that the
   buffer is nothing next to the rows it replaces. */
#define STREAM_CHUNK (64 * 1024)

typedef struct stream {
    FILE *f;
    strbuf b;
    bool started;   /* a chunk has been written */
} stream;

static void stream_write(stream *o)
{
    if (o->b.n)
        fwrite(o->b.p, 1, o->b.n, o->f);
    o->b.n = 0;
    o->started = true;
}

static void json_error(strbuf *b, const strata_query_error *e)
{
    strbuf_str(b, "{\"code\": ");
    sb_json_string(b, e->code, strlen(e->code));
    strbuf_str(b, ", \"detail\": ");
    if (e->detail)
        sb_json_string(b, e->detail, strlen(e->detail));
    else
        strbuf_str(b, "null");
    strbuf_str(b, ", \"message\": ");
    sb_json_string(b, e->message, strlen(e->message));
    char tail[64];
    snprintf(tail, sizeof tail, ", \"line\": %u, \"column\": %u}", e->line, e->column);
    strbuf_str(b, tail);
}

static const strata_query_error render_oom = { "OutOfMemory", NULL,
                                               "out of memory rendering the result", 1, 1 };

/* The failure e after part of the line went out: the rows array closes and
   the error follows in the same object. */
static void json_close_with_error(stream *o, const strata_query_error *e)
{
    strbuf_free(&o->b);
    strbuf_str(&o->b, "], \"error\": ");
    json_error(&o->b, e);
    strbuf_str(&o->b, "}\n");
    if (o->b.failed)
        fputs("], \"error\": {\"code\": \"OutOfMemory\", \"detail\": null, \"message\": "
              "\"out of memory\", \"line\": 1, \"column\": 1}}\n", o->f);
    else
        stream_write(o);
}

static void json_stats_tail(strbuf *b, strata_result *r, double t0)
{
    strata_query_stats st;
    strata_result_stats(r, &st);
    char tail[512];
    snprintf(tail, sizeof tail,
             "], \"stats\": {\"nodes_created\": %llu, \"nodes_deleted\": %llu, "
             "\"relationships_created\": %llu, \"relationships_deleted\": %llu, "
             "\"properties_set\": %llu, \"labels_added\": %llu, \"labels_removed\": %llu}, "
             "\"time_ms\": %.3f}\n",
             (unsigned long long)st.nodes_created, (unsigned long long)st.nodes_deleted,
             (unsigned long long)st.relationships_created,
             (unsigned long long)st.relationships_deleted,
             (unsigned long long)st.properties_set, (unsigned long long)st.labels_added,
             (unsigned long long)st.labels_removed, out_now_ms() - t0);
    strbuf_str(b, tail);
}

static out_status print_json(FILE *f, out_format fmt, strata_result *r, double t0)
{
    const char *const *cols;
    size_t nc = strata_result_columns(r, &cols);
    strata_view *v = strata_result_view(r);
    stream o = { .f = f };
    strbuf_str(&o.b, "{\"columns\": [");
    for (size_t i = 0; i < nc; i++) {
        if (i)
            strbuf_str(&o.b, ", ");
        sb_json_string(&o.b, cols[i], strlen(cols[i]));
    }
    strbuf_str(&o.b, "], \"rows\": [");
    const strata_value *const *row;
    bool first = true;
    while (!o.b.failed && strata_result_next(r, &row)) {
        strbuf_str(&o.b, first ? "[" : ", [");
        first = false;
        for (size_t i = 0; i < nc; i++) {
            if (i)
                strbuf_str(&o.b, ", ");
            json_value(&o.b, v, row[i]);
        }
        strbuf_str(&o.b, "]");
        if (!o.b.failed && o.b.n >= STREAM_CHUNK)
            stream_write(&o);
    }
    if (!o.b.failed && !strata_result_error(r))
        json_stats_tail(&o.b, r, t0);
    const strata_query_error *e = o.b.failed ? &render_oom : strata_result_error(r);
    if (!e) {
        stream_write(&o);
    } else if (o.started) {
        json_close_with_error(&o, e);
    } else if (e == &render_oom) {
        out_error(f, fmt, e);   /* never a cut line */
    }
    strbuf_free(&o.b);
    return !e ? OUT_PRINTED : o.started || e == &render_oom ? OUT_REPORTED : OUT_FAILED;
}

/* One csv field (RFC 4180): quoted when it holds a comma, a quote, a line
   break or any other control character, with quotes doubled.  Every byte
   is written, U+0000 included: csv has no escapes, and inside quotes a
   field holds any byte. */
static void csv_field(strbuf *b, const char *s, size_t len)
{
    bool quote = false;
    for (size_t i = 0; i < len && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f;
    if (!quote) {
        strbuf_put(b, s, len);
        return;
    }
    strbuf_put(b, "\"", 1);
    size_t start = 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '"') {
            strbuf_put(b, s + start, i + 1 - start);
            strbuf_put(b, "\"", 1);
            start = i + 1;
        }
    strbuf_put(b, s + start, len - start);
    strbuf_put(b, "\"", 1);
}

/* csv: a header of the column names, then a line per row.  A failure
   part way leaves the rows written so far; the caller prints the error
   after them. */
static out_status print_csv(FILE *f, out_format fmt, strata_result *r)
{
    const char *const *cols;
    size_t nc = strata_result_columns(r, &cols);
    strata_view *v = strata_result_view(r);
    stream o = { .f = f };
    for (size_t i = 0; i < nc; i++) {
        if (i)
            strbuf_put(&o.b, ",", 1);
        csv_field(&o.b, cols[i], strlen(cols[i]));
    }
    if (nc)
        strbuf_put(&o.b, "\n", 1);
    const strata_value *const *row;
    strbuf cell = { 0 };
    while (!o.b.failed && !cell.failed && strata_result_next(r, &row)) {
        for (size_t i = 0; i < nc; i++) {
            cell.n = 0;
            text_cell(&cell, v, row[i]);
            if (i)
                strbuf_put(&o.b, ",", 1);
            csv_field(&o.b, cell.p ? cell.p : "", cell.n);
        }
        strbuf_put(&o.b, "\n", 1);
        if (!o.b.failed && !cell.failed && o.b.n >= STREAM_CHUNK)
            stream_write(&o);
    }
    bool oom = o.b.failed || cell.failed;
    strbuf_free(&cell);
    if (!oom && !strata_result_error(r))
        stream_write(&o);
    strbuf_free(&o.b);
    if (oom) {
        out_error(f, fmt, &render_oom);
        return OUT_REPORTED;
    }
    return strata_result_error(r) ? OUT_FAILED : OUT_PRINTED;
}

out_status out_result(FILE *f, out_format fmt, strata_result *r, double t0)
{
    out_status st;
    if (fmt == FMT_JSONL || fmt == FMT_JSON) {
        st = print_json(f, fmt, r, t0);
    } else if (fmt == FMT_TABLE) {
        table_opts o = { .width = 0, .max_rows = 0, .timing = true };
        st = table_print(f, r, t0, &o);
    } else {
        st = print_csv(f, fmt, r);
    }
    fflush(f);
    return st;
}

void out_error(FILE *f, out_format fmt, const strata_query_error *e)
{
    if (fmt == FMT_JSONL || fmt == FMT_JSON) {
        strbuf b = {0};
        strbuf_str(&b, "{\"error\": ");
        json_error(&b, e);
        strbuf_str(&b, "}");
        if (b.failed)
            fputs("{\"error\": {\"code\": \"OutOfMemory\", \"detail\": null, \"message\": "
                  "\"out of memory\", \"line\": 1, \"column\": 1}}\n", f);
        else
            fprintf(f, "%s\n", b.p);
        strbuf_free(&b);
    } else {
        /* for a person on a terminal: the message quotes data (a string
           that failed to parse as a date), which may hold escapes */
        fprintf(f, "%s%s%s: ", e->code, e->detail ? "." : "", e->detail ? e->detail : "");
        printable_write(f, e->message, strlen(e->message), false);
        fprintf(f, " (line %u, column %u)\n", e->line, e->column);
    }
    fflush(f);
}

/* Line `line` (1-based) of text, its length in *len; NULL past the end. */
static const char *nth_line(const char *text, uint32_t line, size_t *len)
{
    for (uint32_t i = 1; i < line && text; i++) {
        text = strchr(text, '\n');
        if (text)
            text++;
    }
    if (!text || !*text)
        return NULL;
    *len = strcspn(text, "\r\n");
    return text;
}

/* The line, then a caret under byte column `column`: tabs stay tabs so the
   caret lines up, a multi-byte character takes one column. */
static void print_caret(FILE *f, const char *text, uint32_t line, uint32_t column)
{
    size_t len;
    const char *p = nth_line(text, line, &len);
    if (!p || column == 0)
        return;
    printable_write(f, p, len, true);
    fputc('\n', f);
    size_t before = column - 1 < len ? column - 1 : len;
    for (size_t i = 0; i < before; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\t')
            fputc('\t', f);
        else if ((c & 0xC0) != 0x80)
            fputc(' ', f);
    }
    fputs("^\n", f);
}

void out_error_in(FILE *f, out_format fmt, const strata_query_error *e, const char *text)
{
    if (fmt != FMT_JSONL && fmt != FMT_JSON && text)
        print_caret(f, text, e->line, e->column);
    out_error(f, fmt, e);
}
