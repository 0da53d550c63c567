#include "core/index_maint.h"
#include "core/txn.h"

#include <stdio.h>
#include <string.h>

void node_state(const catalog *c, uint32_t labelset, const prop_rec *props, uint32_t *buf,
                entity_state *out)
{
    size_t n = labelset_len(c, labelset);
    for (size_t i = 0; i < n; i++)
        buf[i] = labelset_at(c, labelset, i);
    out->on_rels = false;
    out->tokens = buf;
    out->ntokens = n;
    out->props = (props_view){ props, false, 0, NULL };
}

uint64_t idx_next_member(const version *v, const index_def *d, uint64_t from)
{
    return labelidx_next(d->on_rels ? v->rel_types : v->labels, d->token, from);
}

int idx_entity_key(const version *v, const index_def *d, mem_ctx *m, uint64_t id, value *out)
{
    props_view pv = { d->on_rels ? store_rel_props(&v->st, id) : store_node_props(&v->st, id),
                      false, 0, NULL };
    return idx_key(d, m, &pv, out);
}

static bool covers(const index_def *d, const entity_state *e)
{
    if (!e || d->on_rels != e->on_rels)
        return false;
    for (size_t i = 0; i < e->ntokens; i++)
        if (e->tokens[i] == d->token)
            return true;
    return false;
}

void idxplan_free(idx_plan *p)
{
    for (uint32_t i = 0; i < p->n; i++) {
        value_release(&p->c[i].old_key);
        value_release(&p->c[i].new_key);
    }
    if (p->c != p->local)
        mem_free(mem_scratch(), p->c);
    p->c = NULL;
    p->n = p->cap = 0;
}

strata_status idxplan_build(strata_graph *g, version *v, uint64_t id, const entity_state *before,
                            const entity_state *after, uint32_t changed_key, idx_plan *p)
{
    for (uint32_t i = 0; i < idxset_len(v->indexes); i++) {
        const index_def *d = idxset_def(v->indexes, i);
        bool was = covers(d, before), is = covers(d, after);
        /* Untouched: not covered either side, or covered both sides with
           no property of the index changing. */
        if ((!was && !is) || (was && is && !idx_uses_key(d, changed_key)) ||
            (was && is && changed_key == UINT32_MAX))
            continue;
        if (!p->c) {
            p->c = p->local;
            p->cap = IDXPLAN_LOCAL;
        } else if (p->n == p->cap) {
            uint32_t cap = p->cap * 2;
            idx_change *c = mem_alloc(mem_scratch(), (size_t)cap * sizeof *c);
            if (!c)
                goto nomem;
            memcpy(c, p->c, (size_t)p->n * sizeof *c);
            if (p->c != p->local)
                mem_free(mem_scratch(), p->c);
            p->c = c;
            p->cap = cap;
        }
        idx_change *c = &p->c[p->n++];
        *c = (idx_change){ .id = id, .pos = i, .old_key = value_null(), .new_key = value_null() };
        int r = was ? idx_key(d, g->m, &before->props, &c->old_key) : 0;
        if (r < 0)
            goto nomem;
        c->has_old = r == 1;
        r = is ? idx_key(d, g->m, &after->props, &c->new_key) : 0;
        if (r < 0)
            goto nomem;
        c->has_new = r == 1;
        if (!c->has_old && !c->has_new)
            p->n--;
    }
    return STRATA_OK;
nomem:
    idxplan_free(p);
    return graph_fail(g, STRATA_ENOMEM, "out of memory updating an index");
}

/* "label :Person(email)" for messages. */
static void describe(const catalog *c, const index_def *d, char *buf, size_t len)
{
    const char *tok = intern_name(c->tokens[d->on_rels ? STRATA_RELTYPE : STRATA_LABEL],
                                  d->token, NULL);
    int w = snprintf(buf, len, ":%s(", tok ? tok : "?");
    for (uint32_t i = 0; i < d->nkeys && w > 0 && (size_t)w < len; i++)
        w += snprintf(buf + w, len - (size_t)w, "%s%s", i ? ", " : "",
                      intern_name(c->tokens[STRATA_KEY], d->keys[i], NULL));
    if (w > 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, ")");
}

