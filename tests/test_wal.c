/*
 * The write-ahead log (docs/FORMAT.md): a graph opened on a path comes back
 * exactly — ids, free lists, indices — after random statements and
 * transactions, a close and a reopen; torn tails are cut and reported,
 * damage before the tail refuses to open; schema changes are logged.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "strata.h"
#include "persist_support.h"
#include "core/persist_codec.h"
#include "core/wal.h"
#include "wal_support.h"

/* ---- the model test ------------------------------------------------------ */

static void test_roundtrip_random(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    for (unsigned seed = 1; seed <= 6; seed++) {
        char db[300];
        snprintf(db, sizeof db, "%s/db%u", dir, seed);
        rng r = { seed * 7919u };
        strata_graph *g = NULL;
        for (int round = 0; round < 4; round++) {
            wal_open_ok(db, NULL, &g);
            wal_random_work(g, &r, 150);
            if (round == 2)
                assert_int_equal(strata_checkpoint(g), STRATA_OK);
            char *before = wal_dump_with_next_ids(g);
            assert_int_equal(strata_close(&g), STRATA_OK);
            wal_open_ok(db, NULL, &g);
            char *after = wal_dump_with_next_ids(g);
            wal_assert_same(before, after);
            free(before);
            free(after);
            assert_int_equal(strata_close(&g), STRATA_OK);
        }
    }
    wal_rmtree(dir);
}

/* A SET of one property costs tens of bytes of log. */
static void test_record_is_compact(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_graph *g = NULL;
    wal_open_ok(dir, NULL, &g);
    strata_token k;
    strata_id n;
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "age", &k), STRATA_OK);
    assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
    uint64_t before = wal_log_size(dir);
    strata_value *v = strata_value_int(41);
    assert_int_equal(strata_node_set(g, n, k, v), STRATA_OK);
    strata_value_free(&v);
    uint64_t cost = wal_log_size(dir) - before;
    /* 24 bytes of record header, opcode, node, key, tag and value. */
    assert_int_equal(cost, 29);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_rmtree(dir);
}

/* A second open of the same path gets a clear error. */
static void test_lock(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_graph *g = NULL, *h = NULL;
    wal_open_ok(dir, NULL, &g);
    char err[256];
    strata_open_options o = { .err = err, .errlen = sizeof err };
    assert_int_equal(strata_open(dir, &o, &h), STRATA_EIO);
    assert_null(h);
    assert_non_null(strstr(err, "in use by another process"));
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_open_ok(dir, NULL, &h);
    assert_int_equal(strata_close(&h), STRATA_OK);
    wal_rmtree(dir);
}

/* Rolled-back statements and transactions leave nothing in the log, and a
   rolled-back statement inside a committed transaction only its own
   writes. */
static void test_rollbacks_not_logged(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_graph *g = NULL;
    wal_open_ok(dir, NULL, &g);
    strata_id a, b, c;
    strata_token l;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "L", &l), STRATA_OK);
    assert_int_equal(strata_node_create(g, &l, 1, &a), STRATA_OK);
    assert_int_equal(strata_begin(g), STRATA_OK);
    assert_int_equal(strata_node_create(g, NULL, 0, &b), STRATA_OK);
    assert_int_equal(strata_statement_begin(g), STRATA_OK);
    assert_int_equal(strata_node_create(g, NULL, 0, &c), STRATA_OK);
    assert_int_equal(strata_statement_end(g, false), STRATA_OK);
    assert_int_equal(strata_commit(g), STRATA_OK);
    assert_int_equal(strata_begin(g), STRATA_OK);
    assert_int_equal(strata_node_delete(g, a), STRATA_OK);
    assert_int_equal(strata_rollback(g), STRATA_OK);
    assert_int_equal(strata_statement_begin(g), STRATA_OK);
    assert_int_equal(strata_node_delete(g, b), STRATA_OK);
    assert_int_equal(strata_statement_end(g, false), STRATA_OK);
    char *before = wal_dump_with_next_ids(g);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_open_ok(dir, NULL, &g);
    char *after = wal_dump_with_next_ids(g);
    wal_assert_same(before, after);
    free(before);
    free(after);
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_node_count(v), 2);
    strata_view_release(&v);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_rmtree(dir);
}

