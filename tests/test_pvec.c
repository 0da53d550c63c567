/*
 * Tests for storage/pvec: push/get/get_mut across height growth, the
 * copy-on-write contract under a share (the original never changes, one
 * path copy per new leaf, none for a second write to the same leaf, none
 * once the share is gone), element retain/release callbacks, pop, and
 * every allocation failure of push and get_mut.
 *
 * Test builds use PVEC_FANOUT 4, so a few thousand elements make a tree
 * six levels deep.  Each test gets a fresh mem_ctx in *state; the teardown
 * asserts that nothing allocated from it is left.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "storage/pvec.h"

#include "support/mem_fixture.h"

/* ---- plain 64-bit elements and a reference model --------------------- */

static const pvec_ops u64_ops = { sizeof(uint64_t), NULL, NULL };

/* The value the model stores at i unless a test overwrote it. */
static uint64_t pattern(uint64_t i) { return i * 2654435761u + 1; }

static uint64_t get_u64(const pvec *v, uint64_t i)
{
    return *(const uint64_t *)pvec_get(v, &u64_ops, i);
}

static void push_u64(pvec *v, mem_ctx *m, uint64_t x)
{
    uint64_t *e = pvec_push(v, &u64_ops, m);
    assert_non_null(e);
    assert_int_equal(*e, 0);   /* pushed elements start zeroed */
    *e = x;
}

static void set_u64(pvec *v, mem_ctx *m, uint64_t i, uint64_t x)
{
    uint64_t *e = pvec_get_mut(v, &u64_ops, m, i);
    assert_non_null(e);
    *e = x;
}

/* v holds exactly model[0..n) and is structurally sound. */
static void assert_content(const pvec *v, const uint64_t *model, uint64_t n)
{
    assert_int_equal(pvec_check_lenders(v, &u64_ops), 0);
    assert_int_equal(v->len, n);
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(get_u64(v, i), model[i]);
}

/* The smallest height whose tree holds n elements. */
static uint32_t height_for(uint64_t n)
{
    uint32_t h = 0;
    while (((uint64_t)1 << ((h + 1) * PVEC_BITS)) < n)
        h++;
    return h;
}

/* A vector of n pattern() elements, mirrored into a fresh model array. */
static uint64_t *build(pvec *v, mem_ctx *m, uint64_t n)
{
    uint64_t *model = calloc(n ? n : 1, sizeof *model);
    assert_non_null(model);
    pvec_init(v);
    for (uint64_t i = 0; i < n; i++) {
        model[i] = pattern(i);
        push_u64(v, m, model[i]);
    }
    return model;
}

static uint64_t *model_dup(const uint64_t *model, uint64_t n)
{
    uint64_t *copy = malloc((n ? n : 1) * sizeof *copy);
    assert_non_null(copy);
    memcpy(copy, model, n * sizeof *copy);
    return copy;
}

static void test_push_get_sizes(void **state)
{
    mem_ctx *m = *state;
    static const uint64_t sizes[] = { 1, 4, 5, 16, 17, 1000, 5000 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint64_t n = sizes[s];
        uint64_t *model = calloc(n, sizeof *model);
        assert_non_null(model);
        pvec v;
        pvec_init(&v);
        assert_int_equal(pvec_check_lenders(&v, &u64_ops), 0);
        for (uint64_t i = 0; i < n; i++) {
            model[i] = pattern(i);
            push_u64(&v, m, model[i]);
            assert_int_equal(v.len, i + 1);
            assert_int_equal(v.height, height_for(i + 1));
            /* A full check per push is quadratic; the small sizes get it
               every step, the large ones at every growth boundary. */
            if (n <= 17 || ((i + 1) & i) == 0)
                assert_content(&v, model, i + 1);
        }
        assert_content(&v, model, n);

        /* get_mut on an unshared vector writes in place: no copies. */
        uint64_t copied = mem_copied_entries();
        for (uint64_t i = 0; i < n; i += 3) {
            model[i] = ~model[i];
            set_u64(&v, m, i, model[i]);
            assert_false(pvec_is_shared(&v, i));
        }
        assert_int_equal(mem_copied_entries(), copied);
        assert_content(&v, model, n);

        pvec_release(&v, &u64_ops, m);
        assert_null(v.root);
        assert_int_equal(v.len, 0);
        assert_int_equal(mem_ctx_bytes(m), 0);
        free(model);
    }
}

