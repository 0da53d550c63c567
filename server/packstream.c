/*
 * PackStream encoder and decoder (see packstream.h).
 *
 * Markers (high nibble or whole byte):
 *   0x00..0x7F, 0xF0..0xFF  tiny int (-16..127)
 *   0x80..0x8F  string of 0..15 bytes    0xD0/D1/D2  string, 8/16/32-bit size
 *   0x90..0x9F  list of 0..15 items      0xD4/D5/D6  list
 *   0xA0..0xAF  map of 0..15 entries     0xD8/D9/DA  map
 *   0xB0..0xBF  structure of 0..15 fields, then a tag byte
 *   0xC0 null, 0xC1 float64, 0xC2 false, 0xC3 true
 *   0xC8/C9/CA/CB  int 8/16/32/64       0xCC/CD/CE  bytes
 *
 * Structures strata writes: Node 'N', Relationship 'R', UnboundRelationship
 * 'r', Path 'P', Date 'D', Time 'T', LocalTime 't', LocalDateTime 'd',
 * DateTime 'I' / DateTimeZoneId 'i' (Bolt 5: UTC seconds) or 'F' / 'f'
 * (Bolt 4.4 without the utc patch: local seconds), Duration 'E'.
 */
#include "server/packstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64   /* nesting of lists and maps in a decoded value */
#define NANOS_PER_SECOND 1000000000LL
#define SECONDS_PER_DAY 86400LL

/* ---- the buffer ---- */

static bool reserve(pack_buf *b, size_t more)
{
    if (b->failed)
        return false;
    if (more > SIZE_MAX / 2 - b->len || (b->limit && b->len + more > b->limit)) {
        b->failed = true;
        return false;
    }
    if (b->len + more <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more)
        cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d) {
        b->failed = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

void pack_reset(pack_buf *b)
{
    b->len = 0;
    b->failed = false;
}

void pack_free(pack_buf *b)
{
    free(b->data);
    *b = (pack_buf){0};
}

void pack_bytes(pack_buf *b, const void *p, size_t n)
{
    if (n && reserve(b, n)) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
    }
}

static void put_u8(pack_buf *b, uint8_t v)
{
    pack_bytes(b, &v, 1);
}

static void put_be(pack_buf *b, uint64_t v, int nbytes)
{
    uint8_t tmp[8];
    for (int i = 0; i < nbytes; i++)
        tmp[i] = (uint8_t)(v >> (8 * (nbytes - 1 - i)));
    pack_bytes(b, tmp, (size_t)nbytes);
}

void pack_null(pack_buf *b)
{
    put_u8(b, 0xC0);
}

void pack_bool(pack_buf *b, bool v)
{
    put_u8(b, v ? 0xC3 : 0xC2);
}