/* Index DDL is logged: definitions, names and the constraint come back. */
static void test_schema_logged(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_graph *g = NULL;
    wal_open_ok(dir, NULL, &g);
    strata_token l, k;
    strata_index i1, i2, i3;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "P", &l), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "id", &k), STRATA_OK);
    assert_int_equal(strata_index_create(g, STRATA_INDEX_UNIQUE, false, l, &k, 1, &i1),
                     STRATA_OK);
    assert_int_equal(strata_index_create_named(g, STRATA_INDEX_RANGE, false, l, &k, 1, "byid",
                                               &i2),
                     STRATA_OK);
    assert_int_equal(strata_index_create(g, STRATA_INDEX_HASH, false, l, &k, 1, &i3), STRATA_OK);
    assert_int_equal(strata_index_drop(g, i3), STRATA_OK);
    strata_id n;
    strata_value *v1 = strata_value_int(1);
    assert_int_equal(strata_node_create(g, &l, 1, &n), STRATA_OK);
    assert_int_equal(strata_node_set(g, n, k, v1), STRATA_OK);
    assert_int_equal(strata_node_create(g, &l, 1, &n), STRATA_OK);
    assert_int_equal(strata_node_set(g, n, k, v1), STRATA_ECONSTRAINT);
    char *before = wal_dump_with_next_ids(g);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_open_ok(dir, NULL, &g);
    char *after = wal_dump_with_next_ids(g);
    wal_assert_same(before, after);
    /* The constraint holds after recovery. */
    assert_int_equal(strata_node_set(g, n, k, v1), STRATA_ECONSTRAINT);
    strata_value_free(&v1);
    free(before);
    free(after);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_rmtree(dir);
}

/* ---- torn tails and damage --------------------------------------------------- */

/* Builds a database (sync full) whose log's last record is a transaction;
   returns the dumps after every record but the last (before) and after all
   (all), and where the last record starts in the only segment.  The last
   record lies within one 512-byte sector, so that no flipped bit in it can
   pass for a sector that never reached the disk (FORMAT.md, "Where the log
   ends"). */
static void build_two_states(const char *db, char **before, char **all, char *seg,
                             size_t seglen, uint64_t *last_off)
{
    strata_graph *g = NULL;
    strata_open_options full = { .sync = STRATA_SYNC_FULL };
    wal_open_ok(db, &full, &g);
    rng r = { 99 };
    wal_random_work(g, &r, 60);
    wal_segment_path(db, seg, seglen);
    strata_id pad;
    while (wal_segment_end(seg) % 512 > 512 - 160)
        assert_int_equal(strata_node_create(g, NULL, 0, &pad), STRATA_OK);
    /* The last record: a transaction of several calls. */
    *before = wal_dump_with_next_ids(g);
    *last_off = wal_segment_end(seg);
    strata_token k;
    strata_id n;
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "last", &k), STRATA_OK);
    assert_int_equal(strata_begin(g), STRATA_OK);
    assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
    strata_value *v = strata_value_string("tail", 4);
    assert_int_equal(strata_node_set(g, n, k, v), STRATA_OK);
    strata_value_free(&v);
    assert_int_equal(strata_commit(g), STRATA_OK);
    *all = wal_dump_with_next_ids(g);
    assert_int_equal(strata_close(&g), STRATA_OK);
}

