#include "index/index_set.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

struct idx {
    index_def def;
    level_stack *stack;
    uint64_t stmt;      /* the statement that last saved this stack's state */
};

struct index_set {
    atomic_uint refs;
    uint32_t n;
    uint32_t next_id;
    struct idx e[];
};

static inline size_t set_size(uint32_t n) { return sizeof(index_set) + (size_t)n * sizeof(struct idx); }

void idxset_retain(index_set *s)
{
    if (s)
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void idxset_release(mem_ctx *m, index_set **sp)
{
    index_set *s = *sp;
    *sp = NULL;
    if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (uint32_t i = 0; i < s->n; i++)
        lstack_release(m, &s->e[i].stack);
    mem_free_sized(m, s, set_size(s->n));
}

size_t idxset_private_bytes(const index_set *s)
{
    if (!s || atomic_load_explicit(&s->refs, memory_order_acquire) != 1)
        return 0;
    size_t bytes = set_size(s->n);
    for (uint32_t i = 0; i < s->n; i++)
        bytes += lstack_private_bytes(s->e[i].stack);
    return bytes;
}

uint32_t idxset_len(const index_set *s) { return s ? s->n : 0; }
const index_def *idxset_def(const index_set *s, uint32_t pos) { return &s->e[pos].def; }
const level_stack *idxset_stack(const index_set *s, uint32_t pos) { return s->e[pos].stack; }
uint32_t idxset_next_id(const index_set *s) { return s ? s->next_id : 0; }

int idxset_find(const index_set *s, uint32_t id)
{
    for (uint32_t i = 0; i < idxset_len(s); i++)
        if (s->e[i].def.id == id)
            return (int)i;
    return -1;
}

int idxset_find_name(const index_set *s, const char *name)
{
    for (uint32_t i = 0; i < idxset_len(s); i++)
        if (strcmp(s->e[i].def.name, name) == 0)
            return (int)i;
    return -1;
}

/* "index_7" or "constraint_7", with a further suffix in the unlikely case
   that a user chose that name already. */
static void generate_name(const index_set *s, index_def *d)
{
    const char *base = d->kind == IDX_UNIQUE ? "constraint" : "index";
    snprintf(d->name, sizeof d->name, "%s_%u", base, d->id);
    for (unsigned n = 1; idxset_find_name(s, d->name) >= 0; n++)
        snprintf(d->name, sizeof d->name, "%s_%u_%u", base, d->id, n);
}

int idxset_find_same(const index_set *s, const index_def *d)
{
    for (uint32_t i = 0; i < idxset_len(s); i++) {
        const index_def *e = &s->e[i].def;
        if (e->kind == d->kind && e->on_rels == d->on_rels && e->token == d->token &&
            e->nkeys == d->nkeys && !memcmp(e->keys, d->keys, d->nkeys * sizeof *d->keys))
            return (int)i;
    }
    return -1;
}

/* A private copy of s with room for n entries (the first min(n, s->n) copied). */
static index_set *copy_set(mem_ctx *m, const index_set *s, uint32_t n)
{
    index_set *c = mem_alloc(m, set_size(n));
    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    c->n = n;
    c->next_id = idxset_next_id(s);
    for (uint32_t i = 0; i < n && i < idxset_len(s); i++) {
        c->e[i] = s->e[i];
        lstack_retain(c->e[i].stack);
    }
    MEM_NOTE_COPIED(idxset_len(s));
    return c;
}

int idxset_own(mem_ctx *m, index_set **sp)
{
    index_set *s = *sp;
    if (!s || atomic_load_explicit(&s->refs, memory_order_acquire) == 1)
        return 0;
    index_set *c = copy_set(m, s, s->n);
    if (!c)
        return -1;
    idxset_release(m, sp);
    *sp = c;
    return 0;
}

level_stack **idxset_stack_mut(index_set *s, uint32_t pos) { return &s->e[pos].stack; }
uint64_t *idxset_stmt_mut(index_set *s, uint32_t pos) { return &s->e[pos].stmt; }

int idxset_add_as(mem_ctx *m, index_set **sp, const index_def *d, level_stack *ls)
{
    index_def copy = *d;
    if (idxset_add(m, sp, &copy, ls) != 0)
        return -1;
    index_set *s = *sp;
    s->e[s->n - 1].def.id = d->id;
    if (d->id >= s->next_id)
        s->next_id = d->id + 1;
    return 0;
}

int idxset_set_next_id(mem_ctx *m, index_set **sp, uint32_t next_id)
{
    if (!*sp) {
        index_set *c = copy_set(m, NULL, 0);
        if (!c)
            return -1;
        *sp = c;
    } else if (idxset_own(m, sp) != 0) {
        return -1;
    }
    (*sp)->next_id = next_id;
    return 0;
}

int idxset_add(mem_ctx *m, index_set **sp, index_def *d, level_stack *ls)
{
    index_set *c = copy_set(m, *sp, idxset_len(*sp) + 1);
    if (!c) {
        lstack_release(m, &ls);
        return -1;
    }
    d->id = c->next_id++;
    if (!d->name[0]) {
        c->n--;     /* the new entry is not there yet */
        generate_name(c, d);
        c->n++;
    }
    c->e[c->n - 1].def = *d;
    c->e[c->n - 1].stack = ls;
    c->e[c->n - 1].stmt = 0;
    idxset_release(m, sp);
    *sp = c;
    return 0;
}

int idxset_remove(mem_ctx *m, index_set **sp, uint32_t pos)
{
    index_set *s = *sp;
    index_set *c = copy_set(m, s, s->n - 1);
    if (!c)
        return -1;
    if (pos < s->n - 1) {
        /* The last entry moves into pos; its reference moves with it. */
        lstack_release(m, &c->e[pos].stack);
        c->e[pos] = s->e[s->n - 1];
        lstack_retain(c->e[pos].stack);
    }
    idxset_release(m, sp);
    *sp = c;
    return 0;
}

const value *props_view_get(const props_view *p, uint32_t key)
{
    if (p->overridden && p->key == key)
        return p->val;
    return props_get(p->rec, key);
}

bool idx_uses_key(const index_def *d, uint32_t key)
{
    if (key == UINT32_MAX)
        return true;
    for (uint32_t i = 0; i < d->nkeys; i++)
        if (d->keys[i] == key)
            return true;
    return false;
}

int idx_key(const index_def *d, mem_ctx *m, const props_view *p, value *out)
{
    *out = value_null();
    if (d->nkeys == 1) {
        const value *v = props_view_get(p, d->keys[0]);
        if (!v || value_is_null(v))
            return 0;
        *out = value_retain(*v);
        return 1;
    }
    value parts[IDX_MAX_KEYS];
    for (uint32_t i = 0; i < d->nkeys; i++) {
        const value *v = props_view_get(p, d->keys[i]);
        if (!v || value_is_null(v))
            return 0;
    }
    for (uint32_t i = 0; i < d->nkeys; i++)
        parts[i] = value_retain(*props_view_get(p, d->keys[i]));
    return value_list_from(m, parts, d->nkeys, out) == 0 ? 1 : -1;
}
