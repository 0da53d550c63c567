/*
 * Tests for storage/mem.h's writer cache: a randomised model of allocations
 * and frees through a bound cache (every live block keeps its bytes, the
 * context counts exactly the live blocks, the cache stays within its
 * bounds, frees of another context or on an unbound thread are not kept),
 * failure injection on a block the cache would serve, and, through the
 * graph API, that a write under a held view reuses the blocks the previous
 * round's fold-back freed — all of them — while the views keep reading
 * what they held.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <string.h>

#include <strata.h>

#include "storage/mem.h"
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_ON 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_ON 1
#endif
#endif
#ifdef ASAN_ON
#include <sanitizer/asan_interface.h>
#endif

#include "support/mem_fixture.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Sizes the cache keeps (multiples of 8 up to MEM_CACHE_MAX), odd ones a
   jemalloc build keeps by class, and ones past it. */
static size_t random_size(void)
{
    switch (rnd() % 4) {
    case 0:
        return 8 * (1 + rnd() % (MEM_CACHE_MAX / 8));
    case 1:
        return 1 + rnd() % MEM_CACHE_MAX;
    case 2:
        return 136;   /* an inner chunk's size at fanout 16 */
    default:
        return MEM_CACHE_MAX + 1 + rnd() % 4000;
    }
}

#define LIVE_MAX 200

typedef struct block {
    unsigned char *p;
    size_t size;
    unsigned char fill;
} block;

/* Every live block still holds its fill, and the context counts exactly
   their usable bytes. */
static void check_model(mem_ctx *m, const block *live, size_t n)
{
    size_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t b = 0; b < live[i].size; b++)
            assert_int_equal(live[i].p[b], live[i].fill);
        sum += mem_usable_size(m, live[i].p);
    }
    assert_int_equal(mem_ctx_bytes(m), sum);
}

static void check_bounds(const mem_cache *c)
{
    size_t blocks = 0, bytes = 0;
    for (size_t k = 0; k < MEM_CACHE_LISTS; k++) {
        assert_true(c->n[k] <= MEM_CACHE_DEPTH);
        assert_true((c->n[k] == 0) == (c->head[k] == NULL));
        blocks += c->n[k];
        bytes += (size_t)c->n[k] * k * 8;
    }
    assert_int_equal(blocks, mem_cache_blocks(c));
    assert_int_equal(bytes, c->bytes);
    assert_true(c->bytes <= MEM_CACHE_BYTES);
}

/* Random allocations, callocs and frees (sized and not) through a bound
   cache, with the cache now and then unbound (its frees then go to the
   allocator) or drained, checked against a model after every step. */
static void test_random_model(void **state)
{
    mem_ctx *m = *state;
    mem_ctx *other = mem_ctx_new();
    assert_non_null(other);
    mem_cache c, c_other;
    mem_cache_init(&c, m);
    mem_cache_init(&c_other, other);
    block live[LIVE_MAX];
    size_t n = 0;
    uint64_t hits = mem_cache_hits();
    bool bound = true;
    assert_null(mem_cache_bind(&c));
    for (int step = 0; step < 6000; step++) {
        uint64_t op = rnd() % 100;
        if (op < 50 && n < LIVE_MAX) {
            size_t size = random_size();
            size_t kept = mem_cache_blocks(&c);
            unsigned char *p = op < 10 ? mem_calloc(m, size) : mem_alloc(m, size);
            assert_non_null(p);
            if (op < 10)
                for (size_t b = 0; b < size; b++)
                    assert_int_equal(p[b], 0);
            /* A kept block serves only while bound. */
            if (!bound)
                assert_int_equal(mem_cache_blocks(&c), kept);
            live[n].p = p;
            live[n].size = size;
            live[n].fill = (unsigned char)(1 + step % 255);
            memset(p, live[n].fill, size);
            n++;
        } else if (op < 95 && n) {
            size_t i = rnd() % n;
            size_t kept = mem_cache_blocks(&c);
            if (rnd() % 4)
                mem_free_sized(m, live[i].p, live[i].size);
            else
                mem_free(m, live[i].p);   /* unsized: never kept */
            if (!bound)
                assert_int_equal(mem_cache_blocks(&c), kept);
            live[i] = live[--n];
        } else if (op < 97) {
            /* Another context's cache bound: m's frees are not kept by it
               and do not reach c. */
            size_t size = 8 * (1 + rnd() % 8);
            void *p = mem_alloc(m, size);
            assert_non_null(p);
            mem_cache *outer = mem_cache_bind(&c_other);
            size_t kept = mem_cache_blocks(&c);
            mem_free_sized(m, p, size);
            assert_int_equal(mem_cache_blocks(&c_other), 0);
            assert_int_equal(mem_cache_blocks(&c), kept);
            assert_ptr_equal(mem_cache_bind(outer), &c_other);
        } else if (op < 99) {
            mem_cache_bind(bound ? NULL : &c);
            bound = !bound;
        } else {
            mem_cache_bind(NULL);
            mem_cache_drain(&c);
            assert_int_equal(mem_cache_blocks(&c), 0);
            mem_cache_bind(bound ? &c : NULL);
        }
        check_model(m, live, n);
        check_bounds(&c);
    }
    assert_true(mem_cache_hits() > hits);
    while (n)
        mem_free(m, live[--n].p);
    mem_cache_bind(NULL);
    mem_cache_drain(&c);
    mem_cache_drain(&c_other);
    assert_int_equal(mem_ctx_bytes(other), 0);
    mem_ctx_release(other);
}