static void test_torn_tail_every_offset(void **state)
{
    (void)state;
    char dir[256], db[300], seg[400], copy[300];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    snprintf(db, sizeof db, "%s/db", dir);
    snprintf(copy, sizeof copy, "%s/copy", dir);
    char *before, *all;
    uint64_t off;
    build_two_states(db, &before, &all, seg, sizeof seg, &off);
    uint64_t size = wal_segment_end(seg);
    assert_true(size > off && size / 512 == off / 512);
    for (uint64_t cut = off; cut <= size; cut++) {
        wal_copytree(db, copy);
        char cseg[400];
        wal_segment_path(copy, cseg, sizeof cseg);
        assert_int_equal(truncate(cseg, (off_t)cut), 0);
        strata_open_report rep;
        strata_open_options o = { .report = &rep, .sync = STRATA_SYNC_OFF };
        strata_graph *g = NULL;
        wal_open_ok(copy, &o, &g);
        char *got = wal_dump_with_next_ids(g);
        wal_assert_same(got, cut == size ? all : before);
        free(got);
        if (cut == off || cut == size) {
            assert_int_equal(rep.torn_bytes, 0);
        } else {
            assert_int_equal(rep.torn_bytes, cut - off);
            assert_non_null(strstr(rep.message, "torn tail"));
        }
        /* The cut log takes new commits and keeps them. */
        strata_id n;
        assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
        char *more = wal_dump_with_next_ids(g);
        assert_int_equal(strata_close(&g), STRATA_OK);
        wal_open_ok(copy, NULL, &g);
        char *again = wal_dump_with_next_ids(g);
        wal_assert_same(more, again);
        free(more);
        free(again);
        assert_int_equal(strata_close(&g), STRATA_OK);
        wal_rmtree(copy);
    }
    free(before);
    free(all);
    wal_rmtree(dir);
}

/* A flipped bit anywhere in the segment refuses to open with the file and
   offset named — or, in the last record, cuts it when asked. */
static void test_bit_flips(void **state)
{
    (void)state;
    char dir[256], db[300], seg[400], copy[300];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    snprintf(db, sizeof db, "%s/db", dir);
    snprintf(copy, sizeof copy, "%s/copy", dir);
    char *before, *all;
    uint64_t off;
    build_two_states(db, &before, &all, seg, sizeof seg, &off);
    uint64_t size = wal_segment_end(seg);
    /* Every byte of the last record and of the segment header, and a
       sample of the records before it. */
    for (uint64_t at = 0; at < size; at += at < 24 || at >= off ? 1 : 7) {
        for (int bit = 0; bit < 8; bit += 3) {
            wal_copytree(db, copy);
            char cseg[400];
            wal_segment_path(copy, cseg, sizeof cseg);
            wal_flip_bit(cseg, at, bit);
            char err[512];
            strata_open_options o = { .err = err, .errlen = sizeof err, .sync = STRATA_SYNC_OFF };
            strata_graph *g = NULL;
            strata_status s = strata_open(copy, &o, &g);
            assert_int_equal(s, STRATA_ECORRUPT);
            assert_null(g);
            assert_non_null(strstr(err, "wal-"));
            assert_non_null(strstr(err, "at byte"));
            if (at >= off) {
                /* Asking to cut there keeps every record before. */
                strata_open_report rep;
                o.truncate_corrupt = true;
                o.report = &rep;
                wal_open_ok(copy, &o, &g);
                char *got = wal_dump_with_next_ids(g);
                wal_assert_same(got, before);
                free(got);
                assert_true(rep.truncated_bytes > 0);
                assert_int_equal(strata_close(&g), STRATA_OK);
            }
            wal_rmtree(copy);
        }
    }
    free(before);
    free(all);
    wal_rmtree(dir);
}

/* Records whose checksums hold but whose calls are malformed or do not
   replay (random bodies) refuse to open with a message, never crash. */