void pack_int(pack_buf *b, int64_t v)
{
    if (v >= -16 && v <= 127) {
        put_u8(b, (uint8_t)(int8_t)v);
    } else if (v >= INT8_MIN && v <= INT8_MAX) {
        put_u8(b, 0xC8);
        put_be(b, (uint64_t)v, 1);
    } else if (v >= INT16_MIN && v <= INT16_MAX) {
        put_u8(b, 0xC9);
        put_be(b, (uint64_t)v, 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        put_u8(b, 0xCA);
        put_be(b, (uint64_t)v, 4);
    } else {
        put_u8(b, 0xCB);
        put_be(b, (uint64_t)v, 8);
    }
}

void pack_float(pack_buf *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    put_u8(b, 0xC1);
    put_be(b, bits, 8);
}

/* A size header: tiny form under 16 where the kind has one, else 8/16/32
   bits after the marker base (0xD0 strings, 0xD4 lists, 0xD8 maps). */
static void put_size(pack_buf *b, uint8_t tiny, uint8_t base, size_t n)
{
    if (n < 16) {
        put_u8(b, (uint8_t)(tiny | n));
    } else if (n <= UINT8_MAX) {
        put_u8(b, base);
        put_be(b, n, 1);
    } else if (n <= UINT16_MAX) {
        put_u8(b, (uint8_t)(base + 1));
        put_be(b, n, 2);
    } else if (n <= UINT32_MAX) {
        put_u8(b, (uint8_t)(base + 2));
        put_be(b, n, 4);
    } else {
        b->failed = true;
    }
}

void pack_string(pack_buf *b, const char *s, size_t n)
{
    put_size(b, 0x80, 0xD0, n);
    pack_bytes(b, s, n);
}

void pack_cstr(pack_buf *b, const char *s)
{
    pack_string(b, s, strlen(s));
}

void pack_list_header(pack_buf *b, size_t n)
{
    put_size(b, 0x90, 0xD4, n);
}

void pack_map_header(pack_buf *b, size_t n)
{
    put_size(b, 0xA0, 0xD8, n);
}

void pack_struct_header(pack_buf *b, uint8_t nfields, uint8_t tag)
{
    put_u8(b, (uint8_t)(0xB0 | (nfields & 0x0F)));
    put_u8(b, tag);
}

/* ---- graph entities ---- */

static void pack_element_id(pack_buf *b, strata_id id)
{
    char text[24];
    int n = snprintf(text, sizeof text, "%llu", (unsigned long long)id);
    pack_string(b, text, (size_t)n);
}

static int pack_token_name(pack_buf *b, strata_view *view, strata_token_kind kind,
                           strata_token tok)
{
    const char *name;
    if (strata_token_name(view, kind, tok, &name) != STRATA_OK)
        return -1;
    pack_cstr(b, name);
    return 0;
}

/* A property map: keys through the view's catalog, values as read. */
static int pack_properties(pack_buf *b, strata_view *view, strata_id id, bool rel,
                           const pack_opts *o)
{
    strata_token small[32];
    strata_token *keys = small;
    size_t n;
    strata_status st = rel ? strata_rel_keys(view, id, keys, 32, &n)
                           : strata_node_keys(view, id, keys, 32, &n);
    if (st != STRATA_OK)
        return -1;
    if (n > 32) {
        keys = malloc(n * sizeof *keys);
        size_t again;
        if (!keys || (rel ? strata_rel_keys(view, id, keys, n, &again)
                          : strata_node_keys(view, id, keys, n, &again)) != STRATA_OK) {
            free(keys);
            b->failed = true;
            return -1;
        }
    }
    int rc = 0;
    pack_map_header(b, n);
    for (size_t i = 0; i < n && rc == 0; i++) {
        strata_value *val = NULL;
        rc = pack_token_name(b, view, STRATA_KEY, keys[i]);
        if (rc == 0)
            rc = (rel ? strata_rel_get(view, id, keys[i], &val)
                      : strata_node_get(view, id, keys[i], &val)) == STRATA_OK ? 0 : -1;
        if (rc == 0)
            rc = pack_value(b, val, view, o);
        strata_value_free(&val);
    }
    if (keys != small)
        free(keys);
    return rc;
}

static int pack_node(pack_buf *b, strata_view *view, strata_id id, const pack_opts *o)
{
    strata_token small[16];
    strata_token *labels = small;
    size_t n;
    if (!view || strata_node_labels(view, id, labels, 16, &n) != STRATA_OK)
        return -1;
    if (n > 16) {
        labels = malloc(n * sizeof *labels);
        size_t again;
        if (!labels || strata_node_labels(view, id, labels, n, &again) != STRATA_OK) {
            free(labels);
            b->failed = true;
            return -1;
        }
    }
    pack_struct_header(b, o->element_ids ? 4 : 3, 'N');
    pack_int(b, (int64_t)id);
    pack_list_header(b, n);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = pack_token_name(b, view, STRATA_LABEL, labels[i]);
    if (labels != small)
        free(labels);
    if (rc == 0)
        rc = pack_properties(b, view, id, false, o);
    if (o->element_ids)
        pack_element_id(b, id);
    return rc;
}

/* A relationship, whole ('R') or without its ends as inside a path ('r'). */
static int pack_rel(pack_buf *b, strata_view *view, strata_id id, bool unbound,
                    const pack_opts *o)
{
    strata_id start, end;
    strata_token type;
    if (!view || strata_rel_info(view, id, &start, &end, &type) != STRATA_OK)
        return -1;
    if (unbound)
        pack_struct_header(b, o->element_ids ? 4 : 3, 'r');
    else
        pack_struct_header(b, o->element_ids ? 8 : 5, 'R');
    pack_int(b, (int64_t)id);
    if (!unbound) {
        pack_int(b, (int64_t)start);
        pack_int(b, (int64_t)end);
    }
    if (pack_token_name(b, view, STRATA_RELTYPE, type) != 0 ||
        pack_properties(b, view, id, true, o) != 0)
        return -1;
    if (o->element_ids) {
        pack_element_id(b, id);
        if (!unbound) {
            pack_element_id(b, start);
            pack_element_id(b, end);
        }
    }
    return 0;
}

typedef struct id_slot {
    strata_id id;
    size_t pos;
} id_slot;

static int by_id(const void *a, const void *b)
{
    const id_slot *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id ? 1 : (x->pos > y->pos) - (x->pos < y->pos);
}

/* Gives each of ids[0..n) the index of its first occurrence among the
   distinct ids, in order of first occurrence: O(n log n) however long the
   path.  *ndistinct receives the count; first[k] the position in ids of
   the k-th distinct one. */
static int distinct_indices(const strata_id *ids, size_t n, size_t *index, size_t *first,
                            size_t *ndistinct)
{
    id_slot *s = malloc((n ? n : 1) * sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < n; i++)
        s[i] = (id_slot){ids[i], i};
    qsort(s, n, sizeof *s, by_id);
    /* leader[i]: the first position holding ids[i] */
    for (size_t i = 0; i < n; i++) {
        size_t lead = i > 0 && s[i].id == s[i - 1].id ? index[s[i - 1].pos] : s[i].pos;
        index[s[i].pos] = lead;
    }
    free(s);
    /* number leaders in order of position */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (index[i] == i) {
            first[k] = i;
            index[i] = k++;
        } else {
            index[i] = index[index[i]];
        }
    }
    *ndistinct = k;
    return 0;
}

