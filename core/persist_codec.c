/* The byte level of the saved-file format; persist_codec.h explains it. */
#include "core/persist_codec.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "storage/temporal.h"
#include "storage/utf8.h"

/* ---- CRC32C ----------------------------------------------------------------- */

/* Slicing by eight: eight bytes per step through eight tables, about
   three instructions a byte (2 GB/s).  Where the processor has SSE 4.2,
   its CRC32 instruction takes eight bytes an instruction: a save spent 7%
   of its instructions and a load 3% in the tables (callgrind, 200k nodes
   / 1M relationships), and every logged commit checksums its record. */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
}

uint32_t crc32c_portable(uint32_t crc, const void *bytes, size_t n)
{
    pthread_once(&crc_once, crc_init);
    const unsigned char *p = bytes;
    uint32_t c = ~crc;
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^
            crc_table[5][(lo >> 16) & 0xFF] ^ crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^
            crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--)
        c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xFF];
    return ~c;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const void *bytes,
                                                               size_t n)
{
    const unsigned char *p = bytes;
    uint64_t c = ~crc;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);   /* any alignment; the instruction reads little-endian */
        c = __builtin_ia32_crc32di(c, word);
    }
    uint32_t c32 = (uint32_t)c;
    while (n--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}

uint32_t crc32c(uint32_t crc, const void *bytes, size_t n)
{
    /* Every thread finds the same answer, so whichever stores it first does. */
    static atomic_int has_sse42 = -1;
    int has = atomic_load_explicit(&has_sse42, memory_order_relaxed);
    if (has < 0) {
        has = __builtin_cpu_supports("sse4.2") ? 1 : 0;
        atomic_store_explicit(&has_sse42, has, memory_order_relaxed);
    }
    return has ? crc32c_sse42(crc, bytes, n) : crc32c_portable(crc, bytes, n);
}
#else
uint32_t crc32c(uint32_t crc, const void *bytes, size_t n) { return crc32c_portable(crc, bytes, n); }
#endif

/* ---- writer ----------------------------------------------------------------- */

static void put_le(unsigned char *p, uint64_t x, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

static void write_all(pwriter *w, const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n && !w->err) {
        ssize_t k = write(w->fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            w->err = k < 0 ? errno : EIO;
            return;
        }
        b += k;
        n -= (size_t)k;
        w->off += (uint64_t)k;
    }
}

void pw_init(pwriter *w, int fd, unsigned char *buf, size_t cap)
{
    memset(w, 0, sizeof *w);
    w->fd = fd;
    w->buf = buf;
    w->cap = cap;
}

void pw_flush(pwriter *w)
{
    if (w->sec_tag)
        w->crc = crc32c(w->crc, w->buf + w->crc_from, w->len - w->crc_from);
    write_all(w, w->buf, w->len);
    w->len = 0;
    w->crc_from = 0;
}