static void put_le_n(unsigned char *p, uint64_t x, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

static void test_random_bodies(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    rng r = { 2024 };
    int opened = 0, refused = 0;
    for (int round = 0; round < 400; round++) {
        char db[300], seg[400];
        snprintf(db, sizeof db, "%s/db%d", dir, round);
        assert_int_equal(mkdir(db, 0777), 0);
        snprintf(seg, sizeof seg, "%s/wal-0000000000000001.log", db);
        unsigned char buf[24 + 20 + 64];
        memcpy(buf, "STRATAWL", 8);
        put_le_n(buf + 8, 1, 8);
        put_le_n(buf + 16, 1, 4);
        put_le_n(buf + 20, crc32c(0, buf, 20), 4);
        size_t body = 1 + rng_below(&r, 64);
        unsigned char *h = buf + 24, *b = h + 20;
        for (size_t i = 0; i < body; i++)
            b[i] = (unsigned char)(i == 0 ? 1 + rng_below(&r, 14)
                                          : rng_below(&r, 4) ? rng_below(&r, 8)
                                                             : rng_next(&r));
        if (round % 4 == 0) {   /* a well-formed node create: opens */
            body = 2;
            b[0] = WOP_NODE_CREATE;
            b[1] = 0;
        }
        put_le_n(h, body, 4);
        put_le_n(h + 4, 1, 8);
        put_le_n(h + 12, crc32c(0, h, 12), 4);
        put_le_n(h + 16, crc32c(0, b, body), 4);
        FILE *f = fopen(seg, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(buf, 1, 24 + 20 + body, f), 24 + 20 + body);
        fclose(f);
        char err[512];
        strata_open_options o = { .err = err, .errlen = sizeof err, .sync = STRATA_SYNC_OFF };
        strata_graph *g = NULL;
        strata_status st = strata_open(db, &o, &g);
        if (st == STRATA_OK) {
            opened++;
            strata_view *v = NULL;
            assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
            assert_int_equal(strata_integrity_check(v), STRATA_OK);
            strata_view_release(&v);
            assert_int_equal(strata_close(&g), STRATA_OK);
        } else {
            refused++;
            assert_int_equal(st, STRATA_ECORRUPT);
            assert_null(g);
            assert_non_null(strstr(err, "at byte 24"));
        }
    }
    assert_true(refused > 0 && opened > 0);
    wal_rmtree(dir);
}

/* ---- I/O failures ------------------------------------------------------------ */

static void test_failed_append_rolls_back(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_graph *g = NULL;
    strata_open_options full = { .sync = STRATA_SYNC_FULL };
    wal_open_ok(dir, &full, &g);
    rng r = { 5 };
    wal_random_work(g, &r, 40);
    /* (Preallocation fails only where a segment grows or is created:
       test_wal_prealloc.c.) */
    for (int point = WAL_FAULT_WRITE; point <= WAL_FAULT_SYNC; point++) {
        for (int kind = 0; kind < 3; kind++) {
            strata_id n;
            strata_token k;
            assert_int_equal(strata_token_intern(g, STRATA_KEY, "k", &k), STRATA_OK);
            char *before = wal_dump_with_next_ids(g);
            wal_fault_at((wal_fault_point)point, 1, point ? EIO : ENOSPC);
            strata_status s;
            if (kind == 0) {
                s = strata_node_create(g, NULL, 0, &n);
            } else if (kind == 1) {
                assert_int_equal(strata_statement_begin(g), STRATA_OK);
                assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
                s = strata_statement_end(g, true);
            } else {
                assert_int_equal(strata_begin(g), STRATA_OK);
                assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
                s = strata_commit(g);
            }
            assert_int_equal(s, STRATA_EIO);
            assert_non_null(strstr(strata_errmsg(g), "the log"));
            assert_false(strata_in_transaction(g));
            char *now = wal_dump_with_next_ids(g);
            wal_assert_same(before, now);
            free(now);
            /* The cause gone, the graph takes writes again, durably. */
            wal_fault_clear();
            assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
            char *later = wal_dump_with_next_ids(g);
            assert_int_equal(strata_close(&g), STRATA_OK);
            wal_open_ok(dir, &full, &g);
            char *back = wal_dump_with_next_ids(g);
            wal_assert_same(later, back);
            free(later);
            free(back);
            free(before);
        }
    }
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_rmtree(dir);
}

/* A Cypher statement whose record cannot be written fails with IOError
   and leaves nothing behind. */
static void test_failed_append_in_query(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_graph *g = NULL;
    strata_open_options full = { .sync = STRATA_SYNC_FULL };
    wal_open_ok(dir, &full, &g);
    strata_result *r = NULL;
    assert_int_equal(strata_query(g, "CREATE (:P {v: 1})-[:T]->()", NULL, &r), STRATA_OK);
    strata_result_free(&r);
    char *before = wal_dump_with_next_ids(g);
    wal_fault_at(WAL_FAULT_WRITE, 1, ENOSPC);
    assert_int_not_equal(strata_query(g, "CREATE (:P {v: 2})", NULL, &r), STRATA_OK);
    wal_fault_clear();
    const strata_query_error *e = strata_result_error(r);
    assert_non_null(e);
    assert_string_equal(e->code, "IOError");
    assert_non_null(strstr(e->message, "No space left"));
    strata_result_free(&r);
    char *now = wal_dump_with_next_ids(g);
    wal_assert_same(before, now);
    free(now);
    free(before);
    assert_int_equal(strata_query(g, "CREATE (:P {v: 3})", NULL, &r), STRATA_OK);
    strata_result_free(&r);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_open_ok(dir, NULL, &g);
    assert_int_equal(strata_query(g, "MATCH (p:P) RETURN sum(p.v) AS s", NULL, &r), STRATA_OK);
    const strata_value *const *row;
    assert_true(strata_result_next(r, &row));
    int64_t sum;
    assert_int_equal(strata_value_get_int(row[0], &sum), STRATA_OK);
    assert_int_equal(sum, 4);
    strata_result_free(&r);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_rmtree(dir);
}

/* Failing the 1st, 2nd, ... allocation of a logged write, statement or
   transaction fails it with STRATA_ENOMEM and changes nothing, in memory
   or in the log. */
static void test_allocation_failures(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_graph *g = NULL;
    wal_open_ok(dir, NULL, &g);
    rng r = { 3 };
    wal_random_work(g, &r, 30);
    strata_token k, l;
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "big", &k), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "A", &l), STRATA_OK);
    strata_value *v = strata_value_string("a string long enough to need its own block", 42);
    for (int kind = 0; kind < 4; kind++) {
        int failures = 0;
        for (long at = 1;; at++) {
            char *before = wal_dump_with_next_ids(g);
            strata_id n = 0;
            mem_fail_at(at);
            strata_status s;
            if (kind == 0) {
                s = strata_node_set(g, 0, k, v);
            } else if (kind == 1) {
                s = strata_statement_begin(g);
                if (!s && (s = strata_node_create(g, &l, 1, &n)) == STRATA_OK)
                    s = strata_node_set(g, n, k, v);
                strata_status e = s ? strata_statement_end(g, false) : STRATA_OK;
                if (s == STRATA_OK)
                    s = strata_statement_end(g, true);
                (void)e;
            } else if (kind == 2) {
                s = strata_begin(g);
                if (!s && (s = strata_node_create(g, &l, 1, &n)) == STRATA_OK)
                    s = strata_node_set(g, n, k, v);
                if (s == STRATA_OK)
                    s = strata_commit(g);
                else if (strata_in_transaction(g))
                    strata_rollback(g);
            } else {
                strata_index idx;
                s = strata_index_create(g, STRATA_INDEX_HASH, false, l, &k, 1, &idx);
                if (s == STRATA_OK && (s = strata_index_drop(g, idx)) != STRATA_OK) {
                    /* The create went through and the drop failed: drop
                       it for the next attempt's create. */
                    mem_fail_clear();
                    assert_int_equal(strata_index_drop(g, idx), STRATA_OK);
                }
            }
            mem_fail_clear();
            if (s == STRATA_OK) {
                free(before);
                break;
            }
            assert_int_equal(s, STRATA_ENOMEM);
            failures++;
            if (kind != 3) {   /* a create that went through used up an index id */
                char *now = wal_dump_with_next_ids(g);
                wal_assert_same(before, now);
                free(now);
            }
            free(before);
        }
        assert_true(failures > 0);
        char *live = wal_dump_with_next_ids(g);
        assert_int_equal(strata_close(&g), STRATA_OK);
        wal_open_ok(dir, NULL, &g);
        char *back = wal_dump_with_next_ids(g);
        wal_assert_same(live, back);
        free(live);
        free(back);
    }
    strata_value_free(&v);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_rmtree(dir);
}

