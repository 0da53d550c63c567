/*
 * The importer's id table (query/id_map.h): ids are strings, so "1",
 * "01", "+1" and " 1" are four ids whether a space keeps its ids in a
 * dense array or in the hash table; the move from one to the other (at
 * the first id that is not a small decimal) keeps every id and its node;
 * a node id past 32 bits moves a dense space to the table too; a lookup
 * through a hint (id_map_prefetch, id_map_find_at) answers as one without,
 * even when the space moved between the two; and an allocation failure at
 * any point leaves the map answering as before.  Checked against a plain
 * list of every id added.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "query/id_map.h"
#include "storage/mem.h"

#define MAX_KEYS 512

typedef struct model {
    char keys[MAX_KEYS][24];
    uint32_t spaces[MAX_KEYS];
    uint64_t nodes[MAX_KEYS];
    size_t n;
} model;

static bool model_find(const model *md, uint32_t space, const char *key, uint64_t *node)
{
    for (size_t i = 0; i < md->n; i++)
        if (md->spaces[i] == space && strcmp(md->keys[i], key) == 0) {
            *node = md->nodes[i];
            return true;
        }
    return false;
}

static void add(id_map *m, model *md, uint32_t space, const char *key, uint64_t node)
{
    uint64_t want = 0, got = 0;
    bool had = model_find(md, space, key, &want);
    int rc = id_map_add(m, space, key, strlen(key), node, &got);
    assert_int_equal(rc, had ? 0 : 1);
    if (had) {
        assert_int_equal(got, want);
        return;
    }
    assert_true(md->n < MAX_KEYS);
    snprintf(md->keys[md->n], sizeof md->keys[md->n], "%s", key);
    md->spaces[md->n] = space;
    md->nodes[md->n++] = node;
}

/* Every id the model holds is found with its node, and the probes (ids
   that differ only in how the number is written) answer as the model. */
static void check(const id_map *m, const model *md)
{
    static const char *const probes[] = {"0", "1", "2", "3", "01", "+1", " 1", "1 ", "7", "007", "-7",
                                         "64", "65", "1000000", "123456789012345678",
                                         "1234567890123456789", "x", ""};
    assert_int_equal(id_map_count(m), md->n);
    for (size_t i = 0; i < md->n; i++) {
        uint64_t node = 0;
        assert_true(id_map_find(m, md->spaces[i], md->keys[i], strlen(md->keys[i]), &node));
        assert_int_equal(node, md->nodes[i]);
    }
    for (uint32_t space = 0; space < 5; space++)
        for (size_t p = 0; p < sizeof probes / sizeof *probes; p++) {
            uint64_t want = 0, got = 0;
            bool had = model_find(md, space, probes[p], &want);
            size_t len = strlen(probes[p]);
            assert_int_equal(id_map_find(m, space, probes[p], len, &got), had);
            if (had)
                assert_int_equal(got, want);
            id_map_hint hint;
            id_map_prefetch(m, space, probes[p], len, &hint);
            got = 0;
            assert_int_equal(id_map_find_at(m, space, probes[p], len, &hint, &got), had);
            if (had)
                assert_int_equal(got, want);
        }
}

/* Space 0 stays dense (small numbers only); space 1 turns to the table at
   "01"; space 2 at a number far past its count. */
static void fill(id_map *m, model *md)
{
    for (uint64_t i = 0; i < 40; i++) {
        char key[24];
        snprintf(key, sizeof key, "%llu", (unsigned long long)(i * 3 % 41));
        add(m, md, 0, key, 100 + i);
        add(m, md, 1, key, 200 + i);
        add(m, md, 2, key, 300 + i);
        if (i == 20) {
            add(m, md, 1, "01", 999);
            add(m, md, 2, "1000000", 998);
        }
    }
    add(m, md, 0, "7", 5);                        /* there: keeps its node */
    add(m, md, 1, "1", 5);
    add(m, md, 1, "123456789012345678", 997);     /* 18 digits, into the arena */
    add(m, md, 2, "1234567890123456789", 996);    /* 19: not a dense number */
    add(m, md, 0, " 1", 995);                     /* moves space 0 now */
    add(m, md, 3, "1", 17);
    add(m, md, 3, "2", (uint64_t)UINT32_MAX);     /* past a dense slot: moves space 3 */
    add(m, md, 3, "3", (uint64_t)1 << 40);
}