static int pack_path(pack_buf *b, const strata_value *v, strata_view *view, const pack_opts *o)
{
    size_t len = strata_value_path_len(v);
    size_t nn = len + 1;
    strata_id *nodes = malloc(nn * sizeof *nodes), *rels = malloc((len ? len : 1) * sizeof *rels);
    size_t *nidx = malloc(nn * sizeof *nidx), *nfirst = malloc(nn * sizeof *nfirst);
    size_t *ridx = malloc((len ? len : 1) * sizeof *ridx);
    size_t *rfirst = malloc((len ? len : 1) * sizeof *rfirst);
    int rc = -1;
    size_t nd = 0, rd = 0;
    if (!nodes || !rels || !nidx || !nfirst || !ridx || !rfirst) {
        b->failed = true;
        goto cleanup;
    }
    for (size_t i = 0; i < nn; i++)
        if (strata_value_path_node(v, i, &nodes[i]) != STRATA_OK)
            goto cleanup;
    for (size_t i = 0; i < len; i++)
        if (strata_value_path_rel(v, i, &rels[i]) != STRATA_OK)
            goto cleanup;
    if (distinct_indices(nodes, nn, nidx, nfirst, &nd) != 0 ||
        distinct_indices(rels, len, ridx, rfirst, &rd) != 0) {
        b->failed = true;
        goto cleanup;
    }
    pack_struct_header(b, 3, 'P');
    pack_list_header(b, nd);
    for (size_t k = 0; k < nd; k++)
        if (pack_node(b, view, nodes[nfirst[k]], o) != 0)
            goto cleanup;
    pack_list_header(b, rd);
    for (size_t k = 0; k < rd; k++)
        if (pack_rel(b, view, rels[rfirst[k]], true, o) != 0)
            goto cleanup;
    pack_list_header(b, 2 * len);
    for (size_t i = 0; i < len; i++) {
        strata_id start;
        if (strata_rel_info(view, rels[i], &start, NULL, NULL) != STRATA_OK)
            goto cleanup;
        /* 1-based; negative when walked against its direction */
        int64_t r = (int64_t)ridx[i] + 1;
        pack_int(b, start == nodes[i] ? r : -r);
        pack_int(b, (int64_t)nidx[i + 1]);
    }
    rc = 0;
cleanup:
    free(nodes);
    free(rels);
    free(nidx);
    free(nfirst);
    free(ridx);
    free(rfirst);
    return rc;
}

