/* batch — the non-interactive loop: lines are read one at a time, lines
   starting with ':' outside a statement are client commands, the rest is
   fed to the statement scanner.

   Nothing read is dropped in silence: a NUL byte in a line, a read error,
   and a string, quoted name or block comment still open at the end of the
   input are each an error naming the source and line, and end that input
   (what follows the fault cannot be trusted to split into the statements
   the author meant). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/batch.h"
#include "cli/commands.h"
#include "cli/scanner.h"

typedef struct batch {
    session *s;
    scanner sc;
    const char *source;   /* the input's name in error messages */
    bool named;           /* a file: a failed statement's report names it */
} batch;

static bool run_one(void *ctx, const char *text)
{
    batch *b = ctx;
    bool failed_before = b->s->failed;
    b->s->failed = false;
    session_run(b->s, text);
    /* A script's errors name where the statement is: the message's line
       and column count from its first line. */
    if (b->s->failed && b->named && b->s->fmt != FMT_JSONL && b->s->fmt != FMT_JSON)
        fprintf(stdout, "  in %s, statement starting on line %u\n", b->source,
                b->sc.first_line);
    b->s->failed = b->s->failed || failed_before;
    return !b->s->quit;
}

/* A fault in the input itself: "SOURCE:LINE: what", at line and column of
   the input. */
static void input_error(batch *b, const char *code, unsigned line, unsigned column,
                        const char *what)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s:%u: %s", b->source, line, what);
    session_fail_at(b->s, code, msg, line, column);
}

static bool is_command_line(const batch *b, const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    return *line == ':' && !scanner_pending(&b->sc) && !scanner_in_text(&b->sc);
}

/* The end of the input: a last statement without its ';' runs; one inside
   an open string, quoted name or comment is an error, not a guess. */
static void finish(batch *b)
{
    if (b->s->quit)
        return;
    if (scanner_in_text(&b->sc)) {
        const char *what = b->sc.quote == '`'  ? "a quoted name (`) that opens"
                           : b->sc.quote       ? "a string that opens"
                                               : "a /* comment that opens";
        char msg[160];
        snprintf(msg, sizeof msg, "%s on this line is never closed (the input ends inside it)",
                 what);
        input_error(b, "SyntaxError", b->sc.open_line, 1, msg);
    } else if (scanner_pending(&b->sc)) {
        run_one(b, b->sc.text.p);
    }
}

static void run_lines(batch *b, FILE *in)
{
    session *s = b->s;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    bool broken = false;
    errno = 0;
    while (!s->quit && (len = getline(&line, &cap, in)) >= 0) {
        const char *nul = memchr(line, '\0', (size_t)len);
        if (nul) {
            input_error(b, "SyntaxError", b->sc.line + 1, (unsigned)(nul - line) + 1,
                        "a NUL byte in the input (is it a text file?)");
            broken = true;
            break;
        }
        if (is_command_line(b, line)) {
            b->sc.line++;
            command_run(s, line);
        } else {
            scanner_feed(&b->sc, line, run_one, b);
        }
    }
    if (!broken && !s->quit && ferror(in)) {
        char msg[256];
        snprintf(msg, sizeof msg, "a read error after %u line%s: %s", b->sc.line,
                 b->sc.line == 1 ? "" : "s", strerror(errno ? errno : EIO));
        input_error(b, "IOError", b->sc.line + 1, 1, msg);
    } else if (!broken) {
        finish(b);
    }
    free(line);
}

void batch_run_stream(session *s, FILE *in, const char *source)
{
    batch b = { .s = s, .source = source ? source : "<stdin>", .named = source != NULL };
    run_lines(&b, in);
    scanner_free(&b.sc);
    if (s->failed && s->bail)
        s->quit = true;
}

void batch_run_string(session *s, const char *text, const char *source)
{
    batch b = { .s = s, .source = source };
    scanner_feed(&b.sc, text, run_one, &b);
    finish(&b);
    scanner_free(&b.sc);
    if (s->failed && s->bail)
        s->quit = true;
}

int batch_run_file(session *s, const char *path, bool quiet)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    const char *why = NULL;
    if (!f)
        why = strerror(errno);
    else if (fstat(fileno(f), &st) != 0)
        why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        why = "it is a directory";
    else if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
        why = "it is not a file or a pipe";
    if (why) {
        char msg[512];
        snprintf(msg, sizeof msg, "cannot read %s: %s", path, why);
        session_fail(s, "IOError", msg);
        if (f)
            fclose(f);
        if (s->bail)
            s->quit = true;
        return -1;
    }
    bool was_quiet = s->quiet;
    s->quiet = quiet;
    batch_run_stream(s, f, path);
    s->quiet = was_quiet;
    fclose(f);
    return 0;
}