static void test_share_then_write(void **state)
{
    mem_ctx *m = *state;
    const uint64_t n = 1000;
    pvec v, w;
    uint64_t *model = build(&v, m, n);
    uint64_t *orig = model_dup(model, n);
    const uint32_t h = v.height;
    const uint64_t path = (uint64_t)(h + 1) * PVEC_FANOUT;

    assert_false(pvec_is_shared(&v, 5));
    size_t bytes = mem_ctx_bytes(m);
    pvec_share(&v, &w);
    assert_int_equal(mem_ctx_bytes(m), bytes);   /* O(1): nothing allocated */
    assert_true(pvec_is_shared(&v, 5));
    assert_true(pvec_is_shared(&w, 5));
    assert_true(pvec_is_shared(&v, n - 1));

    /* First write to a leaf copies at most its path. */
    uint64_t before = mem_copied_entries();
    model[5] = 0xdead;
    set_u64(&v, m, 5, model[5]);
    uint64_t first = mem_copied_entries() - before;
    assert_true(first > 0);
    assert_true(first <= path);
    assert_false(pvec_is_shared(&v, 5));
    /* w dropped nothing, and its old path stays immutable while v's copy
       borrows from it. */
    assert_true(pvec_is_shared(&w, 5));
    /* Other leaves stay shared by both. */
    assert_true(pvec_is_shared(&v, 500));
    assert_true(pvec_is_shared(&w, 500));

    /* A second write to the same leaf (4..7) is in place. */
    before = mem_copied_entries();
    model[6] = 0xbeef;
    set_u64(&v, m, 6, model[6]);
    model[5] = 0xfeed;
    set_u64(&v, m, 5, model[5]);
    assert_int_equal(mem_copied_entries() - before, 0);

    /* A write to another leaf copies at most one more path. */
    before = mem_copied_entries();
    model[500] = 0xcafe;
    set_u64(&v, m, 500, model[500]);
    assert_true(mem_copied_entries() - before <= path);
    assert_false(pvec_is_shared(&v, 500));

    /* Writes through the other owner are just as isolated. */
    orig[999] = 0xf00d;
    set_u64(&w, m, 999, orig[999]);

    assert_content(&v, model, n);
    assert_content(&w, orig, n);

    /* Pushing onto one owner leaves the other's length and content. */
    push_u64(&v, m, 77);
    assert_int_equal(v.len, n + 1);
    assert_int_equal(get_u64(&v, n), 77);
    assert_content(&w, orig, n);

    pvec_release(&v, &u64_ops, m);
    assert_content(&w, orig, n);
    pvec_release(&w, &u64_ops, m);
    free(model);
    free(orig);
}

static void test_share_grows_height(void **state)
{
    mem_ctx *m = *state;
    /* 16 = a full height-1 tree: the next push adds a level. */
    const uint64_t n = 16;
    pvec v, w;
    uint64_t *model = build(&v, m, n);
    assert_int_equal(v.height, 1);
    pvec_share(&v, &w);
    push_u64(&v, m, 1234);
    assert_int_equal(v.height, 2);
    assert_int_equal(w.height, 1);
    assert_content(&w, model, n);
    assert_int_equal(pvec_check_lenders(&v, &u64_ops), 0);
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(get_u64(&v, i), model[i]);
    assert_int_equal(get_u64(&v, n), 1234);
    pvec_release(&w, &u64_ops, m);
    pvec_release(&v, &u64_ops, m);
    free(model);
}