/* The last block freed is the next one taken for its size, and an
   injected failure fails an allocation the cache could have served,
   leaving the block kept and nothing counted. */
static void test_reuse_and_injected_failure(void **state)
{
    mem_ctx *m = *state;
    mem_cache c;
    mem_cache_init(&c, m);
    mem_cache_bind(&c);
    void *p = mem_alloc(m, 136);
    assert_non_null(p);
    mem_free_sized(m, p, 136);
    assert_int_equal(mem_cache_blocks(&c), 1);
    assert_int_equal(mem_ctx_bytes(m), 0);

    mem_fail_at(1);
    assert_null(mem_alloc(m, 136));
    mem_fail_clear();
    assert_int_equal(mem_cache_blocks(&c), 1);
    assert_int_equal(mem_ctx_bytes(m), 0);

    uint64_t hits = mem_cache_hits();
    void *q = mem_alloc(m, 136);
    assert_ptr_equal(q, p);
    assert_int_equal(mem_cache_hits(), hits + 1);
    assert_int_equal(mem_cache_blocks(&c), 0);
    assert_int_equal(mem_ctx_bytes(m), mem_usable_size(m, q));

    /* Past the depth of a class, frees go to the allocator. */
    void *many[MEM_CACHE_DEPTH + 4];
    many[0] = q;
    for (int i = 1; i < MEM_CACHE_DEPTH + 4; i++)
        assert_non_null(many[i] = mem_alloc(m, 136));
    for (int i = 0; i < MEM_CACHE_DEPTH + 4; i++)
        mem_free_sized(m, many[i], 136);
    assert_int_equal(mem_cache_blocks(&c), MEM_CACHE_DEPTH);
    assert_int_equal(mem_ctx_bytes(m), 0);
    mem_cache_bind(NULL);
    mem_cache_drain(&c);
}

/* Under AddressSanitizer a kept block is poisoned but for its first
   word, the link to the next kept block: the leak checker skips poisoned
   memory, so a list linked through poisoned words reads as leaked to a
   program that exits with its graph open. */
static void test_kept_blocks_poisoned_but_links(void **state)
{
#ifdef ASAN_ON
    mem_ctx *m = *state;
    mem_cache c;
    mem_cache_init(&c, m);
    mem_cache_bind(&c);
    char *p = mem_alloc(m, 72), *q = mem_alloc(m, 72);
    assert_non_null(p);
    assert_non_null(q);
    mem_free_sized(m, p, 72);
    mem_free_sized(m, q, 72);
    assert_int_equal(mem_cache_blocks(&c), 2);
    for (char *b = p; b; b = b == p ? q : NULL) {
        assert_false(__asan_address_is_poisoned(b));
        assert_true(__asan_address_is_poisoned(b + sizeof(void *)));
        assert_true(__asan_address_is_poisoned(b + 71));
    }
    assert_ptr_equal(mem_alloc(m, 72), q);
    assert_false(__asan_address_is_poisoned(q + 71));
    mem_free_sized(m, q, 72);
    mem_cache_bind(NULL);
    mem_cache_drain(&c);
#else
    (void)state;
    skip();
#endif
}

/* The largest blocks kept: a B+tree node at the release order (1,032
   bytes) and MEM_CACHE_MAX itself come back from the cache. */
static void test_largest_blocks_kept(void **state)
{
    mem_ctx *m = *state;
    mem_cache c;
    mem_cache_init(&c, m);
    mem_cache_bind(&c);
    const size_t sizes[] = { 1032, MEM_CACHE_MAX };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        void *p = mem_alloc(m, sizes[i]);
        assert_non_null(p);
        size_t kept = mem_cache_blocks(&c);
        mem_free_sized(m, p, sizes[i]);
        assert_int_equal(mem_cache_blocks(&c), kept + 1);
        uint64_t hits = mem_cache_hits();
        void *q = mem_alloc(m, sizes[i]);
        assert_ptr_equal(q, p);
        assert_int_equal(mem_cache_hits(), hits + 1);
        mem_free_sized(m, q, sizes[i]);
    }
    mem_cache_bind(NULL);
    mem_cache_drain(&c);
    assert_int_equal(mem_ctx_bytes(m), 0);
}

/* ---- through the graph ---------------------------------------------------- */

#define NODES 3000
#define ROUNDS 200