/* Each key found at the hint taken for it, as the model says, in space 0. */
static void finds_at_hints(const id_map *m, const model *md, const char *const *keys,
                           const id_map_hint *hints, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t want = 0, got = 0;
        bool had = model_find(md, 0, keys[i], &want);
        assert_int_equal(id_map_find_at(m, 0, keys[i], strlen(keys[i]), &hints[i], &got), had);
        if (had)
            assert_int_equal(got, want);
    }
}

/* Hints taken while a space is dense still find (or miss) the same ids
   once it has moved to the table. */
static void test_hints_across_a_move(void **state)
{
    (void)state;
    id_map *m = id_map_new();
    assert_non_null(m);
    model md = {0};
    for (uint64_t i = 0; i < 30; i++) {
        char key[24];
        snprintf(key, sizeof key, "%llu", (unsigned long long)i);
        add(m, &md, 0, key, 1000 + i);
    }
    static const char *const keys[] = {"3", "29", "30", "03", "x", "100000"};
    id_map_hint hints[6];
    for (size_t i = 0; i < 6; i++)
        id_map_prefetch(m, 0, keys[i], strlen(keys[i]), &hints[i]);
    add(m, &md, 0, "x", 7);   /* moves space 0 to the table */
    finds_at_hints(m, &md, keys, hints, 6);
    check(m, &md);
    id_map_free(&m);
}

/* Hints taken before the dense array grows to hold their numbers. */
static void test_hints_across_a_growth(void **state)
{
    (void)state;
    id_map *m = id_map_new();
    assert_non_null(m);
    model md = {0};
    char key[24];
    for (uint64_t i = 0; i < 40; i++) {
        snprintf(key, sizeof key, "%llu", (unsigned long long)i);
        add(m, &md, 0, key, 1000 + i);
    }
    static const char *const keys[] = {"5", "150", "300", "99999"};
    id_map_hint hints[4];
    for (size_t i = 0; i < 4; i++)
        id_map_prefetch(m, 0, keys[i], strlen(keys[i]), &hints[i]);
    for (uint64_t i = 40; i <= 300; i++) {
        snprintf(key, sizeof key, "%llu", (unsigned long long)i);
        add(m, &md, 0, key, 1000 + i);
    }
    finds_at_hints(m, &md, keys, hints, 4);
    check(m, &md);
    id_map_free(&m);
}

static void test_dense_and_table_agree(void **state)
{
    (void)state;
    id_map *m = id_map_new();
    assert_non_null(m);
    model md = {0};
    fill(m, &md);
    check(m, &md);
    assert_true(id_map_bytes(m) > 0);
    id_map_free(&m);
    assert_null(m);
}

/* At every failing allocation, the add that failed changed nothing the
   map answers, and a later retry succeeds. */
static void test_allocation_failures(void **state)
{
    (void)state;
    size_t scratch = mem_ctx_bytes(mem_scratch());
    for (long k = 1;; k++) {
        id_map *m = id_map_new();
        assert_non_null(m);
        model md = {0};
        mem_fail_at(k);
        bool failed = false;
        for (uint64_t i = 0; i < 200 && !failed; i++) {
            char key[24];
            snprintf(key, sizeof key, i % 50 == 49 ? "k%llu" : "%llu", (unsigned long long)i);
            uint64_t node;
            int rc = id_map_add(m, (uint32_t)(i % 3), key, strlen(key), i, &node);
            if (rc < 0) {
                failed = true;
                mem_fail_clear();
                check(m, &md);   /* as before the failed add */
                add(m, &md, (uint32_t)(i % 3), key, i);
            } else {
                assert_int_equal(rc, 1);
                snprintf(md.keys[md.n], sizeof md.keys[md.n], "%s", key);
                md.spaces[md.n] = (uint32_t)(i % 3);
                md.nodes[md.n++] = i;
            }
        }
        bool injected = mem_fail_count() >= k;
        mem_fail_clear();
        check(m, &md);
        id_map_free(&m);
        assert_int_equal(mem_ctx_bytes(mem_scratch()), scratch);
        if (!injected && !failed)
            break;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_and_table_agree),
        cmocka_unit_test(test_hints_across_a_move),
        cmocka_unit_test(test_hints_across_a_growth),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