static void test_release_share_restores_in_place(void **state)
{
    mem_ctx *m = *state;
    const uint64_t n = 300;
    pvec v, w;
    uint64_t *model = build(&v, m, n);

    /* Share, write one leaf (a path copy), drop the share as a reader
       would: v's copies are their originals' only holders, so the next
       write takes the originals over (invariant 6) and every chunk is v's
       alone again; writes anywhere are in place, and the memory is what
       it was before the share. */
    size_t bytes = mem_ctx_bytes(m);
    pvec_share(&v, &w);
    model[10] = 1;
    set_u64(&v, m, 10, model[10]);
    pvec_release(&w, &u64_ops, m);
    assert_null(w.root);

    uint64_t before = mem_copied_entries();
    for (uint64_t i = 0; i < n; i++) {
        model[i] += 3;
        set_u64(&v, m, i, model[i]);
        assert_false(pvec_is_shared(&v, i));
        assert_int_equal(pvec_check_lenders(&v, &u64_ops), 0);
    }
    assert_int_equal(mem_ctx_bytes(m), bytes);
    push_u64(&v, m, 9);
    assert_int_equal(mem_copied_entries(), before);
    assert_int_equal(get_u64(&v, n), 9);
    pvec_pop(&v, &u64_ops, m);
    assert_content(&v, model, n);

    pvec_release(&v, &u64_ops, m);
    free(model);
}

/* ---- elements that own counted objects -------------------------------- */

typedef struct counted {
    int refs;        /* references held by vector elements */
    int frees;       /* times refs dropped to zero */
    int underflow;   /* releases with refs already zero */
} counted;

static long retain_calls;   /* on non-null elements */
static long release_calls;

static void obj_retain(void *elem)
{
    counted *c = *(counted **)elem;
    if (!c)
        return;
    retain_calls++;
    c->refs++;
}

static void obj_release(void *elem, mem_ctx *m)
{
    (void)m;
    counted *c = *(counted **)elem;
    if (!c)
        return;
    release_calls++;
    if (c->refs <= 0)
        c->underflow++;
    else if (--c->refs == 0)
        c->frees++;
}

static const pvec_ops obj_ops = { sizeof(counted *), obj_retain, obj_release };

/* Stores a new reference to c in element i (the vector owns it), dropping
   the reference the element held before. */
static void put_obj(pvec *v, mem_ctx *m, uint64_t i, counted *c)
{
    counted **e = pvec_get_mut(v, &obj_ops, m, i);
    assert_non_null(e);
    obj_release(e, m);
    c->refs++;
    *e = c;
}

static void push_obj(pvec *v, mem_ctx *m, counted *c)
{
    counted **e = pvec_push(v, &obj_ops, m);
    assert_non_null(e);
    assert_null(*e);
    c->refs++;
    *e = c;
}

static counted *get_obj(const pvec *v, uint64_t i)
{
    return *(counted *const *)pvec_get(v, &obj_ops, i);
}

static void assert_all_freed_once(const counted *objs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(objs[i].refs, 0);
        assert_int_equal(objs[i].frees, 1);
        assert_int_equal(objs[i].underflow, 0);
    }
}

static void test_element_callbacks(void **state)
{
    mem_ctx *m = *state;
    enum { N = 50, EXTRA = 10 };
    counted objs[N + EXTRA];
    memset(objs, 0, sizeof objs);
    retain_calls = release_calls = 0;

    pvec v, w;
    pvec_init(&v);
    for (int i = 0; i < N; i++) {
        push_obj(&v, m, &objs[i]);
        assert_int_equal(pvec_check_lenders(&v, &obj_ops), 0);
    }
    assert_int_equal(retain_calls, 0);   /* unshared: nothing copied */

    pvec_share(&v, &w);
    assert_int_equal(retain_calls, 0);   /* sharing copies nothing */

    /* Replacing element 9 copies its leaf (8..11), which borrows the rest
       from the original: the element written is retained alone, then
       loses that reference. */
    put_obj(&v, m, 9, &objs[N]);
    assert_int_equal(retain_calls, 1);
    assert_int_equal(objs[9].refs, 1);       /* still held by w's leaf */
    assert_int_equal(objs[8].refs, 1);       /* w's leaf's, which v's copy borrows */
    assert_int_equal(objs[20].refs, 1);      /* leaf still shared, one ref */
    assert_ptr_equal(get_obj(&w, 9), &objs[9]);
    assert_ptr_equal(get_obj(&v, 9), &objs[N]);

    /* The last leaf (48, 49): the copy retains the element written only. */
    long r = retain_calls;
    put_obj(&v, m, 48, &objs[N + 1]);
    assert_int_equal(retain_calls - r, 1);

    /* Writes through w copy w's own paths. */
    put_obj(&w, m, 30, &objs[N + 2]);
    assert_ptr_equal(get_obj(&v, 30), &objs[30]);
    assert_ptr_equal(get_obj(&w, 30), &objs[N + 2]);

    /* Pop on both owners: each takes its own reference and drops it; the
       original leaf, which both copies borrow from, keeps its one. */
    pvec_pop(&v, &obj_ops, m);   /* 49 */
    assert_int_equal(objs[49].refs, 1);
    pvec_pop(&w, &obj_ops, m);   /* 49 */
    assert_int_equal(objs[49].refs, 1);
    assert_int_equal(objs[49].frees, 0);
    assert_int_equal(v.len, N - 1);
    assert_int_equal(w.len, N - 1);
    assert_int_equal(pvec_check_lenders(&v, &obj_ops), 0);
    assert_int_equal(pvec_check_lenders(&w, &obj_ops), 0);

    for (int i = 0; i < EXTRA - 3; i++)
        push_obj(&v, m, &objs[N + 3 + i]);
    assert_int_equal(pvec_check_lenders(&v, &obj_ops), 0);

    pvec_release(&v, &obj_ops, m);
    assert_int_equal(objs[N].refs, 0);       /* only v held it */
    assert_int_equal(objs[0].refs, 1);       /* w still does */
    pvec_release(&w, &obj_ops, m);
    assert_all_freed_once(objs, N + EXTRA);
    assert_int_equal(release_calls, retain_calls + N + EXTRA);
}