/* ---- temporal values ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int pack_temporal(pack_buf *b, const strata_value *v, const pack_opts *o)
{
    strata_temporal t;
    if (strata_value_get_temporal(v, &t) != STRATA_OK)
        return -1;
    int64_t local = t.days * SECONDS_PER_DAY + t.nanos / NANOS_PER_SECOND;
    int64_t nano = t.nanos % NANOS_PER_SECOND;
    switch (t.type) {
    case STRATA_DATE:
        pack_struct_header(b, 1, 'D');
        pack_int(b, t.days);
        return 0;
    case STRATA_LOCALTIME:
        pack_struct_header(b, 1, 't');
        pack_int(b, t.nanos);
        return 0;
    case STRATA_TIME:
        pack_struct_header(b, 2, 'T');
        pack_int(b, t.nanos);
        pack_int(b, t.offset);
        return 0;
    case STRATA_LOCALDATETIME:
        pack_struct_header(b, 2, 'd');
        pack_int(b, local);
        pack_int(b, nano);
        return 0;
    case STRATA_DATETIME: {
        bool zoned = t.zone[0] != '\0';
        int64_t secs = o->utc_datetime ? local - t.offset : local;
        pack_struct_header(b, 3, zoned ? (o->utc_datetime ? 'i' : 'f')
                                       : (o->utc_datetime ? 'I' : 'F'));
        pack_int(b, secs);
        pack_int(b, nano);
        if (zoned)
            pack_cstr(b, t.zone);
        else
            pack_int(b, t.offset);
        return 0;
    }
    default:
        return -1;
    }
}

int pack_value(pack_buf *b, const strata_value *v, strata_view *view, const pack_opts *o)
{
    switch (strata_value_type(v)) {
    case STRATA_NULL:
        pack_null(b);
        return 0;
    case STRATA_BOOL: {
        bool x = false;
        strata_value_get_bool(v, &x);
        pack_bool(b, x);
        return 0;
    }
    case STRATA_INT: {
        int64_t x = 0;
        strata_value_get_int(v, &x);
        pack_int(b, x);
        return 0;
    }
    case STRATA_FLOAT: {
        double x = 0;
        strata_value_get_float(v, &x);
        pack_float(b, x);
        return 0;
    }
    case STRATA_STRING: {
        const char *s = "";
        size_t n = 0;
        strata_value_get_string(v, &s, &n);
        pack_string(b, s, n);
        return 0;
    }
    case STRATA_LIST: {
        size_t n = strata_value_list_len(v);
        pack_list_header(b, n);
        for (size_t i = 0; i < n; i++) {
            strata_value *item = NULL;
            if (strata_value_list_get(v, i, &item) != STRATA_OK) {
                b->failed = true;
                return -1;
            }
            int rc = pack_value(b, item, view, o);
            strata_value_free(&item);
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    case STRATA_MAP: {
        size_t n = strata_value_map_len(v);
        pack_map_header(b, n);
        for (size_t i = 0; i < n; i++) {
            const char *key;
            strata_value *val = NULL;
            if (strata_value_map_entry(v, i, &key, &val) != STRATA_OK) {
                b->failed = true;
                return -1;
            }
            pack_cstr(b, key);
            int rc = pack_value(b, val, view, o);
            strata_value_free(&val);
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    case STRATA_NODE:
    case STRATA_RELATIONSHIP: {
        strata_id id;
        if (strata_value_get_id(v, &id) != STRATA_OK)
            return -1;
        return strata_value_type(v) == STRATA_NODE ? pack_node(b, view, id, o)
                                                   : pack_rel(b, view, id, false, o);
    }
    case STRATA_PATH:
        return pack_path(b, v, view, o);
    case STRATA_DURATION: {
        strata_duration d;
        if (strata_value_get_duration(v, &d) != STRATA_OK)
            return -1;
        pack_struct_header(b, 4, 'E');
        pack_int(b, d.months);
        pack_int(b, d.days);
        pack_int(b, d.seconds);
        pack_int(b, d.nanos);
        return 0;
    }
    default:
        return pack_temporal(b, v, o);
    }
}

/* ---- decoding ---- */

