/*
 * Embedding strata: build a small social graph through the C API, take a
 * view, change the graph under it, and print both states.
 *
 *   cc example.c $(pkg-config --cflags --libs strata) -o example
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strata.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        strata_status s_ = (call);                                                   \
        if (s_ != STRATA_OK) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, strata_errstr(s_), \
                    strata_errmsg(g));                                               \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static void print_graph(strata_view *v, strata_token person, strata_token name,
                        strata_token knows, strata_token since)
{
    strata_node_iter *it;
    strata_id n;
    if (strata_nodes_by_label(v, person, &it) != STRATA_OK)
        return;
    while (strata_node_iter_next(it, &n)) {
        strata_value *val;
        const char *s = "?";
        strata_node_get(v, n, name, &val);
        strata_value_get_string(val, &s, NULL);
        printf("  (%llu:Person {name: '%s'})", (unsigned long long)n, s);
        strata_edge_iter *ei;
        strata_id rel, other;
        const char *sep = " knows";
        strata_neighbours(v, n, STRATA_OUT, knows, &ei);
        while (strata_edge_iter_next(ei, &rel, &other)) {
            strata_value *yr;
            int64_t y = 0;
            strata_rel_get(v, rel, since, &yr);
            strata_value_get_int(yr, &y);
            printf("%s %llu (since %lld)", sep, (unsigned long long)other, (long long)y);
            sep = ",";
            strata_value_free(&yr);
        }
        strata_edge_iter_free(&ei);
        printf("\n");
        strata_value_free(&val);
    }
    strata_node_iter_free(&it);
}

int main(void)
{
    strata_graph *g;
    if (strata_graph_new(&g) != STRATA_OK)
        return 1;
    strata_token person, name, knows, since;
    CHECK(strata_token_intern(g, STRATA_LABEL, "Person", &person));
    CHECK(strata_token_intern(g, STRATA_KEY, "name", &name));
    CHECK(strata_token_intern(g, STRATA_RELTYPE, "KNOWS", &knows));
    CHECK(strata_token_intern(g, STRATA_KEY, "since", &since));

    const char *names[] = { "Ada", "Grace", "Edsger", "Barbara" };
    strata_id ids[4];
    for (int i = 0; i < 4; i++) {
        CHECK(strata_node_create(g, &person, 1, &ids[i]));
        strata_value *v = strata_value_string(names[i], strlen(names[i]));
        CHECK(strata_node_set(g, ids[i], name, v));
        strata_value_free(&v);
    }
    int pairs[][3] = { { 0, 1, 1980 }, { 1, 2, 1975 }, { 2, 3, 1990 }, { 3, 0, 2001 } };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        strata_id r;
        CHECK(strata_rel_create(g, ids[pairs[i][0]], ids[pairs[i][1]], knows, &r));
        strata_value *y = strata_value_int(pairs[i][2]);
        CHECK(strata_rel_set(g, r, since, y));
        strata_value_free(&y);
    }

    strata_view *before;
    CHECK(strata_snapshot(g, &before));

    /* Writes under a held view: the view keeps its state, the graph forks
       and copies only what these writes touch. */
    strata_value *v = strata_value_string("Ada Lovelace", 12);
    CHECK(strata_node_set(g, ids[0], name, v));
    strata_value_free(&v);
    CHECK(strata_node_detach_delete(g, ids[2]));

    strata_view *after;
    CHECK(strata_snapshot(g, &after));
    printf("held view (%llu nodes, %llu relationships):\n",
           (unsigned long long)strata_node_count(before),
           (unsigned long long)strata_rel_count(before));
    print_graph(before, person, name, knows, since);
    printf("after the writes (%llu nodes, %llu relationships):\n",
           (unsigned long long)strata_node_count(after),
           (unsigned long long)strata_rel_count(after));
    print_graph(after, person, name, knows, since);

    strata_view_release(&before);
    strata_view_release(&after);
    strata_graph_free(&g);
    return 0;
}