/* A base released into the vector written from it (the fold-back): the
   copies take the originals over at once, so nothing is shared, nothing
   more is copied, and the memory is what one unshared vector needs —
   also after writes on many paths and a taller successor. */
static void test_release_into(void **state)
{
    mem_ctx *m = *state;
    const uint64_t n = 700;
    pvec v, w;
    uint64_t *model = build(&v, m, n);
    size_t bytes = mem_ctx_bytes(m);

    for (int round = 0; round < 3; round++) {
        pvec_share(&v, &w);   /* w: the base a view held */
        for (uint64_t i = (uint64_t)round; i < n; i += 37) {
            model[i] ^= 0x5a5a;
            set_u64(&v, m, i, model[i]);
        }
        assert_true(mem_ctx_bytes(m) > bytes);
        pvec_release_into(&w, &v, &u64_ops, m);
        assert_int_equal(mem_ctx_bytes(m), bytes);
        assert_int_equal(pvec_check_lenders(&v, &u64_ops), 0);
        assert_content(&v, model, n);
        for (uint64_t i = 0; i < n; i++)
            assert_false(pvec_is_shared(&v, i));
    }

    /* The successor grew a level: the base is its leftmost subtree. */
    pvec_share(&v, &w);
    set_u64(&v, m, 3, model[3] = 77);
    uint64_t total = n;
    while (v.height == w.height) {
        model = realloc(model, (total + 1) * sizeof *model);
        assert_non_null(model);
        model[total] = pattern(total);
        push_u64(&v, m, model[total++]);
    }
    pvec_release_into(&w, &v, &u64_ops, m);
    assert_int_equal(pvec_check_lenders(&v, &u64_ops), 0);
    assert_content(&v, model, total);
    for (uint64_t i = 0; i < total; i++)
        assert_false(pvec_is_shared(&v, i));
    pvec_release(&v, &u64_ops, m);
    free(model);
}

/* Model-based: a writer's vector and up to four snapshots of it, under
   random writes, pushes, pops, snapshots and releases — a release either
   plain (as a reader's) or into the writer's vector (as the fold-back's).
   Elements own counted objects, so the references borrowing moves around
   are checked too: every object some snapshot or the writer still shows
   is alive, none is released twice, and all are freed once at the end.
   Lenders and owned slots are checked after every step. */
