/*
 * The calls a log record carries: their encoding (docs/FORMAT.md, "Log
 * records"), their decoding with every field checked, and their replay
 * through the public write API.  core/wal.h explains what is logged.
 */
#include <string.h>

#include "core/persist_codec.h"
#include "core/wal.h"

#define WAL_MAX_LIST 1024   /* labels of a node (MAX_LABELS_PER_NODE), keys of an index */

static int buf_room(wal_buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    if (more > SIZE_MAX / 2 - b->len)
        return -1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more)
        cap *= 2;
    unsigned char *p = mem_realloc(mem_scratch(), b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

void walbuf_free(wal_buf *b)
{
    mem_free(mem_scratch(), b->p);
    memset(b, 0, sizeof *b);
}

static void put_varint(wal_buf *b, uint64_t x)
{
    while (x >= 0x80) {
        b->p[b->len++] = (unsigned char)(x | 0x80);
        x >>= 7;
    }
    b->p[b->len++] = (unsigned char)x;
}

static void put_bytes(wal_buf *b, const void *p, size_t n)
{
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* A value through the snapshot's codec (persist_codec.h): encoded into a
   buffer with no file behind it, grown until the value fits (a writer
   whose buffer overflows tries to write to fd -1 and records the error). */
static int put_value(wal_buf *b, const value *v)
{
    size_t cap = 64;
    for (;;) {
        if (buf_room(b, cap) != 0)
            return -1;
        pwriter w;
        pw_init(&w, -1, b->p + b->len, cap);
        pw_value(&w, v);
        if (!w.err && w.off == 0) {
            b->len += w.len;
            return 0;
        }
        if (cap > SIZE_MAX / 4)
            return -1;
        cap *= 4;
    }
}

int walrec_encode(wal_buf *b, const wal_op *op)
{
    size_t start = b->len;
    /* Fixed parts: opcode, up to four varints, a kind and a flag. */
    size_t need = 1 + 4 * 10 + 2 + 10 + op->name_len + op->n * 5;
    if (buf_room(b, need) != 0)
        return -1;
    b->p[b->len++] = (unsigned char)op->code;
    switch (op->code) {
    case WOP_TOKEN:
        b->p[b->len++] = op->kind;
        put_varint(b, op->id);
        put_varint(b, op->name_len);
        put_bytes(b, op->name, op->name_len);
        break;
    case WOP_NODE_CREATE:
        put_varint(b, op->n);
        for (size_t i = 0; i < op->n; i++)
            put_varint(b, op->list[i]);
        break;
    case WOP_NODE_DELETE:
    case WOP_NODE_DETACH:
    case WOP_REL_DELETE:
        put_varint(b, op->id);
        break;
    case WOP_LABEL_ADD:
    case WOP_LABEL_REMOVE:
        put_varint(b, op->id);
        put_varint(b, op->a);
        break;
    case WOP_REL_CREATE:
        put_varint(b, op->id);
        put_varint(b, op->b);
        put_varint(b, op->a);
        break;
    case WOP_NODE_SET:
    case WOP_REL_SET: {
        put_varint(b, op->id);
        put_varint(b, op->a);
        value null = value_null();
        if (put_value(b, op->val ? op->val : &null) != 0) {
            b->len = start;
            return -1;
        }
        break;
    }
    case WOP_INDEX_CREATE:
        b->p[b->len++] = op->kind;
        b->p[b->len++] = op->flag;
        put_varint(b, op->a);
        put_varint(b, op->n);
        for (size_t i = 0; i < op->n; i++)
            put_varint(b, op->list[i]);
        __attribute__((fallthrough));   /* then the name */
    case WOP_INDEX_DROP:
        put_varint(b, op->name_len);
        put_bytes(b, op->name, op->name_len);
        break;
    default:
        /* Unit boundaries are never captured. */
        b->len = start;
        break;
    }
    return 0;
}

/* ---- decoding -------------------------------------------------------------- */

typedef struct cursor {
    const unsigned char *p, *end;
    const char *why;
} cursor;

static int get_varint(cursor *c, uint64_t *out)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end) {
            c->why = "a number runs past the record";
            return -1;
        }
        unsigned char byte = *c->p++;
        if (shift == 63 && byte > 1) {
            c->why = "a number overflows 64 bits";
            return -1;
        }
        x |= (uint64_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) {
            *out = x;
            return 0;
        }
    }
    c->why = "a number overflows 64 bits";
    return -1;
}

