/* inspect — :schema and :stats.  Each gathers what it shows through the
   public API, then writes it as text or as JSON; the two forms list the
   same things in the same order. */
#include <stdio.h>
#include <string.h>

#include "cli/inspect.h"
#include "cli/printable.h"
#include "cli/strbuf.h"

/* 256: the index listing is a summary; a schema with more indices than
   this shows the first 256 (strata_indexes reports how many there are). */
#define MAX_INDEXES 256

static uint64_t count_iter(strata_node_iter *it)
{
    uint64_t n = 0;
    strata_id id;
    while (it && strata_node_iter_next(it, &id))
        n++;
    strata_node_iter_free(&it);
    return n;
}

/* How many entities carry token t (a label or a relationship type). */
static uint64_t token_uses(strata_view *v, strata_token_kind kind, strata_token t)
{
    strata_node_iter *it = NULL;
    if (kind == STRATA_LABEL)
        strata_nodes_by_label(v, t, &it);
    else
        strata_rels_by_type(v, t, &it);
    return count_iter(it);
}

static const char *token_text(strata_view *v, strata_token_kind kind, strata_token t)
{
    const char *name = NULL;
    return strata_token_name(v, kind, t, &name) == STRATA_OK && name ? name : "?";
}

static const char *const index_kinds[] = {"hash", "range", "unique"};

/* ---- as text ------------------------------------------------------------- */

/* A name from the graph for a terminal: it may hold any character, an
   escape sequence among them (printable.h). */
static void text_name(const char *sep, const char *name)
{
    fputs(sep, stdout);
    printable_write(stdout, name, strlen(name), false);
}

/* Labels and types with how many entities carry them; names the catalog
   keeps but nothing carries any more are left out. */
static void text_tokens_in_use(strata_view *v, strata_token_kind kind, const char *title)
{
    printf("%-20s", title);
    int shown = 0;
    for (strata_token t = 0; t < strata_token_count(v, kind); t++) {
        uint64_t n = token_uses(v, kind, t);
        if (n) {
            text_name(shown++ ? ", " : "", token_text(v, kind, t));
            printf(" (%llu)", (unsigned long long)n);
        }
    }
    printf("%s\n", shown ? "" : "(none)");
}

static void text_keys(strata_view *v)
{
    printf("%-20s", "Property keys:");
    uint32_t n = strata_token_count(v, STRATA_KEY);
    for (strata_token t = 0; t < n; t++)
        text_name(t ? ", " : "", token_text(v, STRATA_KEY, t));
    printf("%s\n", n ? "" : "(none)");
}

/* One index as Cypher writes its pattern: (:Person {name}) or [:KNOWS {since}]. */
static void text_index(strata_view *v, const strata_index_info *info)
{
    strata_token_kind kind = info->relationships ? STRATA_RELTYPE : STRATA_LABEL;
    printf("  %-7s %s:", index_kinds[info->kind], info->relationships ? "[" : "(");
    text_name("", token_text(v, kind, info->token));
    fputs(" {", stdout);
    for (size_t k = 0; k < info->nkeys; k++)
        text_name(k ? ", " : "", token_text(v, STRATA_KEY, info->keys[k]));
    printf("}%s  %llu entries\n", info->relationships ? "]" : ")",
           (unsigned long long)info->entries);
}

/* ---- as JSON --------------------------------------------------------------- */

static void json_name(strbuf *b, const char *name)
{
    out_json_string(b, name, strlen(name));
}

static void json_tokens_in_use(strbuf *b, strata_view *v, strata_token_kind kind)
{
    strbuf_str(b, "{");
    int shown = 0;
    for (strata_token t = 0; t < strata_token_count(v, kind); t++) {
        uint64_t n = token_uses(v, kind, t);
        if (!n)
            continue;
        char num[32];
        snprintf(num, sizeof num, ": %llu", (unsigned long long)n);
        if (shown++)
            strbuf_str(b, ", ");
        json_name(b, token_text(v, kind, t));
        strbuf_str(b, num);
    }
    strbuf_str(b, "}");
}

static void json_keys(strbuf *b, strata_view *v)
{
    strbuf_str(b, "[");
    for (strata_token t = 0; t < strata_token_count(v, STRATA_KEY); t++) {
        if (t)
            strbuf_str(b, ", ");
        json_name(b, token_text(v, STRATA_KEY, t));
    }
    strbuf_str(b, "]");
}

static void json_index(strbuf *b, strata_view *v, const strata_index_info *info)
{
    strata_token_kind kind = info->relationships ? STRATA_RELTYPE : STRATA_LABEL;
    strbuf_str(b, "{\"kind\": ");
    json_name(b, index_kinds[info->kind]);
    strbuf_str(b, info->relationships ? ", \"type\": " : ", \"label\": ");
    json_name(b, token_text(v, kind, info->token));
    strbuf_str(b, ", \"keys\": [");
    for (size_t k = 0; k < info->nkeys; k++) {
        if (k)
            strbuf_str(b, ", ");
        json_name(b, token_text(v, STRATA_KEY, info->keys[k]));
    }
    char num[48];
    snprintf(num, sizeof num, "], \"entries\": %llu}", (unsigned long long)info->entries);
    strbuf_str(b, num);
}