static int fail(unpacker *u, const char *why)
{
    if (!u->err[0])
        snprintf(u->err, sizeof u->err, "%s", why);
    return -1;
}

static int get_be(unpacker *u, int nbytes, uint64_t *out)
{
    if (u->end - u->p < nbytes)
        return fail(u, "truncated value");
    uint64_t v = 0;
    for (int i = 0; i < nbytes; i++)
        v = (v << 8) | *u->p++;
    *out = v;
    return 0;
}

int unpack_struct_header(unpacker *u, uint8_t *nfields, uint8_t *tag)
{
    if (u->end - u->p < 2)
        return fail(u, "truncated structure");
    if ((u->p[0] & 0xF0) != 0xB0)
        return fail(u, "expected a structure");
    *nfields = u->p[0] & 0x0F;
    *tag = u->p[1];
    u->p += 2;
    return 0;
}

/* A sized marker: the element count of a string, list or map, checked
   against the bytes left (each element takes at least one byte). */
static int get_size(unpacker *u, uint8_t marker, uint8_t tiny, uint8_t base, size_t *n)
{
    uint64_t v;
    if ((marker & 0xF0) == tiny) {
        *n = marker & 0x0F;
        return 0;
    }
    int width = marker == base ? 1 : marker == base + 1 ? 2 : 4;
    if (get_be(u, width, &v) != 0)
        return -1;
    if (v > (uint64_t)(u->end - u->p))
        return fail(u, "a size larger than the message");
    *n = (size_t)v;
    return 0;
}

