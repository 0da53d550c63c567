/* export — dot and GraphML writers over a set of node and relationship ids
 * read through one view.
 *
 * dot: one statement per entity; a node's label is its labels and its
 * properties one per line, a relationship's its type and properties.
 * GraphML: every property key is declared as a <key> before the graph, with
 * a type Gephi understands (long, double, boolean, else string), so a first
 * pass over the entities finds the keys and the types of their values.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cypher_text.h"
#include "cli/export.h"

typedef struct id_set {
    strata_id *ids;
    size_t n, cap;
} id_set;

typedef struct entities {
    strata_view *v;
    id_set nodes, rels;
    bool failed;   /* out of memory collecting */
} entities;

static void id_add(entities *e, id_set *s, strata_id id)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        strata_id *p = realloc(s->ids, cap * sizeof *p);
        if (!p) {
            e->failed = true;
            return;
        }
        s->ids = p;
        s->cap = cap;
    }
    s->ids[s->n++] = id;
}

static int cmp_id(const void *a, const void *b)
{
    strata_id x = *(const strata_id *)a, y = *(const strata_id *)b;
    return x < y ? -1 : x > y;
}

static void id_sort_unique(id_set *s)
{
    if (!s->n)
        return;
    qsort(s->ids, s->n, sizeof *s->ids, cmp_id);
    size_t out = 1;
    for (size_t i = 1; i < s->n; i++)
        if (s->ids[i] != s->ids[out - 1])
            s->ids[out++] = s->ids[i];
    s->n = out;
}

static void collect_all(entities *e)
{
    strata_node_iter *it = NULL;
    strata_id node, rel, other;
    if (strata_nodes(e->v, &it) != STRATA_OK) {
        e->failed = true;
        return;
    }
    while (strata_node_iter_next(it, &node)) {
        id_add(e, &e->nodes, node);
        strata_edge_iter *eit = NULL;
        if (strata_neighbours(e->v, node, STRATA_OUT, STRATA_ANY_TYPE, &eit) != STRATA_OK) {
            e->failed = true;
            continue;
        }
        while (strata_edge_iter_next(eit, &rel, &other))
            id_add(e, &e->rels, rel);
        strata_edge_iter_free(&eit);
    }
    strata_node_iter_free(&it);
}

/* The nodes and relationships anywhere inside a result value. */
static void collect_rel(entities *e, strata_id rel)
{
    strata_id start = 0, end = 0;
    id_add(e, &e->rels, rel);
    if (strata_rel_info(e->v, rel, &start, &end, NULL) == STRATA_OK) {
        id_add(e, &e->nodes, start);
        id_add(e, &e->nodes, end);
    }
}

static void collect_value(entities *e, const strata_value *val)
{
    strata_id id = 0;
    switch (strata_value_type(val)) {
    case STRATA_NODE:
        strata_value_get_id(val, &id);
        id_add(e, &e->nodes, id);
        break;
    case STRATA_RELATIONSHIP:
        strata_value_get_id(val, &id);
        collect_rel(e, id);
        break;
    case STRATA_PATH:
        for (size_t i = 0; i < strata_value_path_len(val); i++)
            if (strata_value_path_rel(val, i, &id) == STRATA_OK)
                collect_rel(e, id);
        if (strata_value_path_node(val, 0, &id) == STRATA_OK)
            id_add(e, &e->nodes, id);
        break;
    case STRATA_LIST:
        for (size_t i = 0; i < strata_value_list_len(val); i++)
            collect_value(e, strata_value_list_at(val, i));
        break;
    case STRATA_MAP:
        for (size_t i = 0; i < strata_value_map_len(val); i++)
            collect_value(e, strata_value_map_at(val, i, NULL));
        break;
    default: break;
    }
}

static void collect_result(entities *e, strata_result *r)
{
    size_t nc = strata_result_columns(r, NULL);
    const strata_value *const *row;
    while (strata_result_next(r, &row))
        for (size_t i = 0; i < nc; i++)
            collect_value(e, row[i]);
}

/* ---- properties, shared by both writers ---------------------------------- */

/* Every property of an entity, in token order (an allocation failure
   leaves it with none, and the writer with fewer attributes). */
