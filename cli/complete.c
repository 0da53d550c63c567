/* complete — the Tab key.
 *
 * The word before the cursor and the character before it decide what is
 * completed (complete.h).  One candidate: it is inserted whole (keywords
 * and commands with a trailing space, functions with "(").  Several: their
 * longest common prefix is inserted, and when that adds nothing they are
 * listed under the line, as shells do.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/complete.h"

static const char *const keywords[] = {
    "MATCH", "OPTIONAL", "WHERE", "RETURN", "WITH", "UNWIND", "ORDER", "BY", "SKIP",
    "LIMIT", "UNION", "ALL", "CREATE", "MERGE", "ON", "SET", "REMOVE", "DELETE", "DETACH",
    "CALL", "YIELD", "AS", "DISTINCT", "AND", "OR", "XOR", "NOT", "IN", "IS", "NULL",
    "TRUE", "FALSE", "CASE", "WHEN", "THEN", "ELSE", "END", "EXISTS", "INDEX",
    "CONSTRAINT", "FOR", "REQUIRE", "UNIQUE", "DROP", "EXPLAIN", "PROFILE", "LOAD", "CSV",
    "HEADERS", "FROM", "FIELDTERMINATOR", "STARTS", "ENDS", "CONTAINS", "ASC", "DESC",
    "ANY", "NONE", "SINGLE", "RANGE", "IF",
};

static const char *const functions[] = {
    "abs", "avg", "ceil", "coalesce", "collect", "count", "date", "datetime", "duration",
    "endNode", "exp", "floor", "head", "id", "keys", "labels", "last", "left", "length",
    "localdatetime", "localtime", "log", "lTrim", "max", "min", "nodes", "percentileCont",
    "percentileDisc", "properties", "rand", "range", "relationships", "replace", "reverse",
    "right", "round", "rTrim", "shortestPath", "sign", "size", "split", "sqrt", "startNode",
    "stDev", "substring", "sum", "tail", "time", "toBoolean", "toFloat", "toInteger",
    "toLower", "toString", "toUpper", "trim", "type",
};

typedef enum word_kind {
    WORD_KEYWORD, WORD_COMMAND, WORD_LABEL, WORD_RELTYPE, WORD_KEY, WORD_PARAM
} word_kind;

typedef struct matches {
    const char *items[512];
    size_t n;
    bool fold_case;        /* keywords and functions match in any case */
} matches;

static bool word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

static bool prefix_of(const char *prefix, size_t len, const char *name, bool fold)
{
    return fold ? strncasecmp(prefix, name, len) == 0 : strncmp(prefix, name, len) == 0;
}

static void add_match(matches *m, const char *prefix, size_t len, const char *name)
{
    if (m->n < sizeof m->items / sizeof m->items[0] && prefix_of(prefix, len, name, m->fold_case))
        m->items[m->n++] = name;
}

/* The innermost bracket open before pos: '(' or '[' (0 when none). */
static char open_bracket(const char *line, size_t pos)
{
    char stack[64];
    size_t depth = 0;
    for (size_t i = 0; i < pos; i++) {
        if ((line[i] == '(' || line[i] == '[') && depth < sizeof stack)
            stack[depth++] = line[i];
        else if ((line[i] == ')' || line[i] == ']') && depth)
            depth--;
    }
    return depth ? stack[depth - 1] : 0;
}

static word_kind classify(const completer *c, const char *line, size_t start)
{
    char before = start ? line[start - 1] : 0;
    if (before == ':') {
        size_t first = 0;
        while (line[first] == ' ' || line[first] == '\t')
            first++;
        if (first == start - 1 && !c->in_statement)
            return WORD_COMMAND;
        return open_bracket(line, start) == '[' ? WORD_RELTYPE : WORD_LABEL;
    }
    if (before == '|' && open_bracket(line, start) == '[')
        return WORD_RELTYPE;
    if (before == '.')
        return WORD_KEY;
    if (before == '$')
        return WORD_PARAM;
    return WORD_KEYWORD;
}

static void catalog_matches(session *s, strata_token_kind kind, const char *prefix, size_t len,
                            matches *m)
{
    strata_view *v = session_view(s);
    if (!v)
        return;
    /* names belong to the graph and outlive the view */
    for (strata_token t = 0; t < strata_token_count(v, kind); t++) {
        const char *name;
        if (strata_token_name(v, kind, t, &name) == STRATA_OK)
            add_match(m, prefix, len, name);
    }
    strata_view_release(&v);
}