void pw_bytes(pwriter *w, const void *p, size_t n)
{
    if (w->err)
        return;
    if (w->len + n > w->cap) {
        pw_flush(w);
        if (n > w->cap) {   /* a large string: straight through */
            if (w->sec_tag)
                w->crc = crc32c(w->crc, p, n);
            write_all(w, p, n);
            return;
        }
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

void pw_u8(pwriter *w, uint8_t x) { pw_bytes(w, &x, 1); }

void pw_u32(pwriter *w, uint32_t x)
{
    unsigned char b[4];
    put_le(b, x, 4);
    pw_bytes(w, b, 4);
}

void pw_u64(pwriter *w, uint64_t x)
{
    unsigned char b[8];
    put_le(b, x, 8);
    pw_bytes(w, b, 8);
}

void pw_varint(pwriter *w, uint64_t x)
{
    if (w->len + 10 > w->cap)
        pw_flush(w);
    if (w->err)
        return;
    unsigned char *p = w->buf + w->len;
    while (x >= 0x80) {
        *p++ = (unsigned char)(x | 0x80);
        x >>= 7;
    }
    *p++ = (unsigned char)x;
    w->len = (size_t)(p - w->buf);
}

void pw_svarint(pwriter *w, int64_t x)
{
    pw_varint(w, ((uint64_t)x << 1) ^ (uint64_t)(x >> 63));
}

void pw_string(pwriter *w, const char *s, size_t len)
{
    pw_varint(w, len);
    pw_bytes(w, s, len);
}

void pw_section_begin(pwriter *w, uint32_t tag)
{
    pw_flush(w);
    static const unsigned char room[PCODEC_SECTION_HEADER];
    pw_bytes(w, room, sizeof room);
    w->sec_off = w->off;
    w->sec_tag = tag;
    w->crc = 0;
    w->crc_from = w->len;
}

void pw_section_end(pwriter *w)
{
    pw_flush(w);
    uint64_t len = w->off - w->sec_off - PCODEC_SECTION_HEADER;
    unsigned char h[PCODEC_SECTION_HEADER];
    put_le(h, w->sec_tag, 4);
    put_le(h + 4, 0, 4);
    put_le(h + 8, len, 8);
    put_le(h + 16, w->crc, 4);
    put_le(h + 20, crc32c(0, h, 20), 4);
    w->sec_tag = 0;
    w->nsections++;
    if (w->err)
        return;
    if (pwrite(w->fd, h, sizeof h, (off_t)w->sec_off) != (ssize_t)sizeof h)
        w->err = errno ? errno : EIO;
}

/* Value tags in the file: stable numbers of their own (FORMAT.md), so the
   engine's enum may change without changing the format. */
enum {
    FT_NULL = 0, FT_FALSE = 1, FT_TRUE = 2, FT_INT = 3, FT_FLOAT = 4, FT_STRING = 5,
    FT_LIST = 6, FT_MAP = 7, FT_NODE = 8, FT_REL = 9, FT_PATH = 10, FT_DATE = 11,
    FT_LOCALTIME = 12, FT_TIME = 13, FT_LOCALDATETIME = 14, FT_DATETIME = 15,
    FT_DURATION = 16,
};

/* Functions never inlined into the recursive pw_value / get_value: their
   locals (a decoded temporal, a map's cursor) would otherwise sit in every
   level's frame of a deeply nested value; get_value used 317 bytes a level
   with them inlined, measured with a 1000-level list on a pre-filled
   stack. */
#define NOINLINE __attribute__((noinline))

static NOINLINE void pw_temporal(pwriter *w, const value *v)
{
    temporal t;
    temporal_from_value(v, &t);
    static const uint8_t tags[] = {
        [VAL_DATE] = FT_DATE, [VAL_LOCALTIME] = FT_LOCALTIME, [VAL_TIME] = FT_TIME,
        [VAL_LOCALDATETIME] = FT_LOCALDATETIME, [VAL_DATETIME] = FT_DATETIME,
    };
    pw_u8(w, tags[t.kind]);
    if (t.kind == VAL_DATE || t.kind == VAL_LOCALDATETIME || t.kind == VAL_DATETIME)
        pw_svarint(w, t.days);
    if (t.kind != VAL_DATE)
        pw_varint(w, (uint64_t)t.nanos);
    if (t.kind == VAL_TIME || t.kind == VAL_DATETIME)
        pw_svarint(w, t.offset);
    if (t.kind == VAL_DATETIME)
        pw_string(w, t.zone, strlen(t.zone));
}

static NOINLINE void pw_string_value(pwriter *w, const value *v)
{
    size_t n;
    const char *s = value_str(v, &n);
    pw_string(w, s, n);
}

static NOINLINE void pw_duration(pwriter *w, const value *v)
{
    duration d;
    duration_from_value(v, &d);
    pw_u8(w, FT_DURATION);
    pw_svarint(w, d.months);
    pw_svarint(w, d.days);
    pw_svarint(w, d.seconds);
    pw_varint(w, (uint64_t)d.nanos);
}

void pw_value(pwriter *w, const value *v)
{
    size_t n;
    switch (value_kind(v)) {
    case VAL_NULL:
        pw_u8(w, FT_NULL);
        return;
    case VAL_BOOL:
        pw_u8(w, v->u.b ? FT_TRUE : FT_FALSE);
        return;
    case VAL_INT:
        pw_u8(w, FT_INT);
        pw_svarint(w, v->u.i);
        return;
    case VAL_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &v->u.f, sizeof bits);
        pw_u8(w, FT_FLOAT);
        pw_u64(w, bits);
        return;
    }
    case VAL_STRING:
        pw_u8(w, FT_STRING);
        pw_string_value(w, v);
        return;
    case VAL_LIST:
    case VAL_PATH:
        pw_u8(w, value_kind(v) == VAL_LIST ? FT_LIST : FT_PATH);
        n = value_list_len(v);
        pw_varint(w, n);
        for (size_t i = 0; i < n; i++)
            pw_value(w, &value_list_items(v)[i]);
        return;
    case VAL_MAP:
        pw_u8(w, FT_MAP);
        n = value_map_len(v);
        pw_varint(w, n);
        for (size_t i = 0; i < n; i++) {
            pw_string_value(w, &value_map_keys(v)[i]);
            pw_value(w, &value_map_vals(v)[i]);
        }
        return;
    case VAL_NODE:
    case VAL_REL:
        pw_u8(w, value_kind(v) == VAL_NODE ? FT_NODE : FT_REL);
        pw_varint(w, v->u.id);
        return;
    case VAL_DURATION:
        pw_duration(w, v);
        return;
    default:
        pw_temporal(w, v);
        return;
    }
}

