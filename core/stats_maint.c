#include "core/stats_maint.h"

static int prepare_labels(const catalog *c, rel_stats *s, uint32_t ls, uint32_t type)
{
    for (size_t i = 0; i < labelset_len(c, ls); i++)
        if (relstats_prepare(s, c->m, labelset_at(c, ls, i), type) != 0)
            return -1;
    return 0;
}

int stats_rel_prepare(const catalog *c, rel_stats *s, uint32_t start_ls, uint32_t end_ls,
                      uint32_t type)
{
    return prepare_labels(c, s, start_ls, type) ||
           (end_ls != start_ls && prepare_labels(c, s, end_ls, type)) ? -1 : 0;
}

void stats_rel_count(const catalog *c, rel_stats *s, uint32_t start_ls, uint32_t end_ls,
                     uint32_t type, int sign)
{
    for (size_t i = 0; i < labelset_len(c, start_ls); i++)
        relstats_add(s, c->m, labelset_at(c, start_ls, i), type, ADJ_OUT, sign);
    for (size_t i = 0; i < labelset_len(c, end_ls); i++)
        relstats_add(s, c->m, labelset_at(c, end_ls, i), type, ADJ_IN, sign);
}

/* An empty segment (a delete may leave one) counts nothing and is not
   touched, so a label change and its undo touch the same elements even
   where the adjacency's room differs. */
int stats_label_prepare(rel_stats *s, mem_ctx *m, uint32_t label, const adj_block *adj)
{
    for (uint32_t i = 0; i < adj_nsegments(adj); i++) {
        int dir;
        uint32_t type;
        if (adj_segment_info(adj, i, &dir, &type) &&
            relstats_prepare(s, m, label, type) != 0)
            return -1;
    }
    return 0;
}

void stats_label_move(rel_stats *s, mem_ctx *m, uint32_t label, const adj_block *adj, int sign)
{
    for (uint32_t i = 0; i < adj_nsegments(adj); i++) {
        int dir;
        uint32_t type, n = adj_segment_info(adj, i, &dir, &type);
        if (n)
            relstats_add(s, m, label, type, dir, sign * (int64_t)n);
    }
}

/* Counts gathered per (label set, type) before they go to the statistics:
   a node's segments add to a slot of a small direct-mapped table, and a
   slot is written out under each label of its set only when another pair
   takes it, and at the end.  Nodes of one label set have the same few
   types, so a pass over millions of segments writes the statistics a few
   times per pair instead of twice per segment and label (LSQB SF0.1: a
   third of the load's instructions without it). */
#define PENDING_SLOTS 256

typedef struct pending {
    uint32_t ls, type;   /* ls 0: the slot is free */
    uint64_t n[2];
} pending;

int stats_ends_add(const catalog *c, rel_stats *s, mem_ctx *m, uint32_t ls, uint32_t type,
                   const uint64_t n[2])
{
    for (size_t i = 0; i < labelset_len(c, ls); i++) {
        uint32_t label = labelset_at(c, ls, i);
        if (relstats_prepare(s, m, label, type) != 0)
            return -1;
        relstats_add(s, m, label, type, ADJ_OUT, (int64_t)n[ADJ_OUT]);
        relstats_add(s, m, label, type, ADJ_IN, (int64_t)n[ADJ_IN]);
    }
    return 0;
}

static int flush(const catalog *c, rel_stats *out, mem_ctx *m, pending *p)
{
    if (p->ls && stats_ends_add(c, out, m, p->ls, p->type, p->n) != 0)
        return -1;
    *p = (pending){ 0 };
    return 0;
}

int stats_compute(const catalog *c, const store *st, mem_ctx *m, rel_stats *out)
{
    pending slots[PENDING_SLOTS] = { { 0 } };
    for (uint64_t n = 0; n < store_node_slots(st); n++) {
        const node_meta *nm = store_node(st, n);
        if (!nm || !nm->labelset)
            continue;
        const adj_block *adj = store_node_adj(st, n);
        for (uint32_t i = 0; i < adj_nsegments(adj); i++) {
            int dir;
            uint32_t type, k = adj_segment_info(adj, i, &dir, &type);
            uint32_t h = nm->labelset * 0x9e3779b1u ^ type * 0x85ebca6bu;
            pending *p = &slots[(h >> 24) % PENDING_SLOTS];
            if (p->ls != nm->labelset || p->type != type) {
                if (flush(c, out, m, p) != 0)
                    goto oom;
                p->ls = nm->labelset;
                p->type = type;
            }
            p->n[dir] += k;
        }
    }
    for (size_t i = 0; i < PENDING_SLOTS; i++)
        if (flush(c, out, m, &slots[i]) != 0)
            goto oom;
    return 0;
oom:
    relstats_release(out, m);
    return -1;
}