static void find_matches(const completer *c, word_kind kind, const char *prefix, size_t len,
                         matches *m)
{
    switch (kind) {
    case WORD_COMMAND:
        for (size_t i = 0; i < command_count(); i++)
            add_match(m, prefix, len, command_name(i));
        break;
    case WORD_LABEL: catalog_matches(c->s, STRATA_LABEL, prefix, len, m); break;
    case WORD_RELTYPE: catalog_matches(c->s, STRATA_RELTYPE, prefix, len, m); break;
    case WORD_KEY: catalog_matches(c->s, STRATA_KEY, prefix, len, m); break;
    case WORD_PARAM:
        for (size_t i = 0; i < c->s->nparams; i++)
            add_match(m, prefix, len, c->s->pnames[i]);
        break;
    case WORD_KEYWORD:
        if (!len)
            break;   /* every keyword at once helps nobody */
        m->fold_case = true;
        for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
            add_match(m, prefix, len, keywords[i]);
        for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++)
            add_match(m, prefix, len, functions[i]);
        break;
    }
}

static bool is_keyword(const char *name)
{
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (keywords[i] == name)
            return true;
    return false;
}

/* Inserts name[len..] (a keyword in the case the person typed its start). */
static void insert_rest(EditLine *el, const char *prefix, size_t len, const char *name,
                        const char *suffix)
{
    char buf[512];
    size_t n = strlen(name);
    if (n >= sizeof buf - 2 || n < len)
        return;
    bool lower = is_keyword(name) && len && islower((unsigned char)prefix[0]);
    size_t k = 0;
    for (size_t i = len; i < n; i++)
        buf[k++] = lower ? (char)tolower((unsigned char)name[i]) : name[i];
    for (; *suffix && k < sizeof buf - 1; suffix++)
        buf[k++] = *suffix;
    buf[k] = '\0';
    if (k)
        el_insertstr(el, buf);
}

static size_t common_prefix(const matches *m)
{
    size_t n = strlen(m->items[0]);
    for (size_t i = 1; i < m->n; i++) {
        size_t k = 0;
        while (k < n && m->items[i][k] &&
               (m->fold_case ? tolower((unsigned char)m->items[i][k]) ==
                                   tolower((unsigned char)m->items[0][k])
                             : m->items[i][k] == m->items[0][k]))
            k++;
        n = k;
    }
    return n;
}

static void list_matches(const matches *m)
{
    fputc('\n', stdout);
    for (size_t i = 0; i < m->n; i++)
        printf("%s%s", m->items[i], i + 1 < m->n ? "  " : "\n");
    fflush(stdout);
}

static unsigned char complete_key(EditLine *el, int ch)
{
    (void)ch;
    completer *c = NULL;
    el_get(el, EL_CLIENTDATA, &c);
    const LineInfo *li = el_line(el);
    size_t pos = (size_t)(li->cursor - li->buffer), start = pos;
    while (start && word_char(li->buffer[start - 1]))
        start--;
    char line[1024];
    if (!c || pos >= sizeof line)
        return CC_REFRESH_BEEP;
    memcpy(line, li->buffer, pos);
    line[pos] = '\0';
    const char *prefix = line + start;
    size_t len = pos - start;
    word_kind kind = classify(c, line, start);
    matches m = { .n = 0 };
    find_matches(c, kind, prefix, len, &m);
    if (m.n == 0)
        return CC_REFRESH_BEEP;
    if (m.n == 1) {
        const char *suffix = kind == WORD_KEYWORD ? (is_keyword(m.items[0]) ? " " : "(")
                             : kind == WORD_COMMAND ? " " : "";
        insert_rest(el, prefix, len, m.items[0], suffix);
        return CC_REFRESH;
    }
    size_t common = common_prefix(&m);
    if (common > len) {
        char part[512];
        snprintf(part, sizeof part, "%.*s", (int)common, m.items[0]);
        insert_rest(el, prefix, len, part, "");
        return CC_REFRESH;
    }
    list_matches(&m);
    return CC_REDISPLAY;
}

void complete_install(EditLine *el, completer *c)
{
    el_set(el, EL_CLIENTDATA, c);
    /* the wide call: the narrow el_set copies both strings and never frees
       them (a leak LeakSanitizer reports) */
    el_wset(el, EL_ADDFN, L"strata-complete", L"complete a name", complete_key);
    el_set(el, EL_BIND, "^I", "strata-complete", NULL);
}