typedef struct props {
    size_t n;
    strata_token *keys;
    strata_value **vals;
} props;

static void props_read(strata_view *v, bool node, strata_id id, props *p)
{
    *p = (props){ 0 };
    size_t n = 0;
    if ((node ? strata_node_keys(v, id, NULL, 0, &n) : strata_rel_keys(v, id, NULL, 0, &n)) !=
            STRATA_OK || n == 0)
        return;
    p->keys = malloc(n * sizeof *p->keys);
    p->vals = calloc(n, sizeof *p->vals);
    if (!p->keys || !p->vals ||
        (node ? strata_node_keys(v, id, p->keys, n, &n) : strata_rel_keys(v, id, p->keys, n, &n)) !=
            STRATA_OK) {
        free(p->keys);
        free(p->vals);
        *p = (props){ 0 };
        return;
    }
    p->n = n;
    for (size_t i = 0; i < p->n; i++) {
        if (node)
            strata_node_get(v, id, p->keys[i], &p->vals[i]);
        else
            strata_rel_get(v, id, p->keys[i], &p->vals[i]);
    }
}

static void props_free(props *p)
{
    for (size_t i = 0; i < p->n; i++)
        strata_value_free(&p->vals[i]);
    free(p->keys);
    free(p->vals);
    *p = (props){ 0 };
}

static const char *token_name(strata_view *v, strata_token_kind kind, strata_token t)
{
    const char *name = "?";
    strata_token_name(v, kind, t, &name);
    return name;
}

/* ":Person:Actor" */
static void labels_text(strbuf *b, strata_view *v, strata_id node)
{
    token_buf labels;
    node_label_tokens(v, node, &labels);
    for (size_t i = 0; i < labels.n; i++) {
        strbuf_str(b, ":");
        strbuf_str(b, token_name(v, STRATA_LABEL, labels.t[i]));
    }
    token_buf_free(&labels);
}

/* ---- dot ------------------------------------------------------------------ */

/* A control character other than a line break, written where the format
   cannot hold it (DOT labels; XML 1.0 has no way to write U+0000 even as
   a reference): the six characters \uXXXX, as Cypher writes it. */
static void control_escape(FILE *f, unsigned char c, bool doubled_backslash)
{
    fprintf(f, doubled_backslash ? "\\\\u%04x" : "\\u%04x", c);
}

/* A DOT string: the whole text, U+0000 included (docs/QUERY.md). */
static void dot_string(FILE *f, const char *s, size_t len)
{
    fputc('"', f);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20 || c == 0x7f)
            control_escape(f, c, true);   /* \\ in a DOT label shows as \ */
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* The head line, then "key: value" per property, separated by newlines. */
static void entity_label(strbuf *b, strata_view *v, bool node, strata_id id)
{
    props p;
    props_read(v, node, id, &p);
    for (size_t i = 0; i < p.n; i++) {
        strbuf_str(b, "\n");
        strbuf_str(b, token_name(v, STRATA_KEY, p.keys[i]));
        strbuf_str(b, ": ");
        if (p.vals[i])
            cypher_text(b, v, p.vals[i]);
    }
    props_free(&p);
}

static void write_dot(FILE *f, const entities *e)
{
    fputs("digraph strata {\n  node [shape=box, style=rounded];\n", f);
    for (size_t i = 0; i < e->nodes.n; i++) {
        strbuf b = { 0 };
        labels_text(&b, e->v, e->nodes.ids[i]);
        if (!b.n)
            strbuf_str(&b, "()");
        entity_label(&b, e->v, true, e->nodes.ids[i]);
        fprintf(f, "  n%llu [label=", (unsigned long long)e->nodes.ids[i]);
        dot_string(f, b.p ? b.p : "", b.n);
        fputs("];\n", f);
        strbuf_free(&b);
    }
    for (size_t i = 0; i < e->rels.n; i++) {
        strata_id start = 0, end = 0;
        strata_token type = 0;
        strata_rel_info(e->v, e->rels.ids[i], &start, &end, &type);
        strbuf b = { 0 };
        strbuf_str(&b, token_name(e->v, STRATA_RELTYPE, type));
        entity_label(&b, e->v, false, e->rels.ids[i]);
        fprintf(f, "  n%llu -> n%llu [label=", (unsigned long long)start,
                (unsigned long long)end);
        dot_string(f, b.p ? b.p : "", b.n);
        fputs("];\n", f);
        strbuf_free(&b);
    }
    fputs("}\n", f);
}

