/* commands — the client commands, one function each, dispatched from one
   table that :help prints, so the list and the help cannot drift apart. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/export.h"

typedef void (*command_fn)(session *s, char *arg);

typedef struct command {
    const char *name;
    const char *args;
    const char *help;
    command_fn run;
} command;

static void cmd_help(session *s, char *arg);

static void cmd_quit(session *s, char *arg)
{
    (void)arg;
    s->quit = true;
}

/* :param NAME => EXPR — EXPR is evaluated as `RETURN EXPR` with the
   parameters set so far. */
static void cmd_param(session *s, char *arg)
{
    char *arrow = strstr(arg, "=>");
    if (!arrow) {
        session_error(s, "usage: :param NAME => EXPRESSION");
        return;
    }
    *arrow = '\0';
    char *name = arg, *end = arrow;
    while (*name == ' ' || *name == '\t')
        name++;
    while (end > name && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *end = '\0';
    if (name[0] == '$')
        name++;
    if (!*name) {
        session_error(s, "usage: :param NAME => EXPRESSION");
        return;
    }
    size_t elen = strlen(arrow + 2);
    char *q = malloc(elen + 16);
    if (!q) {
        session_error(s, "out of memory");
        return;
    }
    snprintf(q, elen + 16, "RETURN %s", arrow + 2);
    strata_value *params = session_params(s);
    strata_result *r = NULL;
    strata_status st = strata_query(s->g, q, params, &r);
    free(q);
    strata_value_free(&params);
    const strata_value *const *row;
    if (st != STRATA_OK || strata_result_columns(r, NULL) != 1 || !strata_result_next(r, &row)) {
        if (r && strata_result_error(r)) {
            out_error(stdout, s->fmt, strata_result_error(r));
            s->failed = true;
        } else {
            session_error(s, "the parameter's expression gave no value");
        }
        strata_result_free(&r);
        return;
    }
    /* a copy of the value that outlives the result */
    strata_value *v = strata_value_list(row, 1);
    strata_value *val = NULL;
    if (v)
        strata_value_list_get(v, 0, &val);
    strata_value_free(&v);
    strata_result_free(&r);
    if (!val || session_param_set(s, name, val) != 0)
        session_error(s, "out of memory");
}

static void cmd_params(session *s, char *arg)
{
    (void)arg;
    for (size_t i = 0; i < s->nparams; i++) {
        strata_value *m = strata_value_map((const char *const *)&s->pnames[i],
                                           (const strata_value *const *)&s->pvals[i], 1);
        strata_result *r = NULL;
        if (strata_query(s->g, "RETURN $p AS p", m, &r) == STRATA_OK) {
            /* print as `:param NAME => value` through the formatter */
            printf(":param %s => ", s->pnames[i]);
            fflush(stdout);
            out_result(stdout, FMT_JSONL, r, out_now_ms());
        }
        strata_result_free(&r);
        strata_value_free(&m);
    }
}

static void cmd_format(session *s, char *arg)
{
    if (out_format_parse(arg, &s->fmt) != 0)
        session_error(s, "unknown format (jsonl, json, csv, table)");
}

static void cmd_timing(session *s, char *arg)
{
    if (strcmp(arg, "on") == 0)
        s->timing = true;
    else if (strcmp(arg, "off") == 0)
        s->timing = false;
    else
        session_error(s, "usage: :timing on|off");
}

static void cmd_rows(session *s, char *arg)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(arg, &end, 10);
    if (!*arg || *end || errno || arg[0] == '-') {
        session_error(s, "usage: :rows N (the table rows shown; 0 shows every row)");
        return;
    }
    s->max_rows = (size_t)n;
}

static void report_status(session *s, strata_status st)
{
    if (st != STRATA_OK)
        session_error(s, strata_errmsg(s->g));
}

static void cmd_begin(session *s, char *arg)
{
    (void)arg;
    report_status(s, strata_begin(s->g));
}

static void cmd_commit(session *s, char *arg)
{
    (void)arg;
    report_status(s, strata_commit(s->g));
}

static void cmd_rollback(session *s, char *arg)
{
    (void)arg;
    report_status(s, strata_rollback(s->g));
}

/* ---- :schema ------------------------------------------------------------ */

static uint64_t count_iter(strata_node_iter *it)
{
    uint64_t n = 0;
    strata_id id;
    while (it && strata_node_iter_next(it, &id))
        n++;
    strata_node_iter_free(&it);
    return n;
}

/* Labels and types with how many entities carry them; names the catalog
   keeps but nothing carries any more are left out. */