static void test_borrowing_model(void **state)
{
    mem_ctx *m = *state;
    enum { OBJS = 6000, SNAPS = 4, STEPS = 5000 };
    counted *objs = calloc(OBJS, sizeof *objs);
    counted **model = calloc(OBJS, sizeof *model);
    counted **snap_model[SNAPS] = { 0 };
    uint64_t snap_len[SNAPS] = { 0 };
    pvec snap[SNAPS];
    assert_non_null(objs);
    assert_non_null(model);
    size_t used = 0;
    int steps = 0, shares = 0, into = 0, plain = 0;
    uint64_t rng = 0x9e3779b97f4a7c15u;
    retain_calls = release_calls = 0;

    pvec w;
    pvec_init(&w);
    uint64_t len = 0;
    for (; len < 90; len++) {
        push_obj(&w, m, &objs[used]);
        model[len] = &objs[used++];
    }
    for (; steps < STEPS && used < OBJS; steps++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        unsigned what = (unsigned)(rng % 100);
        int slot = (int)((rng >> 8) % SNAPS);
        if (what < 55 && len) {
            uint64_t i = (rng >> 16) % len;
            put_obj(&w, m, i, &objs[used]);
            model[i] = &objs[used++];
        } else if (what < 65 && len < OBJS / 2) {
            push_obj(&w, m, &objs[used]);
            model[len++] = &objs[used++];
        } else if (what < 72 && len) {
            assert_int_equal(pvec_pop(&w, &obj_ops, m), 0);
            len--;
        } else if (what < 86 && !snap_model[slot]) {
            pvec_share(&w, &snap[slot]);
            snap_model[slot] = malloc((len ? len : 1) * sizeof *model);
            memcpy(snap_model[slot], model, len * sizeof *model);
            snap_len[slot] = len;
            shares++;
        } else if (snap_model[slot]) {
            if (rng >> 40 & 1) {
                pvec_release_into(&snap[slot], &w, &obj_ops, m);
                into++;
            } else {
                pvec_release(&snap[slot], &obj_ops, m);
                plain++;
            }
            free(snap_model[slot]);
            snap_model[slot] = NULL;
        }
        assert_int_equal(pvec_check_lenders(&w, &obj_ops), 0);
        assert_int_equal(w.len, len);
        for (uint64_t i = 0; i < len; i++) {
            assert_ptr_equal(get_obj(&w, i), model[i]);
            assert_true(model[i]->refs > 0);
        }
        for (int k = 0; k < SNAPS; k++) {
            if (!snap_model[k])
                continue;
            assert_int_equal(pvec_check_lenders(&snap[k], &obj_ops), 0);
            for (uint64_t i = 0; i < snap_len[k]; i++) {
                assert_ptr_equal(get_obj(&snap[k], i), snap_model[k][i]);
                assert_true(snap_model[k][i]->refs > 0);
            }
        }
    }
    for (int k = 0; k < SNAPS; k++) {
        if (snap_model[k]) {
            pvec_release(&snap[k], &obj_ops, m);
            free(snap_model[k]);
        }
    }
    assert_int_equal(steps, STEPS);
    assert_true(shares > 300 && into > 100 && plain > 100);
    pvec_release(&w, &obj_ops, m);
    assert_all_freed_once(objs, used);
    assert_int_equal(release_calls, retain_calls + (long)used);
    assert_int_equal(mem_ctx_bytes(m), 0);
    free(model);
    free(objs);
}

static void test_pop(void **state)
{
    mem_ctx *m = *state;
    const uint64_t n = 40;
    pvec v;
    uint64_t *model = build(&v, m, n);
    const uint32_t h = v.height;

    for (uint64_t len = n; len > 0; len--) {
        pvec_pop(&v, &u64_ops, m);
        assert_content(&v, model, len - 1);
        assert_int_equal(v.height, h);   /* the tree keeps its shape */
    }
    /* Pushing again reuses the shape and yields zeroed elements. */
    for (uint64_t i = 0; i < n; i++) {
        model[i] = pattern(i + 7);
        push_u64(&v, m, model[i]);
        assert_content(&v, model, i + 1);
    }
    pvec_release(&v, &u64_ops, m);
    free(model);
}

static void test_pop_shared(void **state)
{
    mem_ctx *m = *state;
    const uint64_t n = 21;
    pvec v, w;
    uint64_t *model = build(&v, m, n);
    pvec_share(&v, &w);

    for (uint64_t len = n; len > n - 6; len--) {
        pvec_pop(&v, &u64_ops, m);
        assert_content(&v, model, len - 1);
        assert_content(&w, model, n);
    }
    push_u64(&v, m, 5);
    assert_int_equal(get_u64(&v, n - 6), 5);
    assert_content(&w, model, n);

    pvec_release(&v, &u64_ops, m);
    pvec_release(&w, &u64_ops, m);
    free(model);
}