/* ---- GraphML -------------------------------------------------------------- */

/* What values a key holds, per domain (node or edge): bits of strata_type. */
typedef struct key_types {
    uint32_t count;
    uint32_t *node_bits, *edge_bits;
} key_types;

static const char *graphml_type(uint32_t bits)
{
    if (bits == 1u << STRATA_INT)
        return "long";
    if (bits && !(bits & ~((1u << STRATA_INT) | (1u << STRATA_FLOAT))))
        return "double";
    if (bits == 1u << STRATA_BOOL)
        return "boolean";
    return "string";
}

/* XML character data: the whole text; the control characters XML 1.0
   cannot hold (U+0000 among them) as \uXXXX (docs/QUERY.md). */
static void xml_text(FILE *f, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '&')
            fputs("&amp;", f);
        else if (c == '<')
            fputs("&lt;", f);
        else if (c == '>')
            fputs("&gt;", f);
        else if (c == '"')
            fputs("&quot;", f);
        else if (c >= 0x20 || c == '\t' || c == '\n' || c == '\r')
            fputc(c, f);
        else
            control_escape(f, c, false);
    }
}

static int scan_key_types(const entities *e, key_types *kt)
{
    kt->count = strata_token_count(e->v, STRATA_KEY);
    kt->node_bits = calloc(kt->count + 1, sizeof *kt->node_bits);
    kt->edge_bits = calloc(kt->count + 1, sizeof *kt->edge_bits);
    if (!kt->node_bits || !kt->edge_bits)
        return -1;
    for (int pass = 0; pass < 2; pass++) {
        const id_set *ids = pass ? &e->rels : &e->nodes;
        uint32_t *bits = pass ? kt->edge_bits : kt->node_bits;
        for (size_t i = 0; i < ids->n; i++) {
            props p;
            props_read(e->v, !pass, ids->ids[i], &p);
            for (size_t k = 0; k < p.n; k++)
                if (p.keys[k] < kt->count && p.vals[k])
                    bits[p.keys[k]] |= 1u << strata_value_type(p.vals[k]);
            props_free(&p);
        }
    }
    return 0;
}

static void graphml_keys(FILE *f, strata_view *v, const key_types *kt)
{
    fputs("  <key id=\"labels\" for=\"node\" attr.name=\"labels\" attr.type=\"string\"/>\n"
          "  <key id=\"type\" for=\"edge\" attr.name=\"type\" attr.type=\"string\"/>\n", f);
    for (int edge = 0; edge < 2; edge++)
        for (strata_token t = 0; t < kt->count; t++) {
            uint32_t bits = edge ? kt->edge_bits[t] : kt->node_bits[t];
            if (!bits)
                continue;
            fprintf(f, "  <key id=\"%c%u\" for=\"%s\" attr.name=\"", edge ? 'e' : 'n', t,
                    edge ? "edge" : "node");
            const char *key = token_name(v, STRATA_KEY, t);
            xml_text(f, key, strlen(key));
            fprintf(f, "\" attr.type=\"%s\"/>\n", graphml_type(bits));
        }
}

/* One <data> per property: numbers as numbers where the key is numeric,
   everything else as its Cypher text. */
static void graphml_data(FILE *f, strata_view *v, bool node, strata_id id)
{
    props p;
    props_read(v, node, id, &p);
    for (size_t i = 0; i < p.n; i++) {
        if (!p.vals[i])
            continue;
        strbuf b = { 0 };
        cypher_text(&b, v, p.vals[i]);
        fprintf(f, "      <data key=\"%c%u\">", node ? 'n' : 'e', p.keys[i]);
        xml_text(f, b.p ? b.p : "", b.n);
        fputs("</data>\n", f);
        strbuf_free(&b);
    }
    props_free(&p);
}