static void print_tokens_in_use(strata_view *v, strata_token_kind kind, const char *title)
{
    printf("%-20s", title);
    int shown = 0;
    for (strata_token t = 0; t < strata_token_count(v, kind); t++) {
        const char *name = NULL;
        strata_node_iter *it = NULL;
        if (strata_token_name(v, kind, t, &name) != STRATA_OK)
            continue;
        if (kind == STRATA_LABEL)
            strata_nodes_by_label(v, t, &it);
        else
            strata_rels_by_type(v, t, &it);
        uint64_t n = count_iter(it);
        if (n)
            printf("%s%s (%llu)", shown++ ? ", " : "", name, (unsigned long long)n);
    }
    printf("%s\n", shown ? "" : "(none)");
}

static void print_keys(strata_view *v)
{
    printf("%-20s", "Property keys:");
    uint32_t n = strata_token_count(v, STRATA_KEY);
    for (strata_token t = 0; t < n; t++) {
        const char *name = NULL;
        if (strata_token_name(v, STRATA_KEY, t, &name) == STRATA_OK)
            printf("%s%s", t ? ", " : "", name);
    }
    printf("%s\n", n ? "" : "(none)");
}

/* One index as Cypher writes its pattern: (:Person {name}) or [:KNOWS {since}]. */
static void print_index(strata_view *v, const strata_index_info *info)
{
    static const char *kinds[] = {"hash", "range", "unique"};
    const char *token = "?";
    strata_token_name(v, info->relationships ? STRATA_RELTYPE : STRATA_LABEL, info->token, &token);
    printf("  %-7s %s:%s {", kinds[info->kind], info->relationships ? "[" : "(", token);
    for (size_t k = 0; k < info->nkeys; k++) {
        const char *key = "?";
        strata_token_name(v, STRATA_KEY, info->keys[k], &key);
        printf("%s%s", k ? ", " : "", key);
    }
    printf("}%s  %llu entries\n", info->relationships ? "]" : ")",
           (unsigned long long)info->entries);
}

/* Indices, or (constraints true) the unique constraints. */
static void print_indexes(strata_view *v, bool constraints)
{
    strata_index ids[256];
    size_t n = 0;
    strata_indexes(v, ids, 256, &n);
    if (n > 256)
        n = 256;
    printf("%s\n", constraints ? "Constraints:" : "Indices:");
    int shown = 0;
    for (size_t i = 0; i < n; i++) {
        strata_index_info info;
        if (strata_index_info_get(v, ids[i], &info) != STRATA_OK)
            continue;
        if ((info.kind == STRATA_INDEX_UNIQUE) == constraints) {
            print_index(v, &info);
            shown++;
        }
    }
    if (!shown)
        printf("  (none)\n");
}

static void cmd_schema(session *s, char *arg)
{
    (void)arg;
    strata_view *v = session_view(s);
    if (!v) {
        session_error(s, strata_errmsg(s->g));
        return;
    }
    print_tokens_in_use(v, STRATA_LABEL, "Labels:");
    print_tokens_in_use(v, STRATA_RELTYPE, "Relationship types:");
    print_keys(v);
    print_indexes(v, false);
    print_indexes(v, true);
    strata_view_release(&v);
}

/* ---- :stats ------------------------------------------------------------- */

static void cmd_stats(session *s, char *arg)
{
    (void)arg;
    strata_memstats m;
    if (strata_memory_stats(s->g, &m) != STRATA_OK) {
        session_error(s, strata_errmsg(s->g));
        return;
    }
    printf("Nodes:          %llu (%llu slots)\n", (unsigned long long)m.nodes,
           (unsigned long long)m.node_slots);
    printf("Relationships:  %llu (%llu slots)\n", (unsigned long long)m.relationships,
           (unsigned long long)m.rel_slots);
    printf("Memory:         %.1f KiB in graph storage\n", (double)m.graph_bytes / 1024.0);
    printf("Forked:         %s\n", strata_is_forked(s->g)
                                       ? "yes (a view may still read an older version)"
                                       : "no");
    printf("Transaction:    %s\n", strata_in_transaction(s->g)
                                       ? "open (:commit or :rollback)" : "none");
}

/* ---- :export ------------------------------------------------------------ */

/* :export FILE.dot|FILE.graphml [QUERY] */
static void cmd_export(session *s, char *arg)
{
    char *path = arg, *query = arg;
    while (*query && *query != ' ' && *query != '\t')
        query++;
    if (*query)
        *query++ = '\0';
    while (*query == ' ' || *query == '\t')
        query++;
    if (!*path) {
        session_error(s, "usage: :export FILE.dot|FILE.graphml [MATCH ... RETURN ...]");
        return;
    }
    export_run(s, path, *query ? query : NULL);
}

/* ---- persistence ---------------------------------------------------------
 * :save [FILE] and :open FILE go here, over strata_save(g, path) and
 * strata_load(path, &g); until the library has them they say so. */
/* :save [FILE] — the committed state (a view: an open transaction's
   writes are not in it), to FILE or the file last opened or saved. */
