/* table — aligned tables.
 *
 * Every shown cell is rendered first (cypher_text), since a column's width
 * is its widest cell.  Widths are counted in code points, not bytes, so
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
#include "cli/table.h"

/* 6: narrower than this a cut cell shows too little to recognise. */
#define MIN_CAP 6

typedef struct cell {
    char *text;
    size_t width;   /* code points */
    bool number;    /* right-aligned */
} cell;

typedef struct grid {
    size_t ncols, nrows;   /* rows held (shown) */
    uint64_t hidden;       /* rows counted, not shown */
    cell *cells;           /* nrows * ncols */
    size_t *widths;        /* per column, after the cap */
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

/* Control characters (a newline in a string) would break the row. */
static void flatten_controls(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = ' ';
}

static int make_cell(cell *c, strata_view *v, const strata_value *val)
{
    strbuf b = { 0 };
    cypher_text(&b, v, val);
    if (b.failed || !(c->text = b.p ? b.p : strdup(""))) {
        strbuf_free(&b);
        return -1;
    }
    flatten_controls(c->text);
    c->width = utf8_width(c->text);
    strata_type t = strata_value_type(val);
    c->number = t == STRATA_INT || t == STRATA_FLOAT;
    return 0;
}

/* Reads r: the first max_rows rows rendered, the others counted. */
static int grid_fill(grid *g, strata_result *r, size_t max_rows)
{
    strata_view *v = strata_result_view(r);
    const strata_value *const *row;
    size_t cap = 0;
    while (strata_result_next(r, &row)) {
        if (max_rows && g->nrows >= max_rows) {
            g->hidden++;
            continue;
        }
        if (g->nrows == cap) {
            cap = cap ? cap * 2 : 16;
            cell *c = realloc(g->cells, cap * (g->ncols ? g->ncols : 1) * sizeof *c);
            if (!c)
                return -1;
            g->cells = c;
        }
        for (size_t i = 0; i < g->ncols; i++)
            if (make_cell(&g->cells[g->nrows * g->ncols + i], v, row[i]) != 0) {
                while (i--)
                    free(g->cells[g->nrows * g->ncols + i].text);
                return -1;
            }
        g->nrows++;
    }
    return 0;
}

static void grid_free(grid *g)
{
    for (size_t i = 0; i < g->nrows * g->ncols; i++)
        free(g->cells[i].text);
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

static int grid_widths(grid *g, const char *const *names, size_t term_width)
{
    g->widths = calloc(g->ncols ? g->ncols : 1, sizeof *g->widths);
    if (!g->widths)
        return -1;
    for (size_t i = 0; i < g->ncols; i++) {
        g->widths[i] = utf8_width(names[i]);
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

static void print_header(FILE *f, const grid *g, const char *const *names)
{
    print_rule(f, g);
    for (size_t i = 0; i < g->ncols; i++) {
        fputs("| ", f);
        print_fitted(f, names[i], utf8_width(names[i]), g->widths[i], false);
        fputc(' ', f);
    }
    fputs("|\n", f);
    print_rule(f, g);
}

static void print_rows(FILE *f, const grid *g)
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
    if (g->nrows)
        print_rule(f, g);
}

/* "N rows, M ms", the rows not shown, then the nonzero update counters. */
static void print_footer(FILE *f, const grid *g, const strata_query_stats *st, double ms,
                         bool timing)
{
    uint64_t total = g->nrows + g->hidden;
    fprintf(f, "%llu row%s", (unsigned long long)total, total == 1 ? "" : "s");
    if (timing)
        fprintf(f, ", %.2f ms", ms);
    if (g->hidden)
        fprintf(f, " (first %zu shown, %llu not shown; :rows N changes this)", g->nrows,
                (unsigned long long)g->hidden);
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

bool table_print(FILE *f, strata_result *r, double t0, const table_opts *o)
{
    const char *const *names;
    grid g = { 0 };
    g.ncols = strata_result_columns(r, &names);
    strata_query_stats st;
    strata_result_stats(r, &st);
    int filled = grid_fill(&g, r, o->max_rows);
    double ms = out_now_ms() - t0;
    if (strata_result_error(r)) {
        grid_free(&g);
        return false;
    }
    if (filled != 0 || grid_widths(&g, names, o->width) != 0) {
        fprintf(f, "OutOfMemory: out of memory rendering the result\n");
    } else {
        if (g.ncols)
            print_header(f, &g, names);
        print_rows(f, &g);
        print_footer(f, &g, &st, ms, o->timing);
    }
    grid_free(&g);
    fflush(f);
    return true;
}
