/* table — aligned tables.
 *
 * A column's width is its widest cell, so cells are rendered (cypher_text)
 * before the table is drawn — but only the first TABLE_BATCH rows: a
 * table of ten million rows would otherwise sit whole in memory before
 * its first line.  The widths come from the header and that batch; the
 * batch is drawn, then each later row is rendered and drawn as it is read.
 * A later cell wider than its column widens the column from that row on,
 * under a fresh rule line, so no text is lost and the rows above keep
 * their alignment (on a terminal, whose width is fixed, it is cut with
 * "…" instead, as every cell too wide for the terminal is).  Widths are counted in code points, not bytes, so
 * names in any script line up (wide East Asian characters still take two
 * columns on most terminals; that is not measured).  When the natural
 * widths do not fit the terminal, one cap applies to every column — the
 * largest that fits — so narrow columns keep their width and only the wide
 * ones are cut, each cut cell ending in "…".
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cypher_text.h"
#include "cli/strbuf.h"
#include "cli/output.h"
#include "cli/printable.h"
#include "cli/table.h"

/* 6: narrower than this a cut cell shows too little to recognise. */
#define MIN_CAP 6
/* 1000: the REPL's default row cap, so a table there is aligned as a
   whole; in batch mode the rows held at once (cells of a few dozen bytes:
   tens of KiB). */
#define TABLE_BATCH 1000

typedef struct cell {
    char *text;
    size_t width;   /* code points */
    bool number;    /* right-aligned */
} cell;

typedef struct grid {
    size_t ncols, nrows;   /* rows held (rendered, not yet drawn) */
    uint64_t shown;        /* rows drawn */
    uint64_t hidden;       /* rows counted, not shown */
    cell *cells;           /* nrows * ncols */
    size_t cap;            /* rows cells has room for */
    size_t *widths;        /* per column, after the cap */
    bool fixed;            /* a terminal: widths never grow past the first batch */
} grid;

size_t table_terminal_width(int fd)
{
    struct winsize ws;
    if (!isatty(fd) || ioctl(fd, TIOCGWINSZ, &ws) != 0)
        return 0;
    return ws.ws_col;
}

static size_t utf8_width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* The cell's text: control characters (a newline, U+0000, ESC) would
   break the row, cut the text or reach the terminal, so they are replaced
   (printable.h); the rest of the string is kept whole. */
static int make_cell(cell *c, strata_view *v, const strata_value *val)
{
    strbuf raw = { 0 }, shown = { 0 };
    cypher_text(&raw, v, val);
    printable_put(&shown, raw.p ? raw.p : "", raw.n, false);
    strbuf_free(&raw);
    if (raw.failed || shown.failed || !(c->text = shown.p ? shown.p : strdup(""))) {
        strbuf_free(&shown);
        return -1;
    }
    c->width = utf8_width(c->text);
    strata_type t = strata_value_type(val);
    c->number = t == STRATA_INT || t == STRATA_FLOAT;
    return 0;
}

static void rows_free(grid *g)
{
    for (size_t i = 0; i < g->nrows * g->ncols; i++)
        free(g->cells[i].text);
    g->nrows = 0;
}

/* Renders one more row into the grid. */
static int grid_add(grid *g, strata_view *v, const strata_value *const *row)
{
    if (g->nrows == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        cell *c = realloc(g->cells, cap * (g->ncols ? g->ncols : 1) * sizeof *c);
        if (!c)
            return -1;
        g->cells = c;
        g->cap = cap;
    }
    for (size_t i = 0; i < g->ncols; i++)
        if (make_cell(&g->cells[g->nrows * g->ncols + i], v, row[i]) != 0) {
            while (i--)
                free(g->cells[g->nrows * g->ncols + i].text);
            return -1;
        }
    g->nrows++;
    return 0;
}

/* Reads up to limit rows of r into the grid, counting those past max_rows
   (the first max_rows shown in all); 1 when r ended, 0 when the limit was
   reached, -1 when out of memory. */