/* ---- reader ----------------------------------------------------------------- */

void pr_init(preader *r, const unsigned char *base, size_t off, size_t len, mem_ctx *m,
             const char *section)
{
    r->base = base;
    r->p = base + off;
    r->end = base + off + len;
    r->m = m;
    r->section = section;
    r->status = STRATA_OK;
    r->err[0] = '\0';
}

static int pr_vfail(preader *r, strata_status s, const char *fmt, va_list ap)
{
    if (r->status != STRATA_OK)
        return -1;
    r->status = s;
    int k = snprintf(r->err, sizeof r->err, "section %s at byte %llu: ", r->section,
                     (unsigned long long)pr_offset(r));
    if (k > 0 && (size_t)k < sizeof r->err)
        vsnprintf(r->err + k, sizeof r->err - (size_t)k, fmt, ap);
    r->p = r->end;   /* every later read fails */
    return -1;
}

int pr_fail(preader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pr_vfail(r, STRATA_ECORRUPT, fmt, ap);
    va_end(ap);
    return -1;
}

static int pr_fail_status(preader *r, strata_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pr_vfail(r, s, fmt, ap);
    va_end(ap);
    return -1;
}

int pr_nomem(preader *r, const char *what)
{
    return pr_fail_status(r, STRATA_ENOMEM, "out of memory %s", what);
}

static int need(preader *r, size_t n, const char *what)
{
    if (!pr_ok(r))
        return -1;
    if (pr_left(r) < n)
        return pr_fail(r, "the section ends inside %s", what);
    return 0;
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t x = 0;
    for (int i = 0; i < n; i++)
        x |= (uint64_t)p[i] << (8 * i);
    return x;
}

int pr_u8(preader *r, uint8_t *out)
{
    *out = 0;
    if (need(r, 1, "a byte"))
        return -1;
    *out = *r->p++;
    return 0;
}

int pr_u32(preader *r, uint32_t *out)
{
    *out = 0;
    if (need(r, 4, "a 32-bit number"))
        return -1;
    *out = (uint32_t)get_le(r->p, 4);
    r->p += 4;
    return 0;
}

int pr_u64(preader *r, uint64_t *out)
{
    *out = 0;
    if (need(r, 8, "a 64-bit number"))
        return -1;
    *out = get_le(r->p, 8);
    r->p += 8;
    return 0;
}