static int write_graphml(FILE *f, const entities *e)
{
    key_types kt = { 0 };
    int rc = scan_key_types(e, &kt);
    if (rc == 0) {
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
              "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n", f);
        graphml_keys(f, e->v, &kt);
        fputs("  <graph id=\"G\" edgedefault=\"directed\">\n", f);
        for (size_t i = 0; i < e->nodes.n; i++) {
            strbuf b = { 0 };
            labels_text(&b, e->v, e->nodes.ids[i]);
            fprintf(f, "    <node id=\"n%llu\">\n      <data key=\"labels\">",
                    (unsigned long long)e->nodes.ids[i]);
            xml_text(f, b.p ? b.p : "", b.n);
            fputs("</data>\n", f);
            graphml_data(f, e->v, true, e->nodes.ids[i]);
            fputs("    </node>\n", f);
            strbuf_free(&b);
        }
        for (size_t i = 0; i < e->rels.n; i++) {
            strata_id start = 0, end = 0;
            strata_token type = 0;
            strata_rel_info(e->v, e->rels.ids[i], &start, &end, &type);
            fprintf(f, "    <edge id=\"e%llu\" source=\"n%llu\" target=\"n%llu\">\n"
                       "      <data key=\"type\">",
                    (unsigned long long)e->rels.ids[i], (unsigned long long)start,
                    (unsigned long long)end);
            const char *type_name = token_name(e->v, STRATA_RELTYPE, type);
            xml_text(f, type_name, strlen(type_name));
            fputs("</data>\n", f);
            graphml_data(f, e->v, false, e->rels.ids[i]);
            fputs("    </edge>\n", f);
        }
        fputs("  </graph>\n</graphml>\n", f);
    }
    free(kt.node_bits);
    free(kt.edge_bits);
    return rc;
}

/* ---- the command ---------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Runs query (with the session's parameters); NULL after reporting its
   error. */
static strata_result *run_query(session *s, const char *query)
{
    strata_value *params = session_params(s);
    strata_result *r = NULL;
    strata_status st = strata_query(s->g, query, params, &r);
    strata_value_free(&params);
    if (st == STRATA_OK)
        return r;
    if (r && strata_result_error(r)) {
        out_error_in(stdout, s->fmt, strata_result_error(r), query);
        s->failed = true;
    } else {
        session_error(s, strata_errmsg(s->g));
    }
    strata_result_free(&r);
    return NULL;
}

static void write_file(session *s, const char *path, entities *e, bool dot)
{
    char msg[512];
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(msg, sizeof msg, "cannot write %s: %s", path, strerror(errno));
        session_error(s, msg);
        return;
    }
    int rc = dot ? (write_dot(f, e), 0) : write_graphml(f, e);
    if (fclose(f) != 0 || rc != 0) {
        snprintf(msg, sizeof msg, "writing %s failed: %s", path,
                 rc ? "out of memory" : strerror(errno));
        session_error(s, msg);
        return;
    }
    if (s->fmt != FMT_JSONL && s->fmt != FMT_JSON)
        printf("wrote %zu nodes and %zu relationships to %s\n", e->nodes.n, e->rels.n, path);
}

void export_run(session *s, const char *path, const char *query)
{
    bool dot = ends_with(path, ".dot") || ends_with(path, ".gv");
    if (!dot && !ends_with(path, ".graphml")) {
        session_error(s, "export: the file name must end in .dot or .graphml");
        return;
    }
    entities e = { 0 };
    strata_result *r = NULL;
    if (query) {
        if (!(r = run_query(s, query)))
            return;
        e.v = strata_result_view(r);
        collect_result(&e, r);
    } else {
        if (!(e.v = session_view(s))) {
            session_error(s, strata_errmsg(s->g));
            return;
        }
        collect_all(&e);
    }
    id_sort_unique(&e.nodes);
    id_sort_unique(&e.rels);
    if (e.failed)
        session_error(s, "export: out of memory collecting the entities");
    else
        write_file(s, path, &e, dot);
    free(e.nodes.ids);
    free(e.rels.ids);
    if (r)
        strata_result_free(&r);
    else
        strata_view_release(&e.v);
}