static int grid_fill(grid *g, strata_result *r, size_t limit, size_t max_rows)
{
    strata_view *v = strata_result_view(r);
    const strata_value *const *row;
    while (g->nrows < limit) {
        if (!strata_result_next(r, &row))
            return 1;
        if (max_rows && g->shown + g->nrows >= max_rows)
            g->hidden++;
        else if (grid_add(g, v, row) != 0)
            return -1;
    }
    return 0;
}

static void grid_free(grid *g)
{
    rows_free(g);
    free(g->cells);
    free(g->widths);
}

/* The largest cap with sum(min(width, cap)) within the room left by the
   borders ("| " and " |" around each cell). */
static size_t column_cap(const size_t *natural, size_t n, size_t term_width)
{
    size_t total = 0, widest = 0;
    for (size_t i = 0; i < n; i++) {
        total += natural[i];
        if (natural[i] > widest)
            widest = natural[i];
    }
    size_t borders = 3 * n + 1;
    if (!term_width || total + borders <= term_width)
        return widest;
    size_t room = term_width > borders ? term_width - borders : 0;
    size_t cap = widest;
    while (cap > MIN_CAP) {
        size_t sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += natural[i] < cap ? natural[i] : cap;
        if (sum <= room)
            break;
        cap--;
    }
    return cap;
}

static int grid_widths(grid *g, const cell *heads, size_t term_width)
{
    g->widths = calloc(g->ncols ? g->ncols : 1, sizeof *g->widths);
    if (!g->widths)
        return -1;
    for (size_t i = 0; i < g->ncols; i++) {
        g->widths[i] = heads[i].width;
        for (size_t r = 0; r < g->nrows; r++)
            if (g->cells[r * g->ncols + i].width > g->widths[i])
                g->widths[i] = g->cells[r * g->ncols + i].width;
    }
    size_t cap = column_cap(g->widths, g->ncols, term_width);
    for (size_t i = 0; i < g->ncols; i++)
        if (g->widths[i] > cap)
            g->widths[i] = cap;
    return 0;
}

/* Prints text in exactly width columns: padded, or cut with "…". */
static void print_fitted(FILE *f, const char *text, size_t text_width, size_t width,
                         bool right)
{
    if (text_width <= width) {
        if (right)
            fprintf(f, "%*s%s", (int)(width - text_width), "", text);
        else
            fprintf(f, "%s%*s", text, (int)(width - text_width), "");
        return;
    }
    size_t shown = 0;
    const char *p = text;
    while (*p && shown < width - 1) {
        p++;
        while (((unsigned char)*p & 0xC0) == 0x80)
            p++;
        shown++;
    }
    fprintf(f, "%.*s\xe2\x80\xa6", (int)(p - text), text);
}

static void print_rule(FILE *f, const grid *g)
{
    for (size_t i = 0; i < g->ncols; i++) {
        fputc('+', f);
        for (size_t k = 0; k < g->widths[i] + 2; k++)
            fputc('-', f);
    }
    fputs("+\n", f);
}

static void print_header(FILE *f, const grid *g, const cell *heads)
{
    print_rule(f, g);
    for (size_t i = 0; i < g->ncols; i++) {
        fputs("| ", f);
        print_fitted(f, heads[i].text, heads[i].width, g->widths[i], false);
        fputc(' ', f);
    }
    fputs("|\n", f);
    print_rule(f, g);
}

/* Draws the rows held and lets them go. */
static void print_rows(FILE *f, grid *g)
{
    for (size_t r = 0; r < g->nrows; r++) {
        for (size_t i = 0; i < g->ncols; i++) {
            const cell *c = &g->cells[r * g->ncols + i];
            fputs("| ", f);
            print_fitted(f, c->text, c->width, g->widths[i], c->number);
            fputc(' ', f);
        }
        fputs("|\n", f);
    }
    g->shown += g->nrows;
    rows_free(g);
}

/* Widens the columns a held row does not fit (off a terminal); a rule
   line marks where the widths change. */