/* ---- checkpoints ---------------------------------------------------------------- */

/* A crash after each step of a checkpoint loses nothing. */
static void test_checkpoint_crash_steps(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    for (int step = 1; step <= 3; step++) {
        char db[300];
        snprintf(db, sizeof db, "%s/db%d", dir, step);
        rng r = { 31u * (unsigned)step };
        strata_graph *g = NULL;
        wal_open_ok(db, NULL, &g);
        wal_random_work(g, &r, 80);
        assert_int_equal(strata_checkpoint(g), STRATA_OK);
        wal_random_work(g, &r, 80);
        wal_checkpoint_stop_after(step);
        assert_int_equal(strata_checkpoint(g), STRATA_OK);
        wal_checkpoint_stop_after(0);
        wal_random_work(g, &r, 40);
        char *before = wal_dump_with_next_ids(g);
        assert_int_equal(strata_close(&g), STRATA_OK);
        wal_open_ok(db, NULL, &g);
        char *after = wal_dump_with_next_ids(g);
        wal_assert_same(before, after);
        free(after);
        /* And a checkpoint then leaves one snapshot and one segment. */
        assert_int_equal(strata_checkpoint(g), STRATA_OK);
        assert_int_equal(wal_count_files(db, "snapshot-"), 1);
        assert_int_equal(wal_count_files(db, "wal-"), 1);
        assert_int_equal(strata_close(&g), STRATA_OK);
        wal_open_ok(db, NULL, &g);
        after = wal_dump_with_next_ids(g);
        wal_assert_same(before, after);
        free(before);
        free(after);
        assert_int_equal(strata_close(&g), STRATA_OK);
    }
    wal_rmtree(dir);
}

