/* cypher_text — Cypher-like text of values for tables, read through the
   public value API (strata.h), as the JSON output is. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cypher_text.h"

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

static void text_of(strbuf *b, strata_view *v, const strata_value *val, bool top);

static int cmp_key_name(const void *a, const void *b)
{
    return strcmp(((const entity_key *)a)->name, ((const entity_key *)b)->name);
}

/* The tokens a read fills (strata_node_keys and the like take buf, cap
   and give the full count): into tb's inline room when they fit, so the
   common entity costs one call and no allocation; else once more into an
   array of the right size. */
typedef strata_status (*token_read)(strata_view *v, strata_id id, strata_token *buf, size_t cap,
                                    size_t *n);

static void tokens_read(strata_view *v, strata_id id, token_read read, token_buf *tb)
{
    tb->t = tb->inl;
    tb->n = 0;
    size_t count = 0;
    if (read(v, id, tb->inl, TOKEN_INLINE, &count) != STRATA_OK)
        return;
    if (count > TOKEN_INLINE) {
        strata_token *t = malloc(count * sizeof *t);
        if (!t || read(v, id, t, count, &count) != STRATA_OK) {
            free(t);
            return;
        }
        tb->t = t;
    }
    tb->n = count;
}

void token_buf_free(token_buf *tb)
{
    if (tb->t != tb->inl)
        free(tb->t);
    tb->t = tb->inl;
    tb->n = 0;
}

void node_label_tokens(strata_view *v, strata_id id, token_buf *out)
{
    tokens_read(v, id, strata_node_labels, out);
}

void entity_keys(strata_view *v, bool node, strata_id id, entity_keys_buf *out)
{
    token_buf toks;
    tokens_read(v, id, node ? strata_node_keys : strata_rel_keys, &toks);
    out->k = out->inl;
    out->n = 0;
    if (toks.n > TOKEN_INLINE && !(out->k = malloc(toks.n * sizeof *out->k))) {
        out->k = out->inl;
        token_buf_free(&toks);
        return;
    }
    for (size_t i = 0; i < toks.n; i++) {
        out->k[i].token = toks.t[i];
        if (strata_token_name(v, STRATA_KEY, toks.t[i], &out->k[i].name) != STRATA_OK)
            out->k[i].name = "?";
    }
    qsort(out->k, toks.n, sizeof *out->k, cmp_key_name);
    out->n = toks.n;
    token_buf_free(&toks);
}

void entity_keys_free(entity_keys_buf *kb)
{
    if (kb->k != kb->inl)
        free(kb->k);
    kb->k = kb->inl;
    kb->n = 0;
}

/* " {k: v, ...}" of an entity's properties, by key name; nothing when it
   has none. */
static void props_text(strbuf *b, strata_view *v, bool node, strata_id id)
{
    entity_keys_buf keys;
    entity_keys(v, node, id, &keys);
    size_t n = keys.n;
    strata_value *h = n ? strata_value_null() : NULL;
    for (size_t i = 0; i < n && h; i++) {
        if (node)
            strata_node_read(v, id, keys.k[i].token, h);
        else
            strata_rel_read(v, id, keys.k[i].token, h);
        strbuf_str(b, i ? ", " : " {");
        name_text(b, keys.k[i].name);
        strbuf_str(b, ": ");
        text_of(b, v, h, false);
    }
    if (n)
        strbuf_str(b, h ? "}" : " {...}");
    strata_value_free(&h);
    entity_keys_free(&keys);
}

static void node_text(strbuf *b, strata_view *v, strata_id id)
{
    token_buf labels;
    node_label_tokens(v, id, &labels);
    strbuf_str(b, "(");
    for (size_t i = 0; i < labels.n; i++) {
        const char *name = "?";
        strata_token_name(v, STRATA_LABEL, labels.t[i], &name);
        strbuf_str(b, ":");
        name_text(b, name);
    }
    token_buf_free(&labels);
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
static void path_text(strbuf *b, strata_view *v, const strata_value *path)
{
    size_t len = strata_value_path_len(path);
    strata_id node = 0, rel = 0, start = 0;
    strata_value_path_node(path, 0, &node);
    node_text(b, v, node);
    for (size_t i = 0; i < len; i++) {
        strata_value_path_rel(path, i, &rel);
        strata_rel_info(v, rel, &start, NULL, NULL);
        bool forward = start == node;
        strbuf_str(b, forward ? "-" : "<-");
        rel_text(b, v, rel);
        strbuf_str(b, forward ? "->" : "-");
        strata_value_path_node(path, i + 1, &node);
        node_text(b, v, node);
    }
}

/* Numbers and temporals, outside text_of's recursive frame: their
   buffers would otherwise sit in every level of a deeply nested value. */
static __attribute__((noinline)) void scalar_text(strbuf *b, const strata_value *val)
{
    char num[160];
    int64_t i;
    double f;
    if (strata_value_get_int(val, &i) == STRATA_OK) {
        snprintf(num, sizeof num, "%lld", (long long)i);
        strbuf_str(b, num);
    } else if (strata_value_get_float(val, &f) == STRATA_OK) {
        if (isnan(f))
            strbuf_str(b, "NaN");
        else if (isinf(f))
            strbuf_str(b, f > 0 ? "Infinity" : "-Infinity");
        else {
            float_text(num, sizeof num, f);
            strbuf_str(b, num);
        }
    } else {
        int n = strata_value_temporal_text(val, num, sizeof num);
        strbuf_put(b, num, n < 0 ? 0 : (size_t)n);
    }
}

static void text_of(strbuf *b, strata_view *v, const strata_value *val, bool top)
{
    size_t len;
    const char *s;
    bool flag;
    strata_id id = 0;
    switch (strata_value_type(val)) {
    case STRATA_NULL: strbuf_str(b, "null"); break;
    case STRATA_BOOL:
        strata_value_get_bool(val, &flag);
        strbuf_str(b, flag ? "true" : "false");
        break;
    case STRATA_STRING:
        strata_value_get_string(val, &s, &len);
        if (top)
            strbuf_put(b, s, len);
        else
            quoted(b, s, len);
        break;
    case STRATA_LIST:
        strbuf_str(b, "[");
        for (size_t i = 0; i < strata_value_list_len(val); i++) {
            if (i)
                strbuf_str(b, ", ");
            text_of(b, v, strata_value_list_at(val, i), false);
        }
        strbuf_str(b, "]");
        break;
    case STRATA_PATH: path_text(b, v, val); break;
    case STRATA_MAP:
        strbuf_str(b, "{");
        for (size_t i = 0; i < strata_value_map_len(val); i++) {
            const char *key = "";
            const strata_value *item = strata_value_map_at(val, i, &key);
            if (i)
                strbuf_str(b, ", ");
            name_text(b, key);
            strbuf_str(b, ": ");
            text_of(b, v, item, false);
        }
        strbuf_str(b, "}");
        break;
    case STRATA_NODE:
        strata_value_get_id(val, &id);
        node_text(b, v, id);
        break;
    case STRATA_RELATIONSHIP:
        strata_value_get_id(val, &id);
        rel_text(b, v, id);
        break;
    default:
        scalar_text(b, val);
        break;
    }
}

void cypher_text(strbuf *b, strata_view *view, const strata_value *v)
{
    text_of(b, view, v, true);
}

void cypher_literal(strbuf *b, strata_view *view, const strata_value *v)
{
    text_of(b, view, v, false);
}