static int64_t node_int(strata_view *v, strata_id node, strata_token key)
{
    strata_value *val = NULL;
    assert_int_equal(strata_node_get(v, node, key, &val), STRATA_OK);
    int64_t i = -1;
    assert_int_equal(strata_value_get_int(val, &i), STRATA_OK);
    strata_value_free(&val);
    return i;
}

/* Rounds of the W1 shape: take a view, SET an existing property of a
   random node, check the view still reads the value it held, drop the
   view.  Once warm, each round's allocations (the version header, the
   path's chunks, the record) are served by the blocks the previous
   round's fold-back freed: no miss at all. */
static void test_held_view_rounds_reuse_blocks(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token key;
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "p", &key), STRATA_OK);
    static int64_t model[NODES];
    for (strata_id i = 0; i < NODES; i++) {
        strata_id id;
        assert_int_equal(strata_node_create(g, NULL, 0, &id), STRATA_OK);
        assert_int_equal(id, i);
        strata_value *v = strata_value_int((int64_t)i);
        assert_int_equal(strata_node_set(g, id, key, v), STRATA_OK);
        strata_value_free(&v);
        model[i] = (int64_t)i;
    }
    uint64_t hits = 0, misses = 0;
    for (int r = 0; r < ROUNDS; r++) {
        if (r == ROUNDS / 4) {   /* warm */
            hits = mem_cache_hits();
            misses = mem_cache_misses();
        }
        strata_view *view;
        assert_int_equal(strata_snapshot(g, &view), STRATA_OK);
        strata_id node = rnd() % NODES;
        strata_value *v = strata_value_int(1000000 + r);
        assert_int_equal(strata_node_set(g, node, key, v), STRATA_OK);
        strata_value_free(&v);
        assert_int_equal(node_int(view, node, key), model[node]);
        model[node] = 1000000 + r;
        strata_view_release(&view);
    }
    uint64_t rounds = ROUNDS - ROUNDS / 4;
    assert_int_equal(mem_cache_misses() - misses, 0);
    /* A version header, a record and a root-to-leaf path of at least two
       chunks a round. */
    assert_true(mem_cache_hits() - hits >= 4 * rounds);

    strata_view *view;
    assert_int_equal(strata_snapshot(g, &view), STRATA_OK);
    for (strata_id i = 0; i < NODES; i++)
        assert_int_equal(node_int(view, i, key), model[i]);
    strata_view_release(&view);
    strata_graph_free(&g);
}

/* Every allocation of a held-view SET failed in turn, with the cache warm:
   the write reports out of memory and changes nothing, the view keeps its
   value, and the next attempt goes on until one succeeds. */
static void test_held_view_set_failure_sweep(void **state)
{
    (void)state;
    strata_graph *g;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    strata_token key;
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "p", &key), STRATA_OK);
    for (strata_id i = 0; i < 300; i++) {
        strata_id id;
        assert_int_equal(strata_node_create(g, NULL, 0, &id), STRATA_OK);
        strata_value *v = strata_value_int(0);
        assert_int_equal(strata_node_set(g, id, key, v), STRATA_OK);
        strata_value_free(&v);
    }
    for (int warm = 0; warm < 8; warm++) {
        strata_view *view;
        assert_int_equal(strata_snapshot(g, &view), STRATA_OK);
        strata_value *v = strata_value_int(warm);
        assert_int_equal(strata_node_set(g, (strata_id)warm * 37, key, v), STRATA_OK);
        strata_value_free(&v);
        strata_view_release(&view);
    }
    strata_value *v = strata_value_int(42);
    for (long k = 1;; k++) {
        strata_view *view;
        assert_int_equal(strata_snapshot(g, &view), STRATA_OK);
        mem_fail_at(k);
        strata_status s = strata_node_set(g, 250, key, v);
        mem_fail_clear();
        if (s == STRATA_OK) {
            assert_int_equal(node_int(view, 250, key), 0);
            strata_view_release(&view);
            break;
        }
        assert_int_equal(s, STRATA_ENOMEM);
        assert_int_equal(node_int(view, 250, key), 0);
        strata_view_release(&view);
        assert_int_equal(strata_snapshot(g, &view), STRATA_OK);
        assert_int_equal(node_int(view, 250, key), 0);
        strata_view_release(&view);
        assert_true(k < 1000);
    }
    strata_value_free(&v);
    strata_view *view;
    assert_int_equal(strata_snapshot(g, &view), STRATA_OK);
    assert_int_equal(node_int(view, 250, key), 42);
    strata_view_release(&view);
    strata_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_random_model, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_reuse_and_injected_failure, mem_ctx_setup,
                                        mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_kept_blocks_poisoned_but_links, mem_ctx_setup,
                                        mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_largest_blocks_kept, mem_ctx_setup,
                                        mem_ctx_teardown),
        cmocka_unit_test(test_held_view_rounds_reuse_blocks),
        cmocka_unit_test(test_held_view_set_failure_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
