/* output — rendering results.  Values are printed from the engine's own
   representation (core/graph_impl.h gives the value inside a strata_value
   handle); nodes and relationships are read through the result's view. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cypher_text.h"
#include "cli/output.h"
#include "cli/strbuf.h"
#include "cli/table.h"
#include "core/graph_impl.h"
#include "query/functions_temporal.h"

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

static void json_value(strbuf *b, strata_view *v, const value *val);

static void json_props(strbuf *b, strata_view *v, bool node, uint64_t id)
{
    strata_token keys[256];
    size_t n = 0;
    if (node)
        strata_node_keys(v, id, keys, 256, &n);
    else
        strata_rel_keys(v, id, keys, 256, &n);
    if (n > 256)
        n = 256;
    /* by key name */
    const char *names[256];
    for (size_t i = 0; i < n; i++)
        strata_token_name(v, STRATA_KEY, keys[i], &names[i]);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
            strata_token k = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = k;
        }
    strbuf_str(b, "{");
    for (size_t i = 0; i < n; i++) {
        strata_value h = {value_null()};
        if (node)
            strata_node_read(v, id, keys[i], &h);
        else
            strata_rel_read(v, id, keys[i], &h);
        if (i)
            strbuf_str(b, ", ");
        sb_json_string(b, names[i], strlen(names[i]));
        strbuf_str(b, ": ");
        json_value(b, v, &h.v);
        value_release(&h.v);
    }
    strbuf_str(b, "}");
}

static void json_node(strbuf *b, strata_view *v, uint64_t id)
{
    char num[32];
    snprintf(num, sizeof num, "%llu", (unsigned long long)id);
    strbuf_str(b, "{\"~node\": {\"id\": ");
    strbuf_str(b, num);
    strbuf_str(b, ", \"labels\": [");
    strata_token labels[64];
    size_t n = 0;
    strata_node_labels(v, id, labels, 64, &n);
    if (n > 64)
        n = 64;
    for (size_t i = 0; i < n; i++) {
        const char *name = "";
        strata_token_name(v, STRATA_LABEL, labels[i], &name);
        if (i)
            strbuf_str(b, ", ");
        sb_json_string(b, name, strlen(name));
    }
    strbuf_str(b, "], \"properties\": ");
    json_props(b, v, true, id);
    strbuf_str(b, "}}");
}

static void json_rel(strbuf *b, strata_view *v, uint64_t id)
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

/* Numbers and temporals, outside json_value's recursive frame: their
   buffers would otherwise sit in every level of a deeply nested value
   (1,000 levels, value.h, must print on a small stack). */
static __attribute__((noinline)) void json_scalar(strbuf *b, const value *val)
{
    char num[160];
    switch (value_kind(val)) {
    case VAL_INT:
        snprintf(num, sizeof num, "%lld", (long long)val->u.i);
        strbuf_str(b, num);
        break;
    case VAL_FLOAT:
        if (isnan(val->u.f))
            strbuf_str(b, "{\"~float\": \"NaN\"}");
        else if (isinf(val->u.f))
            strbuf_str(b, val->u.f > 0 ? "{\"~float\": \"Infinity\"}" : "{\"~float\": \"-Infinity\"}");
        else {
            float_text(num, sizeof num, val->u.f);
            strbuf_str(b, num);
        }
        break;
    case VAL_STRING: {
        size_t len;
        const char *s = value_str(val, &len);
        sb_json_string(b, s, len);
        break;
    }
    default: {   /* temporals */
        int n = temporal_format(val, num, sizeof num);
        strbuf_str(b, "{\"");
        strbuf_str(b, temporal_tag(val));
        strbuf_str(b, "\": ");
        sb_json_string(b, num, n < 0 ? 0 : (size_t)n);
        strbuf_str(b, "}");
        break;
    }
    }
}