/* ---- allocation failure ----------------------------------------------- */

/* pvec_pop returns nothing, so it must not fail: the header promises it
   removes the last element, and pvec.c says a pop that cannot copy a
   shared path still takes the element out ("never fail an undo").  Pop a
   shared vector with every allocation failing. */
/* A pop that must copy a shared path reports a failed copy and changes
   nothing; the same pop succeeds once memory is there. */
static void test_pop_shared_failure(void **state)
{
    mem_ctx *m = *state;
    const uint64_t n = 21;
    pvec v, w;
    uint64_t *model = build(&v, m, n);
    pvec_share(&v, &w);

    mem_fail_at(1);
    assert_int_equal(pvec_pop(&v, &u64_ops, m), -1);
    mem_fail_clear();
    assert_content(&v, model, n);
    assert_int_equal(pvec_pop(&v, &u64_ops, m), 0);
    assert_content(&w, model, n);
    /* Release first so that a failure below reports only itself. */
    uint64_t len = v.len;
    int check = pvec_check_lenders(&v, &u64_ops);
    pvec_release(&v, &u64_ops, m);
    pvec_release(&w, &u64_ops, m);
    free(model);
    assert_int_equal(check, 0);
    assert_int_equal(len, n - 1);
}

/* Pushes x onto v, failing the 1st, 2nd, ... allocation until the push
   succeeds; after each failure v and (when not NULL) a share w hold what
   they held.  Returns the number of failures seen. */
static long push_until_success(pvec *v, uint64_t *model, uint64_t n, const pvec *w,
                               const uint64_t *wmodel, uint64_t wn, mem_ctx *m, uint64_t x)
{
    for (long k = 1;; k++) {
        assert_true(k < 64);
        mem_fail_at(k);
        uint64_t *e = pvec_push(v, &u64_ops, m);
        mem_fail_clear();
        if (e) {
            assert_int_equal(*e, 0);
            *e = x;
            model[n] = x;
            assert_content(v, model, n + 1);
            return k - 1;
        }
        assert_content(v, model, n);
        if (w)
            assert_content(w, wmodel, wn);
    }
}

static void test_push_failure(void **state)
{
    mem_ctx *m = *state;
    /* Empty, mid-leaf, at a leaf boundary, at height growth (4, 16, 64). */
    static const uint64_t sizes[] = { 0, 3, 4, 6, 16, 17, 64, 100 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint64_t n = sizes[s];
        pvec v, w;

        /* Unshared: only new chunks can fail. */
        uint64_t *model = build(&v, m, n);
        uint64_t *bigger = calloc(n + 1, sizeof *bigger);
        assert_non_null(bigger);
        memcpy(bigger, model, n * sizeof *bigger);
        push_until_success(&v, bigger, n, NULL, NULL, 0, m, 42);
        pvec_release(&v, &u64_ops, m);
        assert_int_equal(mem_ctx_bytes(m), 0);

        /* Shared: every chunk on the new element's path is copied or new. */
        pvec_init(&v);
        for (uint64_t i = 0; i < n; i++)
            push_u64(&v, m, model[i]);
        pvec_share(&v, &w);
        long failures = push_until_success(&v, bigger, n, &w, model, n, m, 43);
        if (n > 0)
            assert_true(failures >= 1);
        assert_content(&w, model, n);
        pvec_release(&v, &u64_ops, m);
        assert_content(&w, model, n);
        pvec_release(&w, &u64_ops, m);
        assert_int_equal(mem_ctx_bytes(m), 0);
        free(model);
        free(bigger);
    }
}

static void test_get_mut_failure_shared(void **state)
{
    mem_ctx *m = *state;
    const uint64_t n = 1000;
    static const uint64_t targets[] = { 0, 5, 999, 500, 6, 257 };
    pvec v, w;
    uint64_t *model = build(&v, m, n);
    uint64_t *orig = model_dup(model, n);
    pvec_share(&v, &w);

    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        uint64_t i = targets[t];
        for (long k = 1;; k++) {
            assert_true(k < 64);
            mem_fail_at(k);
            uint64_t *e = pvec_get_mut(&v, &u64_ops, m, i);
            mem_fail_clear();
            if (e) {
                *e = model[i] = 1000000 + t;
                break;
            }
            assert_content(&v, model, n);
            assert_content(&w, orig, n);
        }
        assert_content(&v, model, n);
        assert_content(&w, orig, n);
    }
    pvec_release(&w, &u64_ops, m);
    assert_content(&v, model, n);
    pvec_release(&v, &u64_ops, m);
    free(model);
    free(orig);
}