int pr_varint_long(preader *r, uint64_t *out)
{
    *out = 0;
    if (!pr_ok(r))
        return -1;
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p == r->end)
            return pr_fail(r, "the section ends inside a number");
        unsigned char b = *r->p++;
        /* The tenth byte may carry one bit only. */
        if (shift == 63 && b > 1)
            return pr_fail(r, "a number is longer than 64 bits");
        x |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *out = x;
            return 0;
        }
    }
    return pr_fail(r, "a number is longer than 64 bits");
}

int pr_svarint(preader *r, int64_t *out)
{
    uint64_t z;
    *out = 0;
    if (pr_varint(r, &z))
        return -1;
    *out = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
    return 0;
}

int pr_count_fail(preader *r, uint64_t max, const char *what, uint64_t *out)
{
    uint64_t bad = *out;
    *out = 0;
    return pr_fail(r, "%s %llu is out of range (at most %llu)", what, (unsigned long long)bad,
                   (unsigned long long)max);
}

int pr_bytes(preader *r, size_t n, const unsigned char **out)
{
    *out = NULL;
    if (need(r, n, "a byte string"))
        return -1;
    *out = r->p;
    r->p += n;
    return 0;
}

int pr_string(preader *r, size_t max, const char *what, const char **s, size_t *len)
{
    uint64_t n;
    const unsigned char *b;
    *s = NULL;
    *len = 0;
    if (pr_count(r, max < pr_left(r) ? max : pr_left(r), what, &n))
        return -1;
    /* every string of the format is text: the message points at the bad
       byte itself */
    size_t bad;
    if (!utf8_check((const char *)r->p, n, &bad)) {
        r->p += bad;
        return pr_fail(r, "a string of %llu bytes is not valid UTF-8 at its byte %zu",
                       (unsigned long long)n, bad + 1);
    }
    if (pr_bytes(r, n, &b))
        return -1;
    *s = (const char *)b;
    *len = n;
    return 0;
}

/* ---- values ---------------------------------------------------------------- */

static int get_value(preader *r, value *out, int depth);

/* The engine's own nesting limit (value.h): a file cannot hold a value
   Cypher could not have built. */
static int too_deep(preader *r)
{
    return pr_fail(r, "values nest deeper than %d", PCODEC_MAX_DEPTH);
}

/* The recursion's frames hold no local whose address is taken (a
   sanitizer pads each such local): counts and tags are read by these two,
   -1 on failure. */
static NOINLINE int64_t read_count(preader *r, uint64_t max, const char *what)
{
    uint64_t n;
    return pr_count(r, max, what, &n) ? -1 : (int64_t)n;
}

static NOINLINE int read_tag(preader *r)
{
    uint8_t tag;
    return pr_u8(r, &tag) ? -1 : tag;
}

/* n items into a new array from scratch memory, each decoded at depth;
   NULL on failure. */
