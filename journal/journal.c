#include "journal/journal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

const char *const undo_kind_names[] = {
#define UNDO_NAME(k) #k,
    UNDO_KINDS(UNDO_NAME)
#undef UNDO_NAME
};

void journal_init(journal *j) { memset(j, 0, sizeof *j); }

int journal_reserve(journal *j, mem_ctx *m, const journal_need *need)
{
    uint64_t more = 0;
    for (int k = 0; k < UNDO_KIND_COUNT; k++)
        more += need->of[k];   /* a few 32-bit counts: no overflow in 64 bits */
    if (more > UINT32_MAX - j->n)
        return -1;
    uint32_t room = j->n + (uint32_t)more;
    if (room <= j->cap) {
        j->room_end = room;
        return 0;
    }
    uint32_t cap = j->cap ? j->cap : 16;
    while (cap < room)
        cap = cap > UINT32_MAX / 2 ? room : cap * 2;
    undo_entry *e = mem_realloc_sized(m, j->e, (size_t)j->cap * sizeof *e, (size_t)cap * sizeof *e);
    if (!e)
        return -1;
    j->e = e;
    j->cap = cap;
    j->room_end = room;
    return 0;
}

undo_entry *journal_push(journal *j, undo_kind kind)
{
    /* Invariant 2: the prepare phase reserved room.  A push past it is our
       bug, never input's: past cap it would write past the array, and
       past room_end it is a write appending more than it reserved, which
       the array's spare room would otherwise hide. */
    bool within = j->n < j->room_end && j->room_end <= j->cap;
#ifdef STRATA_TESTING
    if (!within)
        abort();   /* test builds check it even where asserts are compiled out */
#endif
    assert(within && "journal_push past its reservation");
    (void)within;
    undo_entry *e = &j->e[j->n++];
    memset(e, 0, sizeof *e);
    e->kind = (uint8_t)kind;
    return e;
}

/* Releases whatever an entry still owns. */
static void entry_release(undo_entry *e, mem_ctx *m)
{
    switch ((undo_kind)e->kind) {
    case UNDO_PROP:
        value_release(&e->u.old);
        break;
    case UNDO_INDEX_STACK:
        lstack_release(m, &e->u.stack);
        break;
    case UNDO_NODE_DELETED:
        props_release(m, &e->u.node.props);
        adj_release(m, &e->u.node.adj);
        break;
    case UNDO_REL_DELETED:
        props_release(m, &e->u.rel.props);
        break;
    case UNDO_NODE_CREATED:
    case UNDO_REL_CREATED:
    case UNDO_LABELS:
        break;
    }
}

void journal_truncate(journal *j, mem_ctx *m, uint32_t count)
{
    while (j->n > count)
        entry_release(&j->e[--j->n], m);
    /* What was reserved past the entries dropped was for a write that is
       over. */
    if (j->room_end > j->n)
        j->room_end = j->n;
}

void journal_free(journal *j, mem_ctx *m)
{
    journal_truncate(j, m, 0);
    mem_free_sized(m, j->e, (size_t)j->cap * sizeof *j->e);
    journal_init(j);
}
