/*
 * Point lookups through hashed indices (a unique and a hash index, whose
 * trees keep a phash trie) while a writer changes their keys: readers take
 * views, hold some across many writes, and check every lookup against what
 * the same view reads off the nodes.  Runs under ThreadSanitizer too (label
 * "concurrency"), so a trie node written in place while a view can reach
 * it shows up as a race even when the answers come out right.
 *
 * The writer runs ROUNDS rounds; round r sets node i = r % NNODES's "k" to
 * (r + 1) * NNODES + i (unique: every value names one node) and its "h" to
 * r % 5 (a hash index with several nodes per key).  In any view:
 *   - strata_index_get of each node's "k" finds that node, and of its
 *     earlier values (which no node holds now) finds nothing;
 *   - strata_index_get of each node's "h" finds the least node holding
 *     that "h" in the view.
 * A held view answers the same after the writer has moved on.  Readers
 * run until the writer is done (and take at least READER_ITERS views).
 *
 * Threads never call cmocka's assertions: they record the first failure,
 * and the main thread fails the test with it after joining.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "strata.h"

#define NNODES 24
#define ROUNDS 3000
#define NREADERS 2
#define READER_ITERS 150

typedef struct shared {
    strata_graph *g;
    strata_token label, key_k, key_h;
    strata_index idx_k, idx_h;
    strata_id nodes[NNODES];
    atomic_bool done, failed;
    pthread_mutex_t fail_lock;
    char failure[256];
} shared;

static void report(shared *s, const char *what, long a, long b)
{
    pthread_mutex_lock(&s->fail_lock);
    if (!s->failure[0])
        snprintf(s->failure, sizeof s->failure, "%s (%ld, %ld)", what, a, b);
    pthread_mutex_unlock(&s->fail_lock);
    atomic_store(&s->failed, true);
}

static bool set_int(shared *s, strata_id node, strata_token key, int64_t x)
{
    strata_value *v = strata_value_int(x);
    bool ok = v && strata_node_set(s->g, node, key, v) == STRATA_OK;
    strata_value_free(&v);
    return ok;
}

static void *writer(void *arg)
{
    shared *s = arg;
    for (int64_t r = 0; r < ROUNDS; r++) {
        int64_t i = r % NNODES;
        if (!set_int(s, s->nodes[i], s->key_k, (r + 1) * NNODES + i) ||
            !set_int(s, s->nodes[i], s->key_h, r % 5))
            report(s, "writer: a SET failed", (long)r, (long)i);
    }
    atomic_store(&s->done, true);
    return NULL;
}

static bool read_int(strata_view *v, strata_id node, strata_token key, strata_value *tmp,
                     int64_t *out)
{
    return strata_node_read(v, node, key, tmp) == STRATA_OK &&
           strata_value_get_int(tmp, out) == STRATA_OK;
}

/* What index idx finds under x in v: the node, or -1 for nothing. */
static long lookup(strata_view *v, strata_index idx, int64_t x)
{
    strata_value *k = strata_value_int(x);
    const strata_value *key = k;
    strata_id id;
    strata_status st = k ? strata_index_get(v, idx, &key, 1, &id) : STRATA_ENOMEM;
    strata_value_free(&k);
    return st == STRATA_OK ? (long)id : st == STRATA_ENOTFOUND ? -1 : -2;
}

