/* repl — the interactive loop.
 *
 * Each line comes from libedit's el_gets.  A line starting with ':' while
 * no statement is pending is a client command; other lines go to the
 * statement scanner, which runs each statement as its ';' arrives.  The
 * lines typed from an idle prompt until the scanner is idle again make one
 * history entry (joined by spaces), so a multi-line statement comes back
 * whole with the up arrow.  History is saved after every entry, in the
 * user's home (never the working directory).
 *
 * Ctrl-C: the SIGINT handler (interrupt.c) has no SA_RESTART, so the read
 * inside el_gets fails with EINTR and el_gets returns NULL; the pending
 * flag tells that apart from end of file, and the statement being typed is
 * dropped.  libedit's own signal handling stays off (EL_SIGNAL 0): it would
 * re-raise the signal to the whole process group.
 */
#include <errno.h>
#include <locale.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <histedit.h>

#include "cli/commands.h"
#include "cli/complete.h"
#include "cli/interrupt.h"
#include "cli/repl.h"
#include "cli/scanner.h"
#include "cli/table.h"

#define PROMPT "strata> "
#define CONTINUATION "   ...> "

typedef struct repl {
    session *s;
    scanner sc;
    EditLine *el;
    History *hist;
    char *hist_path;        /* NULL: history kept for this run only */
    strbuf entry;           /* the lines of the history entry being typed */
    completer comp;
} repl;

static char *prompt_of(EditLine *el)
{
    completer *c = NULL;   /* the client data (complete_install) */
    el_get(el, EL_CLIENTDATA, &c);
    return c && c->in_statement ? CONTINUATION : PROMPT;
}

/* $STRATA_HISTORY, else .strata_history in the home directory; NULL when
   there is no home to put it in. */
static char *history_path(void)
{
    const char *env = getenv(REPL_HISTORY_ENV);
    if (env && *env)
        return strdup(env);
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (!home || !*home)
        return NULL;
    size_t n = strlen(home) + sizeof "/.strata_history";
    char *path = malloc(n);
    if (path)
        snprintf(path, n, "%s/.strata_history", home);
    return path;
}

static int history_open(repl *r)
{
    HistEvent ev;
    if (!(r->hist = history_init()))
        return -1;
    history(r->hist, &ev, H_SETSIZE, 1000);
    history(r->hist, &ev, H_SETUNIQUE, 1);
    r->hist_path = history_path();
    if (r->hist_path)
        history(r->hist, &ev, H_LOAD, r->hist_path);   /* absent the first time */
    return 0;
}

static void history_add(repl *r)
{
    HistEvent ev;
    if (text_blank(r->entry.p))
        return;
    history(r->hist, &ev, H_ENTER, r->entry.p);
    if (r->hist_path)
        history(r->hist, &ev, H_SAVE, r->hist_path);
}

static void entry_clear(repl *r)
{
    r->entry.n = 0;
    if (r->entry.p)
        r->entry.p[0] = '\0';
}

/* Adds a line to the pending history entry, without its newline. */
static void entry_append(repl *r, const char *line)
{
    size_t len = strcspn(line, "\r\n");
    if (r->entry.n)
        strbuf_put(&r->entry, " ", 1);
    strbuf_put(&r->entry, line, len);
}

static int editor_open(repl *r)
{
    setlocale(LC_CTYPE, "");
    if (!(r->el = el_init("strata", stdin, stdout, stderr)))
        return -1;
    r->comp = (completer){ .s = r->s };
    el_set(r->el, EL_EDITOR, "emacs");
    el_set(r->el, EL_SIGNAL, 0);
    el_set(r->el, EL_HIST, history, r->hist);
    el_set(r->el, EL_PROMPT, prompt_of);
    complete_install(r->el, &r->comp);
    el_source(r->el, NULL);   /* the user's ~/.editrc, if any */
    return 0;
}

static bool run_statement(void *ctx, const char *text)
{
    repl *r = ctx;
    r->s->width = table_terminal_width(STDOUT_FILENO);
    session_run(r->s, text);
    return !r->s->quit;
}

static bool is_command(const repl *r, const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    return *line == ':' && !scanner_pending(&r->sc) && !scanner_in_text(&r->sc);
}

static void run_command(repl *r, const char *line)
{
    char *copy = strdup(line);
    if (!copy) {
        session_error(r->s, "out of memory");
        return;
    }
    r->s->width = table_terminal_width(STDOUT_FILENO);
    command_run(r->s, copy);
    free(copy);
}

/* Ctrl-C while typing: the statement so far is dropped. */
static void cancel_statement(repl *r)
{
    fputs("^C\n", stdout);
    fflush(stdout);
    scanner_reset(&r->sc);
    entry_clear(r);
}

static void handle_line(repl *r, const char *line)
{
    entry_append(r, line);
    if (is_command(r, line))
        run_command(r, line);
    else
        scanner_feed(&r->sc, line, run_statement, r);
    if (!scanner_pending(&r->sc) && !scanner_in_text(&r->sc)) {
        history_add(r);
        entry_clear(r);
    }
    r->comp.in_statement = scanner_pending(&r->sc) || scanner_in_text(&r->sc);
}

static void loop(repl *r)
{
    while (!r->s->quit) {
        interrupt_clear();
        int count = 0;
        const char *line = el_gets(r->el, &count);
        if (interrupt_pending()) {
            cancel_statement(r);
            r->comp.in_statement = false;
            continue;
        }
        if (!line || count <= 0) {
            if (count < 0 && errno == EINTR)
                continue;
            fputc('\n', stdout);   /* Ctrl-D: leave on a fresh line */
            break;
        }
        handle_line(r, line);
    }
}

void repl_run(session *s)
{
    repl r = { .s = s };
    s->max_rows = REPL_DEFAULT_ROWS;
    interrupt_install();
    if (history_open(&r) != 0 || editor_open(&r) != 0) {
        fprintf(stderr, "strata: cannot start the line editor\n");
        s->failed = true;
    } else {
        printf("strata %s — Cypher statements end with ';', :help lists the commands\n",
               STRATA_VERSION_TEXT);
        loop(&r);
        /* a person saw each error as it came: leaving is not a failure */
        s->failed = false;
    }
    if (r.el)
        el_end(r.el);
    if (r.hist)
        history_end(r.hist);
    free(r.hist_path);
    strbuf_free(&r.entry);
    scanner_free(&r.sc);
}