/* Past the size limit the log checkpoints by itself. */
static void test_checkpoint_automatic(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_graph *g = NULL;
    strata_open_options o = { .checkpoint_bytes = 4096, .sync = STRATA_SYNC_OFF };
    wal_open_ok(dir, &o, &g);
    rng r = { 77 };
    wal_random_work(g, &r, 600);
    assert_int_equal(wal_count_files(dir, "snapshot-"), 1);
    assert_true(wal_log_size(dir) < 3 * 4096);
    char *before = wal_dump_with_next_ids(g);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_open_ok(dir, NULL, &g);
    char *after = wal_dump_with_next_ids(g);
    wal_assert_same(before, after);
    free(before);
    free(after);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_rmtree(dir);
}

/* Every sync mode keeps what a clean close had. */
static void test_sync_modes(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    for (int mode = STRATA_SYNC_FULL; mode <= STRATA_SYNC_OFF; mode++) {
        char db[300];
        snprintf(db, sizeof db, "%s/db%d", dir, mode);
        strata_open_options o = { .sync = (strata_sync)mode };
        strata_graph *g = NULL;
        wal_open_ok(db, &o, &g);
        rng r = { 11u + (unsigned)mode };
        wal_random_work(g, &r, 100);
        if (mode == STRATA_SYNC_NORMAL)
            usleep(250 * 1000);   /* the background sync runs meanwhile */
        char *before = wal_dump_with_next_ids(g);
        assert_int_equal(strata_close(&g), STRATA_OK);
        wal_open_ok(db, &o, &g);
        char *after = wal_dump_with_next_ids(g);
        wal_assert_same(before, after);
        free(before);
        free(after);
        assert_int_equal(strata_close(&g), STRATA_OK);
    }
    wal_rmtree(dir);
}

/* Calls with bad arguments fail on a logged graph exactly as in memory,
   and leave nothing in the graph or the log. */
static void test_bad_calls_logged_graph(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_graph *g = NULL;
    wal_open_ok(dir, NULL, &g);
    strata_token l, k;
    strata_id n;
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "L", &l), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "k", &k), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "T", &l), STRATA_OK);
    assert_int_equal(strata_token_intern(g, STRATA_LABEL, "L", &l), STRATA_OK);
    assert_int_equal(strata_node_create(g, &l, 1, &n), STRATA_OK);
    char *before = wal_dump_with_next_ids(g);
    uint64_t size = wal_log_size(dir);
    assert_int_equal(strata_node_create(g, &l, 1, NULL), STRATA_EINVAL);
    assert_int_equal(strata_node_create(g, NULL, 2, &n), STRATA_EINVAL);
    assert_int_equal(strata_rel_create(g, 0, 0, 0, NULL), STRATA_EINVAL);
    assert_int_equal(strata_index_create(g, STRATA_INDEX_HASH, false, l, &k, 1, NULL),
                     STRATA_EINVAL);
    assert_int_equal(strata_index_create(g, STRATA_INDEX_HASH, false, l, NULL, 1, &(strata_index){ 0 }),
                     STRATA_EINVAL);
    assert_int_equal(strata_index_drop(g, 12345), STRATA_ENOTFOUND);
    assert_int_equal(strata_node_delete(g, 999), STRATA_ENOTFOUND);
    assert_int_equal(strata_node_set(g, 0, 77, NULL), STRATA_ENOTFOUND);
    assert_int_equal(strata_commit(g), STRATA_EINVAL);
    assert_int_equal(strata_statement_end(g, true), STRATA_EINVAL);
    assert_int_equal(wal_log_size(dir), size);
    char *after = wal_dump_with_next_ids(g);
    wal_assert_same(before, after);
    free(after);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_open_ok(dir, NULL, &g);
    after = wal_dump_with_next_ids(g);
    wal_assert_same(before, after);
    free(after);
    free(before);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_rmtree(dir);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* sync normal: commits return without an fsync; the background thread
   syncs what they wrote within about 100 ms, once for many commits.
   sync full: one fsync per commit; off: none. */
