/*
 * The graph shapes of the seed project's W1 table, shared by fork_cost and
 * branch: plain (one property per node), 12 columns, and indexed (five
 * properties with a unique, a range, two hash and one composite index).
 * Include after bench_util.h; the includer defines die() and OK().
 */
#ifndef STRATA_BENCH_FIXTURE_H
#define STRATA_BENCH_FIXTURE_H

enum shape { PLAIN, COLUMNS, INDEXED, NSHAPES };
static const char *const shape_names[] = { "plain", "12 columns", "indexed" };

typedef struct graph_fixture {
    strata_graph *g;
    strata_token label, type, keys[12];
    uint64_t n;
} graph_fixture;

static void build(graph_fixture *f, enum shape shape, uint64_t n)
{
    strata_graph *g;
    if (strata_graph_new(&g) != STRATA_OK)
        exit(1);
    f->g = g;
    f->n = n;
    OK(g, strata_token_intern(g, STRATA_LABEL, "Item", &f->label));
    OK(g, strata_token_intern(g, STRATA_RELTYPE, "LINKS", &f->type));
    for (int k = 0; k < 12; k++) {
        char name[8];
        snprintf(name, sizeof name, "p%d", k);
        OK(g, strata_token_intern(g, STRATA_KEY, name, &f->keys[k]));
    }
    int columns = shape == COLUMNS ? 12 : shape == INDEXED ? 5 : 1;
    strata_value *vals[12];
    for (uint64_t i = 0; i < n; i++) {
        strata_id id;
        OK(g, strata_node_create(g, &f->label, 1, &id));
        for (int k = 0; k < columns; k++) {
            /* p0: unique; p1: ~1000 distinct (the seed's range index);
               others: small ints and short strings. */
            int64_t x = k == 0 ? (int64_t)i : k == 1 ? (int64_t)(i % 1000) : (int64_t)(i % 97);
            vals[k] = k % 3 == 2 ? strata_value_string("s", 1) : strata_value_int(x);
            OK(g, strata_node_set(g, id, f->keys[k], vals[k]));
            strata_value_free(&vals[k]);
        }
    }
    if (shape == INDEXED) {
        strata_index idx;
        OK(g, strata_index_create(g, STRATA_INDEX_UNIQUE, false, f->label, &f->keys[0], 1, &idx));
        OK(g, strata_index_create(g, STRATA_INDEX_RANGE, false, f->label, &f->keys[1], 1, &idx));
        OK(g, strata_index_create(g, STRATA_INDEX_HASH, false, f->label, &f->keys[3], 1, &idx));
        OK(g, strata_index_create(g, STRATA_INDEX_HASH, false, f->label, &f->keys[4], 1, &idx));
        OK(g, strata_index_create(g, STRATA_INDEX_HASH, false, f->label, &f->keys[3], 2, &idx));
    }
}

#endif
