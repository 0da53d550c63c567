/* batch — the non-interactive loop: lines are read one at a time, lines
   starting with ':' outside a statement are client commands, the rest is
   fed to the statement scanner. */
#include <stdlib.h>

#include "cli/batch.h"
#include "cli/commands.h"
#include "cli/scanner.h"

typedef struct batch {
    session *s;
    scanner sc;
    const char *source;
} batch;

static bool run_one(void *ctx, const char *text)
{
    batch *b = ctx;
    bool failed_before = b->s->failed;
    b->s->failed = false;
    session_run(b->s, text);
    /* A script's errors name where the statement is: the message's line
       and column count from its first line. */
    if (b->s->failed && b->source && b->s->fmt != FMT_JSONL && b->s->fmt != FMT_JSON)
        fprintf(stdout, "  in %s, statement starting on line %u\n", b->source,
                b->sc.first_line);
    b->s->failed = b->s->failed || failed_before;
    return !b->s->quit;
}

static bool is_command_line(const batch *b, const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    return *line == ':' && !scanner_pending(&b->sc) && !scanner_in_text(&b->sc);
}

void batch_run_stream(session *s, FILE *in, const char *source)
{
    batch b = { .s = s, .source = source };
    char *line = NULL;
    size_t cap = 0;
    while (!s->quit && getline(&line, &cap, in) >= 0) {
        if (is_command_line(&b, line)) {
            b.sc.line++;
            command_run(s, line);
        } else {
            scanner_feed(&b.sc, line, run_one, &b);
        }
    }
    /* a last statement without its ';' */
    if (!s->quit && scanner_pending(&b.sc) && !b.sc.quote)
        run_one(&b, b.sc.text.p);
    free(line);
    scanner_free(&b.sc);
}

void batch_run_string(session *s, const char *text)
{
    batch b = { .s = s };
    scanner_feed(&b.sc, text, run_one, &b);
    if (!s->quit && scanner_pending(&b.sc))
        run_one(&b, b.sc.text.p);
    scanner_free(&b.sc);
}

int batch_run_init(session *s, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    bool quiet = s->quiet;
    s->quiet = true;
    batch_run_stream(s, f, path);
    s->quiet = quiet;
    fclose(f);
    return 0;
}