static void test_sync_counts(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    static const strata_sync modes[] = { STRATA_SYNC_FULL, STRATA_SYNC_NORMAL, STRATA_SYNC_OFF };
    for (int m = 0; m < 3; m++) {
        char db[300];
        snprintf(db, sizeof db, "%s/db%d", dir, m);
        strata_open_options o = { .sync = modes[m] };
        strata_graph *g = NULL;
        wal_open_ok(db, &o, &g);
        long before = wal_sync_count();
        double t0 = now_ms();
        for (int i = 0; i < 50; i++) {
            strata_id n;
            assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
        }
        long during = wal_sync_count() - before;
        /* sync normal: the first sync within 100 ms of the commits, give
           or take the scheduler (10 s on a loaded machine) */
        long after;
        do {
            usleep(50 * 1000);
            after = wal_sync_count() - before;
        } while (modes[m] == STRATA_SYNC_NORMAL && after == 0 && now_ms() - t0 < 10000);
        usleep(300 * 1000);
        long settled = wal_sync_count() - before;
        /* one sync per 100 ms at most, however many commits */
        long most = (long)((now_ms() - t0) / 100) + 1;
        if (modes[m] == STRATA_SYNC_FULL) {
            assert_int_equal(during, 50);
            assert_int_equal(settled, 50);
        } else if (modes[m] == STRATA_SYNC_NORMAL) {
            assert_true(during <= most);
            assert_true(after >= 1 && settled <= most);
        } else {
            assert_int_equal(settled, 0);
        }
        assert_int_equal(strata_close(&g), STRATA_OK);
    }
    wal_rmtree(dir);
}

static void test_misuse(void **state)
{
    (void)state;
    strata_graph *g = NULL;
    assert_int_equal(strata_graph_new(&g), STRATA_OK);
    assert_int_equal(strata_checkpoint(g), STRATA_EINVAL);
    assert_false(strata_is_durable(g));
    strata_graph_free(&g);
    char err[128];
    strata_open_options o = { .err = err, .errlen = sizeof err };
    assert_int_equal(strata_open("", &o, &g), STRATA_EINVAL);
    assert_int_equal(strata_open("/dev/null", &o, &g), STRATA_EIO);
    assert_non_null(strstr(err, "not a database directory"));
    /* A directory holding other files is not taken over. */
    char dir[256], file[300];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    snprintf(file, sizeof file, "%s/notes.txt", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(strata_open(dir, &o, &g), STRATA_EIO);
    assert_non_null(strstr(err, "not a database directory"));
    assert_int_equal(wal_count_files(dir, "LOCK"), 0);
    assert_int_equal(wal_count_files(dir, "wal-"), 0);
    wal_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_random),
        cmocka_unit_test(test_record_is_compact),
        cmocka_unit_test(test_lock),
        cmocka_unit_test(test_rollbacks_not_logged),
        cmocka_unit_test(test_schema_logged),
        cmocka_unit_test(test_torn_tail_every_offset),
        cmocka_unit_test(test_bit_flips),
        cmocka_unit_test(test_random_bodies),
        cmocka_unit_test(test_failed_append_rolls_back),
        cmocka_unit_test(test_failed_append_in_query),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_checkpoint_crash_steps),
        cmocka_unit_test(test_checkpoint_automatic),
        cmocka_unit_test(test_sync_modes),
        cmocka_unit_test(test_bad_calls_logged_graph),
        cmocka_unit_test(test_sync_counts),
        cmocka_unit_test(test_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