static int get_int(unpacker *u, uint8_t m, int64_t *out)
{
    uint64_t v;
    if (m <= 0x7F || m >= 0xF0) {
        *out = (int8_t)m;
        return 0;
    }
    int width = m == 0xC8 ? 1 : m == 0xC9 ? 2 : m == 0xCA ? 4 : 8;
    if (get_be(u, width, &v) != 0)
        return -1;
    /* sign-extend from width bytes */
    if (width < 8 && (v >> (8 * width - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * width);
    *out = (int64_t)v;
    return 0;
}

static bool is_int_marker(uint8_t m)
{
    return m <= 0x7F || m >= 0xF0 || (m >= 0xC8 && m <= 0xCB);
}

static int struct_int(unpacker *u, int64_t *out)
{
    if (u->p >= u->end)
        return fail(u, "truncated structure");
    uint8_t m = *u->p++;
    if (!is_int_marker(m))
        return fail(u, "a structure field should be an integer");
    return get_int(u, m, out);
}

static strata_value *make_temporal(unpacker *u, strata_temporal *t)
{
    strata_value *v = NULL;
    strata_status st = strata_value_temporal(t, &v);
    if (st != STRATA_OK) {
        fail(u, st == STRATA_ENOMEM ? "out of memory" : "a temporal value out of range");
        return NULL;
    }
    return v;
}

/* Local seconds and nanos of the second into days and nanos of the day. */
static int split_local(unpacker *u, int64_t local, int64_t nano, strata_temporal *t)
{
    if (nano < 0 || nano >= NANOS_PER_SECOND || local < -(INT64_C(1) << 50) ||
        local > (INT64_C(1) << 50))
        return fail(u, "a temporal value out of range");
    t->days = floor_div(local, SECONDS_PER_DAY);
    t->nanos = (local - t->days * SECONDS_PER_DAY) * NANOS_PER_SECOND + nano;
    return 0;
}

/* A zoned date-time from UTC seconds: the zone's offset at that instant,
   found by building at the UTC wall clock and correcting twice. */
static strata_value *zoned_from_utc(unpacker *u, int64_t utc, int64_t nano, const char *zone)
{
    strata_temporal t = {.type = STRATA_DATETIME};
    snprintf(t.zone, sizeof t.zone, "%s", zone);
    int32_t offset = 0;
    for (int round = 0; round < 3; round++) {
        if (split_local(u, utc + offset, nano, &t) != 0)
            return NULL;
        strata_value *v = make_temporal(u, &t);
        if (!v)
            return NULL;
        strata_temporal back;
        strata_value_get_temporal(v, &back);
        if (back.offset == offset || round == 2)
            return v;
        offset = back.offset;
        strata_value_free(&v);
    }
    return NULL;
}

static strata_value *unpack_structure(unpacker *u, const pack_opts *o)
{
    uint8_t nfields, tag;
    if (unpack_struct_header(u, &nfields, &tag) != 0)
        return NULL;
    int64_t f[4] = {0};
    strata_temporal t = {0};
    static const struct {
        char tag;
        uint8_t fields;
    } shapes[] = {{'D', 1}, {'t', 1}, {'T', 2}, {'d', 2}, {'I', 3}, {'F', 3},
                  {'i', 3}, {'f', 3}, {'E', 4}};
    int known = -1;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (shapes[i].tag == (char)tag)
            known = (int)i;
    if (known < 0) {
        fail(u, tag == 'N' || tag == 'R' || tag == 'r' || tag == 'P'
                    ? "nodes, relationships and paths cannot be parameters"
                : tag == 'X' || tag == 'Y' ? "points are not supported"
                                           : "an unknown structure");
        return NULL;
    }
    if (nfields != shapes[known].fields) {
        fail(u, "a structure with the wrong number of fields");
        return NULL;
    }
    bool zone_named = tag == 'i' || tag == 'f';
    for (int i = 0; i < nfields - (zone_named ? 1 : 0); i++)
        if (struct_int(u, &f[i]) != 0)
            return NULL;
    char zone[64] = "";
    if (zone_named) {
        strata_value *name = unpack_value(u, o);
        const char *s;
        size_t n;
        if (!name || strata_value_get_string(name, &s, &n) != STRATA_OK || n >= sizeof zone) {
            strata_value_free(&name);
            fail(u, "a zone id should be a short string");
            return NULL;
        }
        memcpy(zone, s, n + 1);
        strata_value_free(&name);
    }
    switch (tag) {
    case 'D':
        t = (strata_temporal){.type = STRATA_DATE, .days = f[0]};
        return make_temporal(u, &t);
    case 't':
        t = (strata_temporal){.type = STRATA_LOCALTIME, .nanos = f[0]};
        return make_temporal(u, &t);
    case 'T':
        if (f[1] < INT32_MIN || f[1] > INT32_MAX)
            return fail(u, "an offset out of range"), NULL;
        t = (strata_temporal){.type = STRATA_TIME, .nanos = f[0], .offset = (int32_t)f[1]};
        return make_temporal(u, &t);
    case 'd':
        t.type = STRATA_LOCALDATETIME;
        return split_local(u, f[0], f[1], &t) == 0 ? make_temporal(u, &t) : NULL;
    case 'I':
    case 'F':
        if (f[2] < -64800 || f[2] > 64800)
            return fail(u, "an offset out of range"), NULL;
        t.type = STRATA_DATETIME;
        t.offset = (int32_t)f[2];
        if (split_local(u, tag == 'I' ? f[0] + f[2] : f[0], f[1], &t) != 0)
            return NULL;
        return make_temporal(u, &t);
    case 'i':
        return zoned_from_utc(u, f[0], f[1], zone);
    case 'f':
        t.type = STRATA_DATETIME;
        snprintf(t.zone, sizeof t.zone, "%s", zone);
        return split_local(u, f[0], f[1], &t) == 0 ? make_temporal(u, &t) : NULL;
    default: { /* 'E' */
        strata_duration d = {f[0], f[1], f[2], 0};
        if (f[3] < 0 || f[3] >= NANOS_PER_SECOND) {
            /* carry whole seconds out of the nanoseconds */
            d.seconds += floor_div(f[3], NANOS_PER_SECOND);
            f[3] -= floor_div(f[3], NANOS_PER_SECOND) * NANOS_PER_SECOND;
        }
        d.nanos = (int32_t)f[3];
        strata_value *v = NULL;
        if (strata_value_duration(&d, &v) != STRATA_OK)
            fail(u, "a duration out of range");
        return v;
    }
    }
}

static strata_value *unpack_list(unpacker *u, size_t n, const pack_opts *o)
{
    strata_value **items = calloc(n ? n : 1, sizeof *items);
    strata_value *out = NULL;
    size_t got = 0;
    if (!items) {
        fail(u, "out of memory");
        return NULL;
    }
    for (; got < n; got++)
        if (!(items[got] = unpack_value(u, o)))
            goto cleanup;
    out = strata_value_list((const strata_value *const *)items, n);
    if (!out)
        fail(u, "out of memory");
cleanup:
    for (size_t i = 0; i < got; i++)
        strata_value_free(&items[i]);
    free(items);
    return out;
}

/* Whether s[0..n) is well-formed UTF-8 (no overlongs, surrogates, or
   code points past U+10FFFF). */
static bool utf8_valid(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                   : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (len == 0 || n - i < len)
            return false;
        uint8_t lo = 0x80, hi = 0xBF;   /* the second byte's range */
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
        else if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return false;
        for (size_t k = 2; k < len; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
        i += len;
    }
    return true;
}

/* The keys of one map, read straight from the message: short ones in a
   small area on the stack, so a request's small maps cost no allocation
   beyond the map itself. */
typedef struct key_area {
    char bytes[256];
    size_t used;
} key_area;

/* A map key: a UTF-8 string without NUL, copied NUL-terminated into the
   area (*heap false) or, when it does not fit, onto the heap. */
static char *unpack_key(unpacker *u, key_area *a, bool *heap)
{
    uint8_t m = u->p < u->end ? *u->p : 0;
    size_t n;
    *heap = false;
    if (!((m & 0xF0) == 0x80 || (m >= 0xD0 && m <= 0xD2))) {
        fail(u, u->p < u->end ? "a map key should be a string without NUL" : "truncated value");
        return NULL;
    }
    u->p++;
    if (get_size(u, m, 0x80, 0xD0, &n) != 0)
        return NULL;
    if ((size_t)(u->end - u->p) < n) {
        fail(u, "truncated string");
        return NULL;
    }
    if (memchr(u->p, 0, n)) {
        fail(u, "a map key should be a string without NUL");
        return NULL;
    }
    if (!utf8_valid(u->p, n)) {
        fail(u, "a string that is not UTF-8");
        return NULL;
    }
    char *k;
    if (sizeof a->bytes - a->used > n) {
        k = a->bytes + a->used;
        a->used += n + 1;
    } else if ((k = malloc(n + 1))) {
        *heap = true;
    } else {
        fail(u, "out of memory");
        return NULL;
    }
    memcpy(k, u->p, n);
    k[n] = '\0';
    u->p += n;
    return k;
}

#define SMALL_MAP 8   /* entries whose arrays live on the stack */

static strata_value *unpack_map(unpacker *u, size_t n, const pack_opts *o)
{
    char *small_keys[SMALL_MAP] = {0};
    strata_value *small_vals[SMALL_MAP] = {0};
    bool small_heap[SMALL_MAP];
    key_area area;
    area.used = 0;
    bool small = n <= SMALL_MAP;
    char **keys = small ? small_keys : calloc(n, sizeof *keys);
    strata_value **vals = small ? small_vals : calloc(n, sizeof *vals);
    bool *heap = small ? small_heap : calloc(n, sizeof *heap);
    strata_value *out = NULL;
    size_t got = 0;
    if (!keys || !vals || !heap) {
        fail(u, "out of memory");
        goto cleanup;
    }
    for (; got < n; got++) {
        if (!(keys[got] = unpack_key(u, &area, &heap[got])))
            goto cleanup;
        if (!(vals[got] = unpack_value(u, o))) {
            if (heap[got])
                free(keys[got]);
            goto cleanup;
        }
    }
    out = strata_value_map((const char *const *)keys, (const strata_value *const *)vals, n);
    if (!out)
        fail(u, "out of memory");
cleanup:
    for (size_t i = 0; keys && vals && heap && i < got; i++) {
        if (heap[i])
            free(keys[i]);
        strata_value_free(&vals[i]);
    }
    if (!small) {
        free(keys);
        free(vals);
        free(heap);
    }
    return out;
}

strata_value *unpack_value(unpacker *u, const pack_opts *o)
{
    if (u->p >= u->end) {
        fail(u, "truncated value");
        return NULL;
    }
    if (u->depth >= MAX_DEPTH) {
        fail(u, "values nested too deep");
        return NULL;
    }
    uint8_t m = *u->p;
    strata_value *out = NULL;
    size_t n;
    if ((m & 0xF0) == 0xB0)
        return unpack_structure(u, o);
    u->p++;
    if (is_int_marker(m)) {
        int64_t i;
        return get_int(u, m, &i) == 0 ? strata_value_int(i) : NULL;
    }
    switch (m) {
    case 0xC0:
        out = strata_value_null();
        break;
    case 0xC2:
    case 0xC3:
        out = strata_value_bool(m == 0xC3);
        break;
    case 0xC1: {
        uint64_t bits;
        double d;
        if (get_be(u, 8, &bits) != 0)
            return NULL;
        memcpy(&d, &bits, sizeof d);
        out = strata_value_float(d);
        break;
    }
    default:
        if ((m & 0xF0) == 0x80 || (m >= 0xD0 && m <= 0xD2)) {
            if (get_size(u, m, 0x80, 0xD0, &n) != 0)
                return NULL;
            if ((size_t)(u->end - u->p) < n) {
                fail(u, "truncated string");
                return NULL;
            }
            out = strata_value_string((const char *)u->p, n);
            u->p += n;
            if (!out) {
                fail(u, "a string that is not UTF-8");
                return NULL;
            }
        } else if ((m & 0xF0) == 0x90 || (m >= 0xD4 && m <= 0xD6)) {
            if (get_size(u, m, 0x90, 0xD4, &n) != 0)
                return NULL;
            u->depth++;
            out = unpack_list(u, n, o);
            u->depth--;
            return out;
        } else if ((m & 0xF0) == 0xA0 || (m >= 0xD8 && m <= 0xDA)) {
            if (get_size(u, m, 0xA0, 0xD8, &n) != 0)
                return NULL;
            u->depth++;
            out = unpack_map(u, n, o);
            u->depth--;
            return out;
        } else if (m >= 0xCC && m <= 0xCE) {
            fail(u, "byte arrays are not supported");
            return NULL;
        } else {
            fail(u, "an unknown marker byte");
            return NULL;
        }
    }
    if (!out)
        fail(u, "out of memory");
    return out;
}

int unpack_skip(unpacker *u)
{
    strata_value *v = unpack_value(u, &(pack_opts){0});
    if (!v)
        return -1;
    strata_value_free(&v);
    return 0;
}