static value *get_items(preader *r, size_t n, int depth)
{
    value *items = mem_calloc(mem_scratch(), mem_array_size(n, sizeof(value)));
    if (!items) {
        pr_nomem(r, "reading a list");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (get_value(r, &items[i], depth)) {
            for (size_t j = 0; j < i; j++)
                value_release(&items[j]);
            mem_free(mem_scratch(), items);
            return NULL;
        }
    return items;
}

static bool path_shape(const value *items, size_t n)
{
    if (n % 2 == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (value_kind(&items[i]) != (i % 2 ? VAL_REL : VAL_NODE))
            return false;
    return true;
}

static int get_list(preader *r, bool path, value *out, int depth)
{
    /* Every item takes at least one byte: a count beyond the bytes left
       is damage, and must not size an allocation. */
    int64_t count = read_count(r, pr_left(r), "a list length");
    if (count < 0)
        return -1;
    size_t n = (size_t)count;
    value *items = get_items(r, n, depth + 1);
    if (!items)
        return -1;
    if (path && !path_shape(items, n)) {
        for (size_t i = 0; i < n; i++)
            value_release(&items[i]);
        mem_free(mem_scratch(), items);
        return pr_fail(r, "a path is not node, relationship, ..., node");
    }
    int rc = path ? value_path_from(r->m, items, n, out) : value_list_from(r->m, items, n, out);
    mem_free(mem_scratch(), items);
    if (rc == VALUE_TOO_DEEP)
        return too_deep(r);
    return rc ? pr_nomem(r, "building a list") : 0;
}

static NOINLINE int get_map(preader *r, value *out, int depth)
{
    uint64_t n;
    if (pr_count(r, pr_left(r) / 2, "a map size", &n))
        return -1;
    size_t bytes = mem_array_size(n, sizeof(value));
    value *keys = mem_calloc(mem_scratch(), bytes);
    value *vals = keys ? mem_calloc(mem_scratch(), bytes) : NULL;
    if (!vals) {
        if (keys)
            mem_free(mem_scratch(), keys);
        return pr_nomem(r, "reading a map");
    }
    const char *prev = NULL;
    size_t prev_len = 0, i;
    for (i = 0; i < n; i++) {
        const char *k;
        size_t kl;
        if (pr_string(r, SIZE_MAX, "a map key length", &k, &kl))
            break;
        /* Keys are stored sorted (memcmp, then length), each once. */
        int c = prev ? memcmp(prev, k, kl < prev_len ? kl : prev_len) : -1;
        if (prev && (c > 0 || (c == 0 && prev_len >= kl))) {
            pr_fail(r, "map keys are not in order, or repeat");
            break;
        }
        prev = k;
        prev_len = kl;
        if (value_string(r->m, k, kl, &keys[i])) {
            pr_nomem(r, "reading a map key");
            break;
        }
        if (get_value(r, &vals[i], depth + 1)) {
            value_release(&keys[i]);
            break;
        }
    }
    int rc = -1;
    if (i == n) {
        rc = value_map_from(r->m, keys, vals, n, out);
        rc = rc == VALUE_TOO_DEEP ? too_deep(r) : rc ? pr_nomem(r, "building a map") : 0;
    } else {
        for (size_t j = 0; j < i; j++) {
            value_release(&keys[j]);
            value_release(&vals[j]);
        }
    }
    mem_free(mem_scratch(), keys);
    mem_free(mem_scratch(), vals);
    return rc;
}

/* A temporal is read into its decoded form with each field bounded only
   by what the decoded form can hold; temporal_check then applies the
   engine's own definition of a valid value (its ranges), so a file holds
   exactly what Cypher could have made. */
static NOINLINE int get_temporal(preader *r, value_type kind, value *out)
{
    temporal t;
    memset(&t, 0, sizeof t);
    t.kind = kind;
    uint64_t nanos = 0;
    int64_t off = 0;
    if (kind == VAL_DATE || kind == VAL_LOCALDATETIME || kind == VAL_DATETIME) {
        if (pr_svarint(r, &t.days))
            return -1;
    }
    if (kind != VAL_DATE) {
        if (pr_varint(r, &nanos))
            return -1;
        if (nanos >= (uint64_t)TM_NANOS_PER_DAY)
            return pr_fail(r, "a time of day is out of range");   /* before the cast */
        t.nanos = (int64_t)nanos;
    }
    if (kind == VAL_TIME || kind == VAL_DATETIME) {
        if (pr_svarint(r, &off))
            return -1;
        if (off > INT32_MAX || off < INT32_MIN)
            return pr_fail(r, "a zone offset is out of range");   /* before the cast */
        t.offset = (int32_t)off;
    }
    if (kind == VAL_DATETIME) {
        const char *z;
        size_t zl;
        if (pr_string(r, TM_ZONE_MAX - 1, "a zone name length", &z, &zl))
            return -1;
        if (memchr(z, '\0', zl))
            return pr_fail(r, "a zone name holds a NUL byte");
        memcpy(t.zone, z, zl);
        t.zone[zl] = '\0';
    }
    static const char *const names[] = {
        [VAL_DATE] = "Date", [VAL_LOCALTIME] = "LocalTime", [VAL_TIME] = "Time",
        [VAL_LOCALDATETIME] = "LocalDateTime", [VAL_DATETIME] = "DateTime",
    };
    temporal_err e;
    if (temporal_check(&t, &e) != 0)
        return pr_fail(r, "a %s value: %s", names[kind], e.msg);
    return temporal_to_value(r->m, &t, out) ? pr_nomem(r, "reading a datetime") : 0;
}

static NOINLINE int get_duration(preader *r, value *out)
{
    duration d;
    uint64_t nanos;
    if (pr_svarint(r, &d.months) || pr_svarint(r, &d.days) || pr_svarint(r, &d.seconds) ||
        pr_varint(r, &nanos))
        return -1;
    if (nanos >= (uint64_t)TM_NANOS_PER_SEC)
        return pr_fail(r, "a duration's nanoseconds are out of range");
    d.nanos = (int32_t)nanos;
    return duration_to_value(r->m, &d, out) ? pr_nomem(r, "reading a duration") : 0;
}

/* A value that holds no other: everything but lists, paths and maps. */
static NOINLINE int get_scalar(preader *r, uint8_t tag, value *out)
{
    switch (tag) {
    case FT_NULL:
        return 0;
    case FT_FALSE:
    case FT_TRUE:
        *out = value_bool(tag == FT_TRUE);
        return 0;
    case FT_INT: {
        int64_t i;
        if (pr_svarint(r, &i))
            return -1;
        *out = value_int(i);
        return 0;
    }
    case FT_FLOAT: {
        uint64_t bits;
        double f;
        if (pr_u64(r, &bits))
            return -1;
        memcpy(&f, &bits, sizeof f);
        *out = value_float(f);
        return 0;
    }
    case FT_STRING: {
        const char *s;
        size_t n;
        if (pr_string(r, SIZE_MAX, "a string length", &s, &n))
            return -1;
        return value_string(r->m, s, n, out) ? pr_nomem(r, "reading a string") : 0;
    }
    case FT_NODE:
    case FT_REL: {
        uint64_t id;
        if (pr_varint(r, &id))
            return -1;
        *out = tag == FT_NODE ? value_node(id) : value_rel(id);
        return 0;
    }
    case FT_DATE:
        return get_temporal(r, VAL_DATE, out);
    case FT_LOCALTIME:
        return get_temporal(r, VAL_LOCALTIME, out);
    case FT_TIME:
        return get_temporal(r, VAL_TIME, out);
    case FT_LOCALDATETIME:
        return get_temporal(r, VAL_LOCALDATETIME, out);
    case FT_DATETIME:
        return get_temporal(r, VAL_DATETIME, out);
    case FT_DURATION:
        return get_duration(r, out);
    default:
        r->p--;   /* point the message at the tag */
        return pr_fail(r, "unknown value tag %u", tag);
    }
}

/* Recursive through get_list / get_map, so it keeps its frame to the tag:
   the scalars are read in get_scalar. */
static int get_value(preader *r, value *out, int depth)
{
    *out = value_null();
    if (depth > PCODEC_MAX_DEPTH)
        return too_deep(r);
    int tag = read_tag(r);
    switch (tag) {
    case -1:
        return -1;
    case FT_LIST:
    case FT_PATH:
        return get_list(r, tag == FT_PATH, out, depth);
    case FT_MAP:
        return get_map(r, out, depth);
    default:
        return get_scalar(r, (uint8_t)tag, out);
    }
}

int pr_value(preader *r, value *out)
{
    /* The commonest property values, integers, without the general
       decoder's calls: a tag then a zigzag number. */
    if (r->end - r->p >= 2 && r->p[0] == FT_INT && r->p[1] < 0x80) {
        uint64_t z = r->p[1];
        r->p += 2;
        *out = value_int((int64_t)(z >> 1) ^ -(int64_t)(z & 1));
        return 0;
    }
    return get_value(r, out, 0);
}