/* Checks v; answers[] gets every lookup's result, for comparing later. */
static bool check_view(shared *s, strata_view *v, strata_value *tmp, long answers[2 * NNODES])
{
    int64_t k[NNODES], h[NNODES];
    for (int i = 0; i < NNODES; i++)
        if (!read_int(v, s->nodes[i], s->key_k, tmp, &k[i]) ||
            !read_int(v, s->nodes[i], s->key_h, tmp, &h[i])) {
            report(s, "reader: a node read failed", i, 0);
            return false;
        }
    for (int i = 0; i < NNODES; i++) {
        long got = lookup(v, s->idx_k, k[i]);
        answers[i] = got;
        if (got != (long)s->nodes[i]) {
            report(s, "unique index: a node's key finds another node", i, got);
            return false;
        }
        long least = -1;
        for (int j = 0; j < NNODES; j++)
            if (h[j] == h[i] && (least < 0 || (long)s->nodes[j] < least))
                least = (long)s->nodes[j];
        got = lookup(v, s->idx_h, h[i]);
        answers[NNODES + i] = got;
        if (got != least) {
            report(s, "hash index: a key finds another node than its least", got, least);
            return false;
        }
    }
    /* Values nobody holds: node i's earlier ones (the writer's step for a
       node is NNODES * NNODES; the first was i), which a held view's
       levels may still mention as removed, and a negative one. */
    for (int i = 0; i < NNODES; i++) {
        int64_t gone[2] = { k[i] - NNODES * NNODES, k[i] != i ? i : -1 };
        for (int j = 0; j < 2; j++)
            if (lookup(v, s->idx_k, gone[j]) != -1) {
                report(s, "unique index: a value nobody holds finds a node", (long)gone[j],
                       lookup(v, s->idx_k, gone[j]));
                return false;
            }
    }
    return true;
}

static void *reader(void *arg)
{
    shared *s = arg;
    strata_value *tmp = strata_value_null();
    strata_view *held = NULL;
    long held_answers[2 * NNODES], answers[2 * NNODES];
    /* Until the writer is done, and at least READER_ITERS views. */
    for (int it = 0; tmp && (it < READER_ITERS || !atomic_load(&s->done)) &&
                     !atomic_load(&s->failed);
         it++) {
        strata_view *v;
        if (strata_snapshot(s->g, &v) != STRATA_OK) {
            report(s, "reader: snapshot failed", it, 0);
            break;
        }
        bool ok = check_view(s, v, tmp, answers);
        if (ok && it % 10 == 0) {   /* hold this one across the next writes */
            if (held) {
                ok = check_view(s, held, tmp, answers) &&
                     memcmp(answers, held_answers, sizeof answers) == 0;
                if (!ok)
                    report(s, "a held view answers differently later", it, 0);
                strata_view_release(&held);
            }
            held = v;
            v = NULL;
            if (ok)
                check_view(s, held, tmp, held_answers);
        }
        strata_view_release(&v);
        if (!ok)
            break;
    }
    strata_view_release(&held);
    strata_value_free(&tmp);
    return NULL;
}

static void test_point_lookups_under_writer(void **state)
{
    (void)state;
    static shared s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.fail_lock, NULL);
    assert_int_equal(strata_graph_new(&s.g), STRATA_OK);
    assert_int_equal(strata_token_intern(s.g, STRATA_LABEL, "P", &s.label), STRATA_OK);
    assert_int_equal(strata_token_intern(s.g, STRATA_KEY, "k", &s.key_k), STRATA_OK);
    assert_int_equal(strata_token_intern(s.g, STRATA_KEY, "h", &s.key_h), STRATA_OK);
    assert_int_equal(strata_index_create(s.g, STRATA_INDEX_UNIQUE, false, s.label, &s.key_k, 1,
                                         &s.idx_k), STRATA_OK);
    assert_int_equal(strata_index_create(s.g, STRATA_INDEX_HASH, false, s.label, &s.key_h, 1,
                                         &s.idx_h), STRATA_OK);
    for (int i = 0; i < NNODES; i++) {
        assert_int_equal(strata_node_create(s.g, &s.label, 1, &s.nodes[i]), STRATA_OK);
        assert_true(set_int(&s, s.nodes[i], s.key_k, i));
        assert_true(set_int(&s, s.nodes[i], s.key_h, i % 5));
    }
    pthread_t wt, rt[NREADERS];
    for (int i = 0; i < NREADERS; i++)
        assert_int_equal(pthread_create(&rt[i], NULL, reader, &s), 0);
    assert_int_equal(pthread_create(&wt, NULL, writer, &s), 0);
    pthread_join(wt, NULL);
    for (int i = 0; i < NREADERS; i++)
        pthread_join(rt[i], NULL);
    if (s.failure[0])
        fail_msg("%s", s.failure);
    strata_view *v;
    assert_int_equal(strata_snapshot(s.g, &v), STRATA_OK);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    strata_view_release(&v);
    strata_graph_free(&s.g);
    pthread_mutex_destroy(&s.fail_lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_point_lookups_under_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