strata_status idxplan_check(strata_graph *g, version *v, const idx_plan *p)
{
    for (uint32_t i = 0; i < p->n; i++) {
        const idx_change *c = &p->c[i];
        const index_def *d = idxset_def(v->indexes, c->pos);
        if (d->kind != IDX_UNIQUE || !c->has_new)
            continue;
        const level_stack *ls = idxset_stack(v->indexes, c->pos);
        uint64_t holder = UINT64_MAX, other = UINT64_MAX;
        /* The point lookup (a hash probe) settles it unless the entity
           itself is the least holder: then walk the key's entries. */
        bool held = lstack_first(ls, &c->new_key, &other);
        if (held && other != c->id) {
            holder = other;
        } else if (held) {
            lstack_cursor *cur = lstack_seek(ls, mem_scratch(), &c->new_key);
            if (!cur)
                return graph_fail(g, STRATA_ENOMEM, "out of memory checking a unique index");
            const value *k;
            while (lstack_cursor_get(cur, &k, &other) && value_order(k, &c->new_key) == 0) {
                if (other != c->id) {
                    holder = other;
                    break;
                }
                lstack_cursor_next(cur);
            }
            lstack_cursor_free(&cur, mem_scratch());
        }
        if (holder != UINT64_MAX) {
            char what[160];
            describe(g->cat, d, what, sizeof what);
            return graph_fail(g, STRATA_ECONSTRAINT,
                              "unique constraint on %s violated: %s %llu already has that value",
                              what, d->on_rels ? "relationship" : "node",
                              (unsigned long long)holder);
        }
    }
    return STRATA_OK;
}

strata_status idxplan_prepare(strata_graph *g, version *v, const idx_plan *p)
{
    if (!p->n)
        return STRATA_OK;
    if (idxset_own(g->m, &v->indexes) != 0)
        return graph_fail(g, STRATA_ENOMEM, "out of memory updating an index");
    /* In a statement, the first write to each index saves its stack, in
       the room the write reserved (an UNDO_INDEX_STACK per change), folded
       back first (level_stack.h, lstack_fold_back). */
    for (uint32_t i = 0; i < p->n; i++) {
        lstack_fold_back(*idxset_stack_mut(v->indexes, p->c[i].pos), &g->pool, g->m);
        txn_save_index_stack(g, v, p->c[i].pos);
    }
    /* Every change draws on one pool: the stacks add up what their ops
       could take (a delete and an insert at most), reserved at once. */
    pbtree_need need = { 0, 0 };
    for (uint32_t i = 0; i < p->n; i++) {
        const idx_change *c = &p->c[i];
        if (lstack_open(idxset_stack_mut(v->indexes, c->pos), &g->pool, g->m,
                        (uint32_t)c->has_old + c->has_new, &need) != 0)
            return graph_fail(g, STRATA_ENOMEM, "out of memory updating an index");
    }
    if (pbtree_pool_reserve(&g->pool, g->m, &need) != 0)
        return graph_fail(g, STRATA_ENOMEM, "out of memory updating an index");
    return STRATA_OK;
}

void idxplan_commit(strata_graph *g, version *v, const idx_plan *p)
{
    for (uint32_t i = 0; i < p->n; i++) {
        const idx_change *c = &p->c[i];
        level_stack *s = *idxset_stack_mut(v->indexes, c->pos);
        /* The entity is in the index under its old key (index_set.h,
           invariant 1) and, that removed, under no key: the stack need
           not be asked first. */
        if (c->has_old)
            lstack_delete_present(s, &g->pool, g->m, &c->old_key, c->id);
        if (c->has_new)
            lstack_insert_absent(s, &g->pool, g->m, &c->new_key, c->id);
    }
}