static void cmd_save(session *s, char *arg)
{
    const char *path = *arg ? arg : s->path;
    if (!path) {
        session_error(s, "no file to save to: :save FILE");
        return;
    }
    strata_status st = strata_save(s->g, path);
    if (st != STRATA_OK) {
        session_fail(s, st == STRATA_ENOMEM ? "OutOfMemory" : "IOError", strata_errmsg(s->g));
        return;
    }
    if (path != s->path) {
        char *copy = strdup(path);
        if (copy) {
            free(s->path);
            s->path = copy;
        }
    }
}

/* :open FILE — replaces the graph by the one saved in FILE; on any error
   the graph in use stays. */
static void cmd_open(session *s, char *arg)
{
    if (!*arg) {
        session_error(s, "which file? :open FILE");
        return;
    }
    if (strata_in_transaction(s->g)) {
        session_error(s, "a transaction is open: :commit or :rollback first");
        return;
    }
    char err[512];
    strata_graph *g = NULL;
    char *copy = strdup(arg);
    if (!copy) {
        session_error(s, "out of memory");
        return;
    }
    strata_status st = strata_load_ex(arg, &g, err, sizeof err);
    if (st != STRATA_OK) {
        free(copy);
        session_fail(s, st == STRATA_ENOMEM ? "OutOfMemory" : "IOError", err);
        return;
    }
    /* the loaded graph keeps the program's LOAD CSV access (--import-dir,
       --no-load-csv) */
    strata_csv_options csv;
    if (strata_get_csv_options(s->g, &csv) != STRATA_OK ||
        strata_set_csv_options(g, &csv) != STRATA_OK) {
        free(copy);
        session_fail(s, "IOError", strata_errmsg(g));
        strata_graph_free(&g);
        return;
    }
    strata_graph_free(&s->g);
    s->g = g;
    free(s->path);
    s->path = copy;
}

static const command commands[] = {
    {"help", "", "list the client commands", cmd_help},
    {"quit", "", "leave strata (also Ctrl-D on an empty line)", cmd_quit},
    {"exit", "", "the same as :quit", cmd_quit},
    {"param", "NAME => EXPR", "set the parameter $NAME to the value of EXPR", cmd_param},
    {"params", "", "list the parameters set", cmd_params},
    {"format", "table|csv|json|jsonl", "how results are printed", cmd_format},
    {"timing", "on|off", "show the time a statement took under its table", cmd_timing},
    {"rows", "N", "show at most N rows of a table (0: all)", cmd_rows},
    {"begin", "", "open a transaction", cmd_begin},
    {"commit", "", "commit the open transaction", cmd_commit},
    {"rollback", "", "roll the open transaction back", cmd_rollback},
    {"schema", "", "labels, relationship types, property keys, indices, constraints",
     cmd_schema},
    {"stats", "", "node and relationship counts, memory, fork and transaction state",
     cmd_stats},
    {"export", "FILE.dot|FILE.graphml [QUERY]",
     "write the graph, or the entities a query returns, for Graphviz or Gephi", cmd_export},
    {"save", "[FILE]", "save the graph to FILE (default: the file opened or last saved)",
     cmd_save},
    {"open", "FILE", "replace the graph by the one saved in FILE", cmd_open},
};

size_t command_count(void) { return sizeof commands / sizeof commands[0]; }

const char *command_name(size_t i) { return i < command_count() ? commands[i].name : NULL; }

static void cmd_help(session *s, char *arg)
{
    (void)s;
    (void)arg;
    printf("Cypher statements end with ';' and may span lines.  Client commands, one a line:\n");
    for (size_t i = 0; i < command_count(); i++) {
        char usage[64];
        snprintf(usage, sizeof usage, ":%s %s", commands[i].name, commands[i].args);
        printf("  %-40s %s\n", usage, commands[i].help);
    }
    printf("Ctrl-C cancels the statement being typed; Tab completes keywords, labels, "
           "types, keys and commands.\n");
}

static char *trim_end(char *line)
{
    char *end = line + strlen(line);
    while (end > line && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' ||
                          end[-1] == '\t'))
        *--end = '\0';
    return line;
}

void command_run(session *s, char *line)
{
    line = trim_end(line);
    while (*line == ' ' || *line == '\t')
        line++;
    char *name = line + 1, *arg = name;
    while (*arg && *arg != ' ' && *arg != '\t')
        arg++;
    size_t len = (size_t)(arg - name);
    while (*arg == ' ' || *arg == '\t')
        arg++;
    const command *found = NULL;
    for (size_t i = 0; i < command_count() && !found; i++)
        if (strlen(commands[i].name) == len && strncmp(commands[i].name, name, len) == 0)
            found = &commands[i];
    if (found) {
        found->run(s, arg);
    } else {
        char msg[160];
        snprintf(msg, sizeof msg, "unknown command :%.*s (:help lists the commands)",
                 (int)(len > 60 ? 60 : len), name);
        session_error(s, msg);
    }
    if (s->failed && s->bail)
        s->quit = true;
    fflush(stdout);
}