/* Partial path copies that fail half way must keep element references
   balanced: every object is still released exactly once in the end. */
static void test_get_mut_failure_callbacks(void **state)
{
    mem_ctx *m = *state;
    enum { N = 70, T = 4 };
    static const uint64_t targets[T] = { 69, 0, 33, 34 };
    counted objs[N + T];
    memset(objs, 0, sizeof objs);
    retain_calls = release_calls = 0;

    pvec v, w;
    pvec_init(&v);
    for (int i = 0; i < N; i++)
        push_obj(&v, m, &objs[i]);
    pvec_share(&v, &w);

    for (int t = 0; t < T; t++) {
        uint64_t i = targets[t];
        long k;
        for (k = 1;; k++) {
            assert_true(k < 64);
            mem_fail_at(k);
            counted **e = pvec_get_mut(&v, &obj_ops, m, i);
            mem_fail_clear();
            if (e)
                break;
            assert_int_equal(pvec_check_lenders(&v, &obj_ops), 0);
            for (int j = 0; j < N; j++)
                assert_ptr_equal(get_obj(&w, (uint64_t)j), &objs[j]);
            for (int j = 0; j < t; j++)
                assert_ptr_equal(get_obj(&v, targets[j]), &objs[N + j]);
        }
        /* 34 shares its leaf with 33, already private: no allocation. */
        if (i == 34)
            assert_int_equal(k, 1);
        else
            assert_true(k > 1);
        put_obj(&v, m, i, &objs[N + t]);
        for (int j = 0; j < N; j++)
            assert_ptr_equal(get_obj(&w, (uint64_t)j), &objs[j]);
        assert_int_equal(pvec_check_lenders(&v, &obj_ops), 0);
    }
    for (int t = 0; t < T; t++)
        assert_ptr_equal(get_obj(&v, targets[t]), &objs[N + t]);

    pvec_release(&v, &obj_ops, m);
    pvec_release(&w, &obj_ops, m);
    assert_all_freed_once(objs, N + T);
}

/* pvec_get_run hands out each leaf's elements from i on, contiguous and
   equal to pvec_get's, one zero element at a time over a hole; runs
   never pass len. */
static void test_get_run(void **state)
{
    mem_ctx *m = *state;
    pvec v;
    pvec_init(&v);
    enum { N = 300 };
    for (uint64_t i = 0; i < N; i++)
        assert_int_equal(pvec_grow(&v, &u64_ops, m), 0);
    for (uint64_t i = 0; i < N; i++)
        if ((i / (PVEC_FANOUT * 2)) % 3 != 1)   /* some leaves stay holes */
            set_u64(&v, m, i, pattern(i));
    for (uint64_t i = 0; i < N; i++) {
        uint64_t n;
        const uint64_t *run = pvec_get_run(&v, &u64_ops, i, &n);
        assert_true(n >= 1 && i + n <= N && n <= PVEC_FANOUT);
        for (uint64_t k = 0; k < n; k++)
            assert_int_equal(run[k], *(const uint64_t *)pvec_get(&v, &u64_ops, i + k));
        if (run[0])
            assert_true((i + n) % PVEC_FANOUT == 0 || i + n == N);   /* to the leaf's end */
    }
    pvec_release(&v, &u64_ops, m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_push_get_sizes, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_get_run, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_share_then_write, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_share_grows_height, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_release_share_restores_in_place, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_element_callbacks, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_borrowing_model, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_release_into, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_pop, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_pop_shared, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_pop_shared_failure, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_push_failure, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_get_mut_failure_shared, mem_ctx_setup, mem_ctx_teardown),
        cmocka_unit_test_setup_teardown(test_get_mut_failure_callbacks, mem_ctx_setup, mem_ctx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