static void json_value(strbuf *b, strata_view *v, const value *val)
{
    switch (value_kind(val)) {
    case VAL_NULL: strbuf_str(b, "null"); break;
    case VAL_BOOL: strbuf_str(b, val->u.b ? "true" : "false"); break;
    case VAL_LIST:
    case VAL_PATH: {
        strbuf_str(b, value_kind(val) == VAL_PATH ? "{\"~path\": [" : "[");
        for (size_t i = 0; i < value_list_len(val); i++) {
            if (i)
                strbuf_str(b, ", ");
            json_value(b, v, &value_list_items(val)[i]);
        }
        strbuf_str(b, value_kind(val) == VAL_PATH ? "]}" : "]");
        break;
    }
    case VAL_MAP:
        strbuf_str(b, "{");
        for (size_t i = 0; i < value_map_len(val); i++) {
            if (i)
                strbuf_str(b, ", ");
            json_scalar(b, &value_map_keys(val)[i]);
            strbuf_str(b, ": ");
            json_value(b, v, &value_map_vals(val)[i]);
        }
        strbuf_str(b, "}");
        break;
    case VAL_NODE: json_node(b, v, val->u.id); break;
    case VAL_REL: json_rel(b, v, val->u.id); break;
    default:
        json_scalar(b, val);
        break;
    }
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
static void text_cell(strbuf *b, strata_view *v, const value *val)
{
    char t[160];
    int n;
    if (value_kind(val) == VAL_STRING) {
        size_t len;
        const char *s = value_str(val, &len);
        strbuf_put(b, s, len);
    } else if ((n = temporal_format(val, t, sizeof t)) >= 0) {
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

/* csv: every cell rendered first, then written with RFC 4180 quoting. */
static bool print_csv(FILE *f, strata_result *r)
{
    const char *const *cols;
    size_t nc = strata_result_columns(r, &cols);
    strata_view *v = strata_result_view(r);
    const strata_value *const *row;
    size_t nrows = 0, cap = 0;
    char **cells = NULL;
    while (strata_result_next(r, &row)) {
        if ((nrows + 1) * (nc ? nc : 1) > cap) {
            cap = ((nrows + 1) * (nc ? nc : 1)) * 2;
            char **c2 = realloc(cells, cap * sizeof *c2);
            if (!c2)
                break;
            cells = c2;
        }
        for (size_t i = 0; i < nc; i++) {
            strbuf cb = {0};
            text_cell(&cb, v, &row[i]->v);
            cells[nrows * nc + i] = cb.p ? cb.p : strdup("");
        }
        nrows++;
    }
    bool ok = !strata_result_error(r);
    for (size_t i = 0; i < nc && ok; i++)
        fprintf(f, "%s%s", i ? "," : "", cols[i]);
    if (nc && ok)
        fprintf(f, "\n");
    for (size_t rr = 0; rr < nrows && ok; rr++) {
        for (size_t i = 0; i < nc; i++) {
            const char *c = cells[rr * nc + i];
            if (strpbrk(c, ",\"\n")) {
                fputs(i ? ",\"" : "\"", f);
                for (; *c; c++)
                    fputs(*c == '"' ? "\"\"" : (char[]){*c, 0}, f);
                fputs("\"", f);
            } else {
                fprintf(f, "%s%s", i ? "," : "", c);
            }
        }
        fprintf(f, "\n");
    }
    for (size_t i = 0; i < nrows * nc; i++)
        free(cells[i]);
    free(cells);
    return ok;
}

bool out_result(FILE *f, out_format fmt, strata_result *r, double t0)
{
    bool ok = true;
    const char *const *cols;
    size_t nc = strata_result_columns(r, &cols);
    strata_view *v = strata_result_view(r);
    strata_query_stats st;
    strata_result_stats(r, &st);
    strbuf b = {0};
    const strata_value *const *row;
    if (fmt == FMT_JSONL || fmt == FMT_JSON) {
        strbuf_str(&b, "{\"columns\": [");
        for (size_t i = 0; i < nc; i++) {
            if (i)
                strbuf_str(&b, ", ");
            sb_json_string(&b, cols[i], strlen(cols[i]));
        }
        strbuf_str(&b, "], \"rows\": [");
        bool first = true;
        while (strata_result_next(r, &row)) {
            strbuf_str(&b, first ? "[" : ", [");
            first = false;
            for (size_t i = 0; i < nc; i++) {
                if (i)
                    strbuf_str(&b, ", ");
                json_value(&b, v, &row[i]->v);
            }
            strbuf_str(&b, "]");
        }
        if (strata_result_error(r)) {
            strbuf_free(&b);
            return false;
        }
        double ms = out_now_ms() - t0;
        char tail[512];
        snprintf(tail, sizeof tail,
                 "], \"stats\": {\"nodes_created\": %llu, \"nodes_deleted\": %llu, "
                 "\"relationships_created\": %llu, \"relationships_deleted\": %llu, "
                 "\"properties_set\": %llu, \"labels_added\": %llu, \"labels_removed\": %llu}, "
                 "\"time_ms\": %.3f}",
                 (unsigned long long)st.nodes_created, (unsigned long long)st.nodes_deleted,
                 (unsigned long long)st.relationships_created,
                 (unsigned long long)st.relationships_deleted,
                 (unsigned long long)st.properties_set, (unsigned long long)st.labels_added,
                 (unsigned long long)st.labels_removed, ms);
        strbuf_str(&b, tail);
        if (b.failed) {
            /* Never a truncated line: a reader of the contract gets an error. */
            strata_query_error oom = { "OutOfMemory", NULL, "out of memory rendering the result",
                                       1, 1 };
            out_error(f, fmt, &oom);
        } else {
            fprintf(f, "%s\n", b.p);
        }
    } else if (fmt == FMT_TABLE) {
        table_opts o = { .width = 0, .max_rows = 0, .timing = true };
        ok = table_print(f, r, t0, &o);
    } else {
        ok = print_csv(f, r);
    }
    strbuf_free(&b);
    fflush(f);
    return ok;
}

void out_error(FILE *f, out_format fmt, const strata_query_error *e)
{
    if (fmt == FMT_JSONL || fmt == FMT_JSON) {
        strbuf b = {0};
        strbuf_str(&b, "{\"error\": {\"code\": ");
        sb_json_string(&b, e->code, strlen(e->code));
        strbuf_str(&b, ", \"detail\": ");
        if (e->detail)
            sb_json_string(&b, e->detail, strlen(e->detail));
        else
            strbuf_str(&b, "null");
        strbuf_str(&b, ", \"message\": ");
        sb_json_string(&b, e->message, strlen(e->message));
        char tail[64];
        snprintf(tail, sizeof tail, ", \"line\": %u, \"column\": %u}}", e->line, e->column);
        strbuf_str(&b, tail);
        fprintf(f, "%s\n", b.p ? b.p : "");
        strbuf_free(&b);
    } else {
        fprintf(f, "%s%s%s: %s (line %u, column %u)\n", e->code, e->detail ? "." : "",
                e->detail ? e->detail : "", e->message, e->line, e->column);
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
    fprintf(f, "%.*s\n", (int)len, p);
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
