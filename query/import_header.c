/* import_header — header columns and typed fields (import_header.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/import_header.h"
#include "storage/mem.h"
#include "storage/value.h"

static const struct {
    const char *word;
    column_kind kind;
    column_type type;
} column_words[] = {
    {"string", COL_PROPERTY, TYPE_STRING}, {"char", COL_PROPERTY, TYPE_STRING},
    {"int", COL_PROPERTY, TYPE_INT},       {"long", COL_PROPERTY, TYPE_INT},
    {"short", COL_PROPERTY, TYPE_INT},     {"byte", COL_PROPERTY, TYPE_INT},
    {"float", COL_PROPERTY, TYPE_FLOAT},   {"double", COL_PROPERTY, TYPE_FLOAT},
    {"boolean", COL_PROPERTY, TYPE_BOOL},  {"ID", COL_ID, TYPE_STRING},
    {"LABEL", COL_LABEL, TYPE_STRING},     {"START_ID", COL_START_ID, TYPE_STRING},
    {"END_ID", COL_END_ID, TYPE_STRING},   {"TYPE", COL_TYPE, TYPE_STRING},
    {"IGNORE", COL_IGNORE, TYPE_STRING},
};

/* A NUL-terminated copy of s[0..len) from the scratch context (len + 1
   bytes), or NULL when out of memory. */
