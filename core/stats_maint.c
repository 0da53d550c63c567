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

int stats_compute(const catalog *c, const store *st, mem_ctx *m, rel_stats *out)
{
    for (uint64_t n = 0; n < store_node_slots(st); n++) {
        const node_meta *nm = store_node(st, n);
        if (!nm || !nm->labelset)
            continue;
        const adj_block *adj = store_node_adj(st, n);
        for (size_t i = 0; i < labelset_len(c, nm->labelset); i++) {
            uint32_t label = labelset_at(c, nm->labelset, i);
            if (stats_label_prepare(out, m, label, adj) != 0) {
                relstats_release(out, m);
                return -1;
            }
            stats_label_move(out, m, label, adj, +1);
        }
    }
    return 0;
}