static int get_u8(cursor *c, uint8_t *out)
{
    if (c->p >= c->end) {
        c->why = "a field runs past the record";
        return -1;
    }
    *out = *c->p++;
    return 0;
}

static int get_list(cursor *c, uint32_t *scratch, wal_op *op, size_t max)
{
    uint64_t n, x;
    if (get_varint(c, &n))
        return -1;
    if (n > max) {
        c->why = "a label or key list is too long";
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (get_varint(c, &x))
            return -1;
        if (x > UINT32_MAX) {
            c->why = "a token id exceeds 32 bits";
            return -1;
        }
        scratch[i] = (uint32_t)x;
    }
    op->list = scratch;
    op->n = (size_t)n;
    return 0;
}

static int get_name(cursor *c, wal_op *op, size_t max)
{
    uint64_t n;
    if (get_varint(c, &n))
        return -1;
    if (n > max || n > (uint64_t)(c->end - c->p)) {
        c->why = "a name runs past the record";
        return -1;
    }
    op->name = (const char *)c->p;
    op->name_len = (size_t)n;
    c->p += n;
    return 0;
}

static int get_value(cursor *c, value *out)
{
    preader r;
    pr_init(&r, c->p, 0, (size_t)(c->end - c->p), mem_scratch(), "log record");
    if (pr_value(&r, out) != 0) {
        c->why = r.status == STRATA_ENOMEM ? "out of memory decoding a value"
                                           : "a value is malformed";
        return -1;
    }
    c->p = r.p;
    return 0;
}

int walrec_decode(const unsigned char **p, const unsigned char *end, wal_op *op,
                  uint32_t *scratch, value *val_out, const char **why)
{
    cursor c = { *p, end, NULL };
    memset(op, 0, sizeof *op);
    *val_out = value_null();
    uint8_t code = 0;
    int rc = get_u8(&c, &code);
    op->code = (wal_opcode)code;
    if (rc == 0) {
        switch (op->code) {
        case WOP_TOKEN:
            rc = get_u8(&c, &op->kind) || get_varint(&c, &op->id) || get_name(&c, op, 65535);
            if (!rc && op->kind > STRATA_KEY) {
                c.why = "a token kind is unknown";
                rc = -1;
            }
            break;
        case WOP_NODE_CREATE:
            rc = get_list(&c, scratch, op, WAL_MAX_LIST);
            break;
        case WOP_NODE_DELETE:
        case WOP_NODE_DETACH:
        case WOP_REL_DELETE:
            rc = get_varint(&c, &op->id);
            break;
        case WOP_LABEL_ADD:
        case WOP_LABEL_REMOVE:
            rc = get_varint(&c, &op->id) || get_varint(&c, &op->a);
            break;
        case WOP_REL_CREATE:
            rc = get_varint(&c, &op->id) || get_varint(&c, &op->b) || get_varint(&c, &op->a);
            break;
        case WOP_NODE_SET:
        case WOP_REL_SET:
            rc = get_varint(&c, &op->id) || get_varint(&c, &op->a) || get_value(&c, val_out);
            op->val = val_out;
            break;
        case WOP_INDEX_CREATE: {
            uint8_t flag = 0;
            rc = get_u8(&c, &op->kind) || get_u8(&c, &flag) || get_varint(&c, &op->a) ||
                 get_list(&c, scratch, op, 8) || get_name(&c, op, STRATA_INDEX_NAME_MAX - 1);
            op->flag = flag;
            if (!rc && flag > 1) {
                c.why = "a flag is neither 0 nor 1";
                rc = -1;
            }
            break;
        }
        case WOP_INDEX_DROP:
            rc = get_name(&c, op, STRATA_INDEX_NAME_MAX - 1);
            break;
        default:
            c.why = "an opcode is unknown";
            rc = -1;
            break;
        }
    }
    if (rc) {
        value_release(val_out);
        *why = c.why ? c.why : "a field is malformed";
        return -1;
    }
    *p = c.p;
    return 0;
}

/* ---- replay ------------------------------------------------------------------ */