static char *copy_name(const char *s, size_t len)
{
    char *c = mem_alloc(mem_scratch(), len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

static void free_name(char *s)
{
    if (s)
        mem_free(mem_scratch(), s);
}

const char *id_space_name(const id_spaces *s, uint32_t i)
{
    return i == 0 ? "global" : s->names[i];
}

/* The index of id space `name` (len bytes), added when new; -1 when out of
   memory. */
static long id_space(id_spaces *s, const char *name, size_t len)
{
    if (len == 0)
        return 0;
    for (size_t i = 1; i < s->n; i++)
        if (strlen(s->names[i]) == len && memcmp(s->names[i], name, len) == 0)
            return (long)i;
    if (s->n + 1 >= s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4;
        char **names = mem_realloc(mem_scratch(), s->names, cap * sizeof *names);
        if (!names)
            return -1;
        s->names = names;
        s->cap = cap;
    }
    if (s->n == 0) {
        s->names[0] = NULL;   /* slot 0: the global space, unnamed */
        s->n = 1;
    }
    if (!(s->names[s->n] = copy_name(name, len)))
        return -1;
    return (long)s->n++;
}

void id_spaces_free(id_spaces *s)
{
    for (size_t i = 1; i < s->n; i++)
        free_name(s->names[i]);
    if (s->names)
        mem_free(mem_scratch(), s->names);
    memset(s, 0, sizeof *s);
}

void header_free(header *h)
{
    if (h->cols) {
        for (size_t i = 0; i < h->n; i++)
            free_name(h->cols[i].name);
        mem_free(mem_scratch(), h->cols);
    }
    memset(h, 0, sizeof *h);
}

/* Splits "name:TYPE(Space)[]" into its parts and fills c; -1 with a
   message. */
/* Splits "name:TYPE(Space)[]" into its parts and fills c; -1 with a
   message for a bad column, -2 when out of memory. */
static int parse_column(column *c, const char *text, id_spaces *spaces, char *err, size_t errlen)
{
    const char *colon = strrchr(text, ':');
    size_t name_len = colon ? (size_t)(colon - text) : strlen(text);
    c->kind = COL_PROPERTY;
    c->type = TYPE_STRING;
    if (!(c->name = copy_name(text, name_len))) {
        snprintf(err, errlen, "out of memory");
        return -2;
    }
    if (!colon)
        return 0;
    const char *type = colon + 1, *paren = strchr(type, '(');
    size_t type_len = paren ? (size_t)(paren - type) : strlen(type);
    const char *space = NULL;
    size_t space_len = 0;
    if (paren) {
        const char *close = strchr(paren, ')');
        if (!close || close[1] != '\0') {
            snprintf(err, errlen, "column '%s': an id space is written (Name) at the end", text);
            return -1;
        }
        space = paren + 1;
        space_len = (size_t)(close - space);
    } else if (type_len >= 2 && strcmp(type + type_len - 2, "[]") == 0) {
        c->array = true;
        type_len -= 2;
    }
    size_t k = 0, nwords = sizeof column_words / sizeof *column_words;
    while (k < nwords && !(strlen(column_words[k].word) == type_len &&
                           strncasecmp(column_words[k].word, type, type_len) == 0))
        k++;
    if (k == nwords) {
        snprintf(err, errlen,
                 "column '%s': unknown type '%.*s' (string, int, long, float, double, boolean "
                 "and their arrays; ID, LABEL, START_ID, END_ID, TYPE, IGNORE)",
                 text, (int)type_len, type);
        return -1;
    }
    c->kind = column_words[k].kind;
    c->type = column_words[k].type;
    bool takes_space = c->kind == COL_ID || c->kind == COL_START_ID || c->kind == COL_END_ID;
    if ((space && !takes_space) || (c->array && c->kind != COL_PROPERTY)) {
        snprintf(err, errlen, "column '%s': %s", text,
                 space ? "only ID, START_ID and END_ID take an id space"
                       : "only property columns can be arrays");
        return -1;
    }
    long sp = takes_space ? id_space(spaces, space, space_len) : 0;
    if (sp < 0) {
        snprintf(err, errlen, "out of memory");
        return -2;
    }
    c->space = (uint32_t)sp;
    return 0;
}

/* Records column i as the one of its kind; a second one is an error. */
static int claim(long *slot, size_t i, const char *text, char *err, size_t errlen)
{
    if (*slot >= 0) {
        snprintf(err, errlen, "column '%s': the header has that kind of column twice", text);
        return -1;
    }
    *slot = (long)i;
    return 0;
}

static int check_kinds(const header *h, bool rels, char *err, size_t errlen)
{
    if (rels && (h->id >= 0 || h->label >= 0)) {
        snprintf(err, errlen, "a relationship file has no ID or LABEL column");
        return -1;
    }
    if (!rels && (h->start >= 0 || h->end >= 0 || h->type >= 0)) {
        snprintf(err, errlen, "a node file has no START_ID, END_ID or TYPE column");
        return -1;
    }
    if (rels && (h->start < 0 || h->end < 0)) {
        snprintf(err, errlen, "a relationship file needs a :START_ID and an :END_ID column");
        return -1;
    }
    return 0;
}

int header_parse(header *h, const csv_reader *r, bool rels, id_spaces *spaces, strata_graph *g,
                 char *err, size_t errlen, size_t *bad_col, strata_status *status)
{
    memset(h, 0, sizeof *h);
    h->id = h->label = h->start = h->end = h->type = -1;
    *bad_col = 0;
    *status = STRATA_EINVAL;
    size_t n = csv_nfields(r);
    if (!(h->cols = mem_calloc(mem_scratch(), mem_array_size(n, sizeof *h->cols)))) {
        snprintf(err, errlen, "out of memory");
        *status = STRATA_ENOMEM;
        return -1;
    }
    h->n = n;
    for (size_t i = 0; i < n; i++) {
        *bad_col = i + 1;
        column *c = &h->cols[i];
        const char *text = csv_get(r, i).ptr;
        int rc = parse_column(c, text, spaces, err, errlen);
        if (rc != 0) {
            *status = rc == -2 ? STRATA_ENOMEM : STRATA_EINVAL;
            return -1;
        }
        long *slot = c->kind == COL_ID         ? &h->id
                     : c->kind == COL_LABEL    ? &h->label
                     : c->kind == COL_START_ID ? &h->start
                     : c->kind == COL_END_ID   ? &h->end
                     : c->kind == COL_TYPE     ? &h->type
                                               : NULL;
        if (slot && claim(slot, i, text, err, errlen) != 0)
            return -1;
        bool stored = c->kind == COL_PROPERTY || c->kind == COL_ID;
        if (c->kind == COL_PROPERTY && !c->name[0]) {
            snprintf(err, errlen, "column %zu ('%s'): a property column needs a name", i + 1,
                     text);
            return -1;
        }
        strata_status st;
        if (stored && c->name[0] &&
            (st = strata_token_intern(g, STRATA_KEY, c->name, &c->key)) != STRATA_OK) {
            snprintf(err, errlen, "column '%s': %s", text, strata_errmsg(g));
            *status = st;
            return -1;
        }
    }
    *bad_col = 0;
    return check_kinds(h, rels, err, errlen);
}

/* ---- fields --------------------------------------------------------- */

static bool is_space(char ch) { return ch == ' ' || ch == '\t'; }

static void trim(const char **s, size_t *len)
{
    while (*len && is_space(**s))
        (*s)++, (*len)--;
    while (*len && is_space((*s)[*len - 1]))
        (*len)--;
}

static int parse_int(const char *s, size_t len, int64_t *out)
{
    trim(&s, &len);
    bool neg = len && s[0] == '-';
    size_t i = len && (s[0] == '-' || s[0] == '+');
    if (i == len)
        return -1;
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (limit - d) / 10)
            return -2;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

#ifdef STRATA_TESTING
bool import_fast_float_for_tests = true;
#define FAST_FLOAT_ON import_fast_float_for_tests
#else
#define FAST_FLOAT_ON true
#endif

/* A plain decimal — sign, digits, a point, digits, no exponent, at most 15
   digits in all (e.g. "-12.75") — as strtod reads it, without strtod's
   few hundred instructions: digits and power of ten are then exact
   doubles (below 2^53, 10^15), so their one rounded division is the
   correctly rounded value strtod gives (Clinger's fast path).  false for
   anything else, which goes to strtod. */
static bool plain_decimal(const char *s, size_t len, double *out)
{
    static const double tens[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    size_t i = len && (s[0] == '-' || s[0] == '+');
    uint64_t digits = 0;
    size_t ndigits = 0, frac = 0;
    bool point = false;
    for (; i < len; i++) {
        if (s[i] >= '0' && s[i] <= '9') {
            digits = digits * 10 + (uint64_t)(s[i] - '0');
            ndigits++;
            frac += point;
        } else if (s[i] == '.' && !point) {
            point = true;
        } else {
            return false;
        }
    }
    if (ndigits == 0 || ndigits > 15)
        return false;
    double v = (double)digits / tens[frac];
    *out = s[0] == '-' ? -v : v;
    return true;
}

static int parse_float(const char *s, size_t len, double *out)
{
    trim(&s, &len);
    if (FAST_FLOAT_ON && plain_decimal(s, len, out))
        return 0;
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    *out = strtod(buf, &end);
    if (end != buf + len)
        return -1;
    return errno == ERANGE && isinf(*out) ? -2 : 0;
}

static int parse_bool(const char *s, size_t len, bool *out)
{
    trim(&s, &len);
    if (len == 4 && strncasecmp(s, "true", 4) == 0)
        *out = true;
    else if (len == 5 && strncasecmp(s, "false", 5) == 0)
        *out = false;
    else
        return -1;
    return 0;
}

static const char *type_name(column_type t)
{
    static const char *const names[] = {"string", "int", "float", "boolean"};
    return names[t];
}

/* One scalar of c's type from s[0..len) into *out (owned); s is UTF-8
   (the caller checked the record). */
static int scalar_value(const column *c, const char *s, size_t len, value *out, char *err,
                        size_t errlen, strata_status *status)
{
    int rc = 0;
    *out = value_null();
    switch (c->type) {
    case TYPE_STRING:
        if (value_string(mem_scratch(), s, len, out) != 0) {
            snprintf(err, errlen, "out of memory");
            *status = STRATA_ENOMEM;
            return -1;
        }
        return 0;
    case TYPE_INT: {
        int64_t i = 0;
        if ((rc = parse_int(s, len, &i)) == 0)
            *out = value_int(i);
        break;
    }
    case TYPE_FLOAT: {
        double d = 0;
        if ((rc = parse_float(s, len, &d)) == 0)
            *out = value_float(d);
        break;
    }
    case TYPE_BOOL: {
        bool b = false;
        if ((rc = parse_bool(s, len, &b)) == 0)
            *out = value_bool(b);
        break;
    }
    }
    if (rc != 0) {
        snprintf(err, errlen, "column '%s' (%s): '%.*s' is %s", c->name, type_name(c->type),
                 (int)(len > 40 ? 40 : len), s,
                 rc == -2                  ? "out of range"
                 : c->type == TYPE_INT     ? "not an integer"
                 : c->type == TYPE_FLOAT   ? "not a number"
                                           : "not true or false");
        *status = STRATA_ETYPE;
        return -1;
    }
    return 0;
}

static int array_value(const column *c, const char *s, size_t len, char delim, value *out,
                       char *err, size_t errlen, strata_status *status)
{
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += s[i] == delim;
    value *items = mem_calloc(mem_scratch(), mem_array_size(n, sizeof *items));
    if (!items) {
        snprintf(err, errlen, "out of memory");
        *status = STRATA_ENOMEM;
        return -1;
    }
    int rc = 0;
    size_t k = 0;
    for (const char *p = s, *end = s + len; rc == 0 && k < n; k++) {
        const char *q = memchr(p, delim, (size_t)(end - p));
        if (!q)
            q = end;
        rc = scalar_value(c, p, (size_t)(q - p), &items[k], err, errlen, status);
        p = q + 1;
    }
    if (rc == 0 && value_list_from(mem_scratch(), items, n, out) != 0) {
        snprintf(err, errlen, "out of memory");
        *status = STRATA_ENOMEM;
        rc = -1;
    }
    if (rc != 0)
        for (size_t i = 0; i < n; i++)
            value_release(&items[i]);
    mem_free(mem_scratch(), items);
    return rc;
}

int column_value(const column *c, csv_field f, char array_delim, value *out, char *err,
                 size_t errlen, strata_status *status)
{
    *out = value_null();
    if (f.len == 0 && !(f.quoted && c->type == TYPE_STRING && !c->array))
        return 0;
    if (c->array)
        return array_value(c, f.ptr, f.len, array_delim, out, err, errlen, status);
    return scalar_value(c, f.ptr, f.len, out, err, errlen, status);
}