static void widen_for_row(FILE *f, grid *g)
{
    bool wider = false;
    for (size_t i = 0; i < g->ncols && !g->fixed; i++)
        if (g->cells[i].width > g->widths[i]) {
            g->widths[i] = g->cells[i].width;
            wider = true;
        }
    if (wider)
        print_rule(f, g);
}

/* "N rows, M ms", the rows not shown, then the nonzero update counters. */
static void print_footer(FILE *f, const grid *g, const strata_query_stats *st, double ms,
                         bool timing)
{
    uint64_t total = g->shown + g->hidden;
    fprintf(f, "%llu row%s", (unsigned long long)total, total == 1 ? "" : "s");
    if (timing)
        fprintf(f, ", %.2f ms", ms);
    if (g->hidden)
        fprintf(f, " (first %llu shown, %llu not shown; :rows N changes this)",
                (unsigned long long)g->shown, (unsigned long long)g->hidden);
    const struct { const char *name; uint64_t n; } counters[] = {
        {"nodes created", st->nodes_created},
        {"nodes deleted", st->nodes_deleted},
        {"relationships created", st->relationships_created},
        {"relationships deleted", st->relationships_deleted},
        {"properties set", st->properties_set},
        {"labels added", st->labels_added},
        {"labels removed", st->labels_removed},
    };
    const char *sep = "; ";
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        if (counters[i].n) {
            fprintf(f, "%s%s: %llu", sep, counters[i].name, (unsigned long long)counters[i].n);
            sep = ", ";
        }
    fputc('\n', f);
}

/* The header names, as cells (a name may hold any character). */
static int header_widths(grid *g, const char *const *names, cell *heads)
{
    for (size_t i = 0; i < g->ncols; i++) {
        strbuf b = { 0 };
        printable_put(&b, names[i], strlen(names[i]), false);
        if (b.failed || !(heads[i].text = b.p ? b.p : strdup(""))) {
            strbuf_free(&b);
            return -1;
        }
        heads[i].width = utf8_width(heads[i].text);
    }
    return 0;
}

/* The first batch drawn with the header; then each later row as it comes. */
static out_status draw(FILE *f, grid *g, strata_result *r, cell *heads, const table_opts *o)
{
    int filled = grid_fill(g, r, TABLE_BATCH, o->max_rows);
    if (strata_result_error(r))
        return OUT_FAILED;   /* nothing drawn yet */
    if (filled < 0 || grid_widths(g, heads, o->width) != 0)
        return OUT_REPORTED;
    if (g->ncols)
        print_header(f, g, heads);
    print_rows(f, g);
    while (filled == 0) {
        filled = grid_fill(g, r, 1, o->max_rows);
        if (filled < 0)
            return OUT_REPORTED;
        if (g->nrows)
            widen_for_row(f, g);
        print_rows(f, g);
    }
    if (g->shown)
        print_rule(f, g);
    return strata_result_error(r) ? OUT_FAILED : OUT_PRINTED;
}

out_status table_print(FILE *f, strata_result *r, double t0, const table_opts *o)
{
    const char *const *names;
    grid g = { 0 };
    g.ncols = strata_result_columns(r, &names);
    g.fixed = o->width != 0;
    strata_query_stats st;
    strata_result_stats(r, &st);
    cell *heads = calloc(g.ncols ? g.ncols : 1, sizeof *heads);
    out_status done = OUT_REPORTED;
    if (heads && header_widths(&g, names, heads) == 0)
        done = draw(f, &g, r, heads, o);
    if (done == OUT_PRINTED)
        print_footer(f, &g, &st, out_now_ms() - t0, o->timing);
    else if (done == OUT_REPORTED)
        fprintf(f, "OutOfMemory: out of memory rendering the result\n");
    for (size_t i = 0; heads && i < g.ncols; i++)
        free(heads[i].text);
    free(heads);
    grid_free(&g);
    fflush(f);
    return done;
}