static strata_status apply_token(strata_graph *g, const wal_op *op)
{
    char name[65536];
    memcpy(name, op->name, op->name_len);
    name[op->name_len] = '\0';
    strata_token t;
    strata_status s = strata_token_intern(g, (strata_token_kind)op->kind, name, &t);
    if (s == STRATA_OK && t != op->id)
        s = graph_fail(g, STRATA_ECORRUPT, "token %s was %llu when logged, %u on replay",
                       name, (unsigned long long)op->id, t);
    return s;
}

static strata_status apply_index_create(strata_graph *g, const wal_op *op)
{
    /* A decoded name has its length (at most 63: walrec_decode checks);
       a live call's is the caller's NUL-terminated string, checked by
       strata_index_create_named itself. */
    char copy[STRATA_INDEX_NAME_MAX];
    const char *name = op->name;
    if (name && op->name_len) {
        memcpy(copy, op->name, op->name_len);
        copy[op->name_len] = '\0';
        name = copy;
    }
    if (op->a > UINT32_MAX)
        return graph_fail(g, STRATA_ECORRUPT, "an index token exceeds 32 bits");
    return strata_index_create_named(g, (strata_index_kind)op->kind, op->flag,
                                     (strata_token)op->a, op->list, op->n, name, op->idx_out);
}

static strata_status apply_index_drop(strata_graph *g, const wal_op *op)
{
    char name[STRATA_INDEX_NAME_MAX];
    memcpy(name, op->name, op->name_len);
    name[op->name_len] = '\0';
    strata_view *v = NULL;
    strata_index idx;
    strata_status s = strata_snapshot(g, &v);
    if (s == STRATA_OK)
        s = strata_index_find(v, name, &idx);
    strata_view_release(&v);
    if (s == STRATA_ENOTFOUND)
        return graph_fail(g, STRATA_ECORRUPT, "the log drops index %s, which does not exist",
                          name);
    return s ? s : strata_index_drop(g, idx);
}

static bool token_fits(uint64_t x) { return x <= UINT32_MAX; }

strata_status walrec_apply(strata_graph *g, const wal_op *op)
{
    /* Outputs are the caller's (NULL stays NULL: the call then fails as
       it would without a log); replay points them at its own. */
    uint64_t *out = op->out;
    /* The wrapper around strata_value the public setters take. */
    const strata_value *val = (const strata_value *)(const void *)op->val;
    static const strata_value null_value = { { 0 } };
    switch (op->code) {
    case WOP_TOKEN:
        return apply_token(g, op);
    case WOP_NODE_CREATE:
        return strata_node_create(g, op->list, op->n, out);
    case WOP_NODE_DELETE:
        return strata_node_delete(g, op->id);
    case WOP_NODE_DETACH:
        return strata_node_detach_delete(g, op->id);
    case WOP_LABEL_ADD:
    case WOP_LABEL_REMOVE:
        if (!token_fits(op->a))
            return graph_fail(g, STRATA_ECORRUPT, "a label token exceeds 32 bits");
        return op->code == WOP_LABEL_ADD
                   ? strata_node_add_label(g, op->id, (strata_token)op->a)
                   : strata_node_remove_label(g, op->id, (strata_token)op->a);
    case WOP_REL_CREATE:
        if (!token_fits(op->a))
            return graph_fail(g, STRATA_ECORRUPT, "a type token exceeds 32 bits");
        return strata_rel_create(g, op->id, op->b, (strata_token)op->a, out);
    case WOP_REL_DELETE:
        return strata_rel_delete(g, op->id);
    case WOP_NODE_SET:
    case WOP_REL_SET:
        if (!token_fits(op->a))
            return graph_fail(g, STRATA_ECORRUPT, "a key token exceeds 32 bits");
        if (!val)
            val = &null_value;
        return op->code == WOP_NODE_SET ? strata_node_set(g, op->id, (strata_token)op->a, val)
                                        : strata_rel_set(g, op->id, (strata_token)op->a, val);
    case WOP_INDEX_CREATE:
        return apply_index_create(g, op);
    case WOP_INDEX_DROP:
        return apply_index_drop(g, op);
    case WOP_STMT_BEGIN:
        return strata_statement_begin(g);
    case WOP_STMT_END:
        return strata_statement_end(g, op->flag);
    case WOP_BEGIN:
        return strata_begin(g);
    case WOP_COMMIT:
        return strata_commit(g);
    case WOP_ROLLBACK:
        return strata_rollback(g);
    }
    return graph_fail(g, STRATA_ECORRUPT, "unknown log opcode %d", (int)op->code);
}
