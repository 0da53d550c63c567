/* cypher_text — Cypher-like text of values for tables.  Values are read
   from the engine's own representation (core/graph_impl.h), as the JSON
   output does. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cypher_text.h"
#include "core/graph_impl.h"
#include "query/functions_temporal.h"

void float_text(char *buf, size_t cap, double f)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, f);
        if (strtod(buf, NULL) == f)
            break;
    }
    if (!strpbrk(buf, ".en"))   /* "n": nan and inf print as they are */
        strncat(buf, ".0", cap - strlen(buf) - 1);
}

/* A string literal as Cypher reads it back: control characters (U+0000
   among them) as escapes, so the text stays on one line and whole. */
static void quoted(strbuf *b, const char *s, size_t len)
{
    strbuf_put(b, "'", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '\'' || c == '\\') {
            strbuf_put(b, "\\", 1);
            strbuf_put(b, s + i, 1);
        } else if (c == '\n') {
            strbuf_str(b, "\\n");
        } else if (c == '\t') {
            strbuf_str(b, "\\t");
        } else if (c == '\r') {
            strbuf_str(b, "\\r");
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            strbuf_str(b, esc);
        } else {
            strbuf_put(b, s + i, 1);
        }
    }
    strbuf_put(b, "'", 1);
}

/* A name bare when it is an identifier, else in backquotes. */
static void name_text(strbuf *b, const char *s)
{
    bool plain = *s && !isdigit((unsigned char)*s);
    for (const char *p = s; *p && plain; p++)
        plain = isalnum((unsigned char)*p) || *p == '_' || (unsigned char)*p >= 0x80;
    if (plain) {
        strbuf_str(b, s);
        return;
    }
    strbuf_str(b, "`");
    for (const char *p = s; *p; p++)
        strbuf_str(b, *p == '`' ? "``" : (char[]){ *p, 0 });
    strbuf_str(b, "`");
}

static void text_of(strbuf *b, strata_view *v, const value *val, bool top);

/* " {k: v, ...}" of an entity's properties, by key name; nothing when it
   has none. */
static void props_text(strbuf *b, strata_view *v, bool node, strata_id id)
{
    strata_token keys[256];
    const char *names[256];
    size_t n = 0;
    if (node)
        strata_node_keys(v, id, keys, 256, &n);
    else
        strata_rel_keys(v, id, keys, 256, &n);
    if (n > 256)
        n = 256;
    for (size_t i = 0; i < n; i++)
        if (strata_token_name(v, STRATA_KEY, keys[i], &names[i]) != STRATA_OK)
            names[i] = "?";
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
            strata_token k = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = k;
        }
    for (size_t i = 0; i < n; i++) {
        strata_value h = { value_null() };
        if (node)
            strata_node_read(v, id, keys[i], &h);
        else
            strata_rel_read(v, id, keys[i], &h);
        strbuf_str(b, i ? ", " : " {");
        name_text(b, names[i]);
        strbuf_str(b, ": ");
        text_of(b, v, &h.v, false);
        value_release(&h.v);
    }
    if (n)
        strbuf_str(b, "}");
}

static void node_text(strbuf *b, strata_view *v, strata_id id)
{
    strata_token labels[64];
    size_t n = 0;
    strata_node_labels(v, id, labels, 64, &n);
    strbuf_str(b, "(");
    for (size_t i = 0; i < n && i < 64; i++) {
        const char *name = "?";
        strata_token_name(v, STRATA_LABEL, labels[i], &name);
        strbuf_str(b, ":");
        name_text(b, name);
    }
    props_text(b, v, true, id);
    strbuf_str(b, ")");
}

static void rel_text(strbuf *b, strata_view *v, strata_id id)
{
    strata_token t = 0;
    const char *type = "?";
    strata_rel_info(v, id, NULL, NULL, &t);
    strata_token_name(v, STRATA_RELTYPE, t, &type);
    strbuf_str(b, "[:");
    name_text(b, type);
    props_text(b, v, false, id);
    strbuf_str(b, "]");
}

/* node, rel, node, ...: each relationship drawn in its direction. */
static void path_text(strbuf *b, strata_view *v, const value *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (value_kind(&items[i]) == VAL_NODE) {
            node_text(b, v, items[i].u.id);
            continue;
        }
        strata_id start = 0;
        strata_rel_info(v, items[i].u.id, &start, NULL, NULL);
        bool forward = i == 0 || value_kind(&items[i - 1]) != VAL_NODE ||
                       items[i - 1].u.id == start;
        strbuf_str(b, forward ? "-" : "<-");
        rel_text(b, v, items[i].u.id);
        strbuf_str(b, forward ? "->" : "-");
    }
}

/* Numbers and temporals, outside text_of's recursive frame: their
   buffers would otherwise sit in every level of a deeply nested value. */
static __attribute__((noinline)) void scalar_text(strbuf *b, const value *val)
{
    char num[160];
    switch (value_kind(val)) {
    case VAL_INT:
        snprintf(num, sizeof num, "%lld", (long long)val->u.i);
        strbuf_str(b, num);
        break;
    case VAL_FLOAT:
        if (isnan(val->u.f))
            strbuf_str(b, "NaN");
        else if (isinf(val->u.f))
            strbuf_str(b, val->u.f > 0 ? "Infinity" : "-Infinity");
        else {
            float_text(num, sizeof num, val->u.f);
            strbuf_str(b, num);
        }
        break;
    default: {
        int n = temporal_format(val, num, sizeof num);
        strbuf_put(b, num, n < 0 ? 0 : (size_t)n);
        break;
    }
    }
}

static void text_of(strbuf *b, strata_view *v, const value *val, bool top)
{
    size_t len;
    const char *s;
    switch (value_kind(val)) {
    case VAL_NULL: strbuf_str(b, "null"); break;
    case VAL_BOOL: strbuf_str(b, val->u.b ? "true" : "false"); break;
    case VAL_STRING:
        s = value_str(val, &len);
        if (top)
            strbuf_put(b, s, len);
        else
            quoted(b, s, len);
        break;
    case VAL_LIST:
        strbuf_str(b, "[");
        for (size_t i = 0; i < value_list_len(val); i++) {
            if (i)
                strbuf_str(b, ", ");
            text_of(b, v, &value_list_items(val)[i], false);
        }
        strbuf_str(b, "]");
        break;
    case VAL_PATH: path_text(b, v, value_list_items(val), value_list_len(val)); break;
    case VAL_MAP:
        strbuf_str(b, "{");
        for (size_t i = 0; i < value_map_len(val); i++) {
            if (i)
                strbuf_str(b, ", ");
            name_text(b, value_str(&value_map_keys(val)[i], NULL));
            strbuf_str(b, ": ");
            text_of(b, v, &value_map_vals(val)[i], false);
        }
        strbuf_str(b, "}");
        break;
    case VAL_NODE: node_text(b, v, val->u.id); break;
    case VAL_REL: rel_text(b, v, val->u.id); break;
    default:
        scalar_text(b, val);
        break;
    }
}

void cypher_text(strbuf *b, strata_view *view, const strata_value *v)
{
    text_of(b, view, &v->v, true);
}

void cypher_literal(strbuf *b, strata_view *view, const strata_value *v)
{
    text_of(b, view, &v->v, false);
}