/* ---- :schema ---------------------------------------------------------------- */

/* The indices (constraints false) or the unique constraints, as text or
   appended to b as a JSON array. */
static void list_indexes(session *s, strata_view *v, bool constraints, strbuf *b)
{
    strata_index ids[MAX_INDEXES];
    size_t n = 0;
    strata_indexes(v, ids, MAX_INDEXES, &n);
    if (n > MAX_INDEXES)
        n = MAX_INDEXES;
    bool json = out_is_json(s->fmt);
    if (json)
        strbuf_str(b, "[");
    else
        printf("%s\n", constraints ? "Constraints:" : "Indices:");
    int shown = 0;
    for (size_t i = 0; i < n; i++) {
        strata_index_info info;
        if (strata_index_info_get(v, ids[i], &info) != STRATA_OK ||
            (info.kind == STRATA_INDEX_UNIQUE) != constraints)
            continue;
        if (json) {
            if (shown)
                strbuf_str(b, ", ");
            json_index(b, v, &info);
        } else {
            text_index(v, &info);
        }
        shown++;
    }
    if (json)
        strbuf_str(b, "]");
    else if (!shown)
        printf("  (none)\n");
}

void inspect_schema(session *s)
{
    strata_view *v = session_view(s);
    if (!v) {
        session_error(s, strata_errmsg(s->g));
        return;
    }
    if (out_is_json(s->fmt)) {
        strbuf b = { 0 };
        strbuf_str(&b, "{\":schema\": {\"labels\": ");
        json_tokens_in_use(&b, v, STRATA_LABEL);
        strbuf_str(&b, ", \"relationship_types\": ");
        json_tokens_in_use(&b, v, STRATA_RELTYPE);
        strbuf_str(&b, ", \"property_keys\": ");
        json_keys(&b, v);
        strbuf_str(&b, ", \"indexes\": ");
        list_indexes(s, v, false, &b);
        strbuf_str(&b, ", \"constraints\": ");
        list_indexes(s, v, true, &b);
        strbuf_str(&b, "}}");
        out_json_line(stdout, s->fmt, &b);
    } else {
        text_tokens_in_use(v, STRATA_LABEL, "Labels:");
        text_tokens_in_use(v, STRATA_RELTYPE, "Relationship types:");
        text_keys(v);
        list_indexes(s, v, false, NULL);
        list_indexes(s, v, true, NULL);
    }
    strata_view_release(&v);
}

/* ---- :stats ----------------------------------------------------------------- */

void inspect_stats(session *s)
{
    strata_memstats m;
    if (strata_memory_stats(s->g, &m) != STRATA_OK) {
        session_error(s, strata_errmsg(s->g));
        return;
    }
    bool forked = strata_is_forked(s->g), in_txn = strata_in_transaction(s->g);
    strata_log_stats log;
    bool durable = strata_log_stats_get(s->g, &log) == STRATA_OK;
    if (out_is_json(s->fmt)) {
        char line[640], logpart[160] = "";
        if (durable)
            snprintf(logpart, sizeof logpart,
                     ", \"log_bytes\": %llu, \"snapshot_seq\": %llu, \"last_seq\": %llu",
                     (unsigned long long)log.log_bytes, (unsigned long long)log.snapshot_seq,
                     (unsigned long long)log.last_seq);
        snprintf(line, sizeof line,
                 "{\":stats\": {\"nodes\": %llu, \"node_slots\": %llu, "
                 "\"relationships\": %llu, \"relationship_slots\": %llu, "
                 "\"graph_bytes\": %llu, \"forked\": %s, \"transaction\": %s%s}}",
                 (unsigned long long)m.nodes, (unsigned long long)m.node_slots,
                 (unsigned long long)m.relationships, (unsigned long long)m.rel_slots,
                 (unsigned long long)m.graph_bytes, forked ? "true" : "false",
                 in_txn ? "true" : "false", logpart);
        strbuf b = { 0 };
        strbuf_str(&b, line);
        out_json_line(stdout, s->fmt, &b);
        return;
    }
    printf("Nodes:          %llu (%llu slots)\n", (unsigned long long)m.nodes,
           (unsigned long long)m.node_slots);
    printf("Relationships:  %llu (%llu slots)\n", (unsigned long long)m.relationships,
           (unsigned long long)m.rel_slots);
    printf("Memory:         %.1f KiB in graph storage\n", (double)m.graph_bytes / 1024.0);
    printf("Forked:         %s\n",
           forked ? "yes (a view may still read an older version)" : "no");
    printf("Transaction:    %s\n", in_txn ? "open (:commit or :rollback)" : "none");
    if (durable)
        printf("Log:            %llu bytes since the snapshot (#%llu); last record #%llu\n",
               (unsigned long long)log.log_bytes, (unsigned long long)log.snapshot_seq,
               (unsigned long long)log.last_seq);
}
