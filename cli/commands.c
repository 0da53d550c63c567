/* commands — the client commands, one function each, dispatched from one
   table that :help prints, so the list and the help cannot drift apart. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/branches.h"
#include "cli/commands.h"
#include "cli/cypher_text.h"
#include "cli/export.h"
#include "cli/inspect.h"

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

/* A parameter name as Cypher writes it after '$' unquoted: letters,
   digits and '_' (any non-ASCII letter too); $1 is a parameter too. */
static bool param_name_ok(const char *name)
{
    if (!*name)
        return false;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_' || *p >= 0x80))
            return false;
    return true;
}

/* A copy of a result's one value that outlives the result (NULL when out
   of memory). */
static strata_value *value_copy(const strata_value *v)
{
    strata_value *list = strata_value_list(&v, 1), *copy = NULL;
    if (list)
        strata_value_list_get(list, 0, &copy);
    strata_value_free(&list);
    return copy;
}

/* :param NAME => EXPR — EXPR is exactly one Cypher expression, evaluated
   read-only (strata_view_eval) with the parameters set so far and what an
   open transaction wrote; anything more than one expression is a
   SyntaxError, so EXPR can never run a clause. */
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
    if (!param_name_ok(name)) {
        session_error(s, "usage: :param NAME => EXPRESSION (NAME: letters, digits and _)");
        return;
    }
    strata_view *v = session_view(s);
    strata_value *params = v ? session_params(s) : NULL;
    strata_result *r = NULL;
    const strata_value *const *row;
    if (params)
        strata_view_eval(v, arrow + 2, params, &r);
    strata_value *val = NULL;
    if (r && strata_result_next(r, &row))
        val = value_copy(row[0]);
    if (r && strata_result_error(r)) {
        out_error_in(stdout, s->fmt, strata_result_error(r), arrow + 2);
        s->failed = true;
    } else if (!val) {
        session_fail(s, "OutOfMemory", "out of memory evaluating the parameter");
    } else if (session_param_set(s, name, val) != 0) {
        session_fail(s, "OutOfMemory", "out of memory setting the parameter");
    }
    strata_result_free(&r);
    strata_value_free(&params);
    strata_view_release(&v);
}

/* :params — every parameter, as `:param NAME => VALUE` lines (the value
   as Cypher writes it) or one JSON object {":params": {NAME: VALUE}}. */
static void cmd_params(session *s, char *arg)
{
    (void)arg;
    strata_view *v = session_view(s);
    if (!v) {
        session_error(s, strata_errmsg(s->g));
        return;
    }
    strbuf b = { 0 };
    bool json = out_is_json(s->fmt);
    if (json)
        strbuf_str(&b, "{\":params\": {");
    for (size_t i = 0; i < s->nparams; i++) {
        if (json) {
            if (i)
                strbuf_str(&b, ", ");
            out_json_string(&b, s->pnames[i], strlen(s->pnames[i]));
            strbuf_str(&b, ": ");
            out_json_value(&b, v, s->pvals[i]);
        } else {
            strbuf_str(&b, ":param ");
            strbuf_str(&b, s->pnames[i]);
            strbuf_str(&b, " => ");
            cypher_literal(&b, v, s->pvals[i]);
            strbuf_str(&b, "\n");
        }
    }
    if (json) {
        strbuf_str(&b, "}}");
        out_json_line(stdout, s->fmt, &b);
    } else if (b.failed) {
        strbuf_free(&b);
        session_fail(s, "OutOfMemory", "out of memory listing the parameters");
    } else {
        fputs(b.p ? b.p : "", stdout);
        strbuf_free(&b);
    }
    strata_view_release(&v);
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

static void cmd_schema(session *s, char *arg)
{
    (void)arg;
    inspect_schema(s);
}

static void cmd_stats(session *s, char *arg)
{
    (void)arg;
    inspect_stats(s);
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

/* ---- persistence -------------------------------------------------------- */

/* :save [FILE] — the graph, to FILE or the file last opened or saved.  A
   save writes the committed state, so inside a transaction it would leave
   the transaction's writes out: refused rather than done in part. */
static void cmd_save(session *s, char *arg)
{
    const char *path = *arg ? arg : s->path;
    if (!path) {
        session_error(s, "no file to save to: :save FILE");
        return;
    }
    if (strata_in_transaction(s->g)) {
        session_error(s, "a transaction is open and a save would leave its writes out: "
                         ":commit (or :rollback) first");
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
    strata_set_query_threads(g, s->threads);
    strata_graph_free(&s->g);
    s->g = g;
    free(s->path);
    s->path = copy;
}

/* :checkpoint — a new snapshot of a database opened on a path, and its
   log started afresh (strata_checkpoint). */
static void cmd_checkpoint(session *s, char *arg)
{
    (void)arg;
    if (!strata_is_durable(s->g)) {
        session_error(s, "the graph has no database path to checkpoint: start strata with "
                         "a database directory (strata DIR/)");
        return;
    }
    strata_status st = strata_checkpoint(s->g);
    if (st != STRATA_OK)
        session_fail(s, st == STRATA_ENOMEM ? "OutOfMemory"
                        : st == STRATA_EIO  ? "IOError"
                                            : "ClientError",
                     strata_errmsg(s->g));
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
    {"checkpoint", "", "snapshot a database opened on a directory and restart its log",
     cmd_checkpoint},
    {"branch", "NAME", "branch the graph in use (the program's own is main) and switch to it",
     cmd_branch},
    {"branches", "", "list the graphs: name, created from, size, private memory", cmd_branches},
    {"use", "NAME", "switch to the graph named NAME", cmd_use},
    {"diff", "NAME", "what the graph in use changed since the graph named NAME", cmd_diff},
    {"discard", "NAME", "free the graph named NAME (not the one in use)", cmd_discard},
};

size_t command_count(void) { return sizeof commands / sizeof commands[0]; }

const char *command_name(size_t i) { return i < command_count() ? commands[i].name : NULL; }

/* :help — the table above, as text or as {":help": [{"command", "arguments",
   "does"}, ...]}. */
static void cmd_help(session *s, char *arg)
{
    (void)arg;
    if (out_is_json(s->fmt)) {
        strbuf b = { 0 };
        strbuf_str(&b, "{\":help\": [");
        for (size_t i = 0; i < command_count(); i++) {
            char name[32];
            snprintf(name, sizeof name, ":%s", commands[i].name);
            strbuf_str(&b, i ? ", {\"command\": " : "{\"command\": ");
            out_json_string(&b, name, strlen(name));
            strbuf_str(&b, ", \"arguments\": ");
            out_json_string(&b, commands[i].args, strlen(commands[i].args));
            strbuf_str(&b, ", \"does\": ");
            out_json_string(&b, commands[i].help, strlen(commands[i].help));
            strbuf_str(&b, "}");
        }
        strbuf_str(&b, "]}");
        out_json_line(stdout, s->fmt, &b);
        return;
    }
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
