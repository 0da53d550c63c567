/*
 * Preallocated log segments (docs/FORMAT.md, "Where the log ends"): a
 * commit overwrites zeros and never changes the file's size; recovery
 * reads a zero tail as the log's end, tells a record that never wholly
 * reached the disk (cut, its header or a sector of it zeros) from one
 * damaged after it was written, and damage followed by records that name
 * it synced from unsynced writes that reached the disk out of order; old
 * (version-1) logs still open; a failed preallocation is a clean IOError.
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

#define TEST_PREALLOC (16u << 10)   /* wal.c's PREALLOC_MAX in test builds */

/* ---- files by hand ---------------------------------------------------------- */

typedef struct seg_file {
    unsigned char *p;
    size_t len;
} seg_file;

static seg_file seg_read(const char *path)
{
    seg_file f = { NULL, (size_t)wal_file_size(path) };
    f.p = malloc(f.len ? f.len : 1);
    assert_non_null(f.p);
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    assert_int_equal(fread(f.p, 1, f.len, in), f.len);
    fclose(in);
    return f;
}

static void seg_write(const char *path, const seg_file *f)
{
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(f->p, 1, f->len, out), f->len);
    fclose(out);
}

/* The offsets of a preallocated segment's whole records (and where the last
   ends, at offs[n]). */
static size_t seg_records(const seg_file *f, size_t *offs, size_t max)
{
    size_t n = 0, off = WAL_SEG_HEADER;
    while (n < max && off + WAL_REC_HEADER <= f->len && walrec_header_checks(f->p + off)) {
        offs[n++] = off;
        off += WAL_REC_HEADER + (size_t)wal_le(f->p + off, 4);
    }
    offs[n] = off;
    return n;
}

static void put_le_n(unsigned char *p, uint64_t x, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

static strata_status open_report(const char *db, strata_open_report *rep, char *err,
                                 size_t errlen, bool truncate, strata_graph **g)
{
    strata_open_options o = { .sync = STRATA_SYNC_OFF, .report = rep, .err = err,
                              .errlen = errlen, .truncate_corrupt = truncate };
    *g = NULL;
    return strata_open(db, &o, g);
}

/* n nodes, node i with v = i, one commit each, under the given sync mode;
   the node ids' property key interned first. */
static void commit_nodes(const char *db, strata_sync sync, int n, const char *big)
{
    strata_graph *g = NULL;
    strata_open_options o = { .sync = sync };
    wal_open_ok(db, &o, &g);
    strata_token k;
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "v", &k), STRATA_OK);
    for (int i = 0; i < n; i++) {
        strata_id id;
        assert_int_equal(strata_begin(g), STRATA_OK);
        assert_int_equal(strata_node_create(g, NULL, 0, &id), STRATA_OK);
        strata_value *v = big ? strata_value_string(big, strlen(big)) : strata_value_int(i);
        assert_int_equal(strata_node_set(g, id, k, v), STRATA_OK);
        strata_value_free(&v);
        assert_int_equal(strata_commit(g), STRATA_OK);
    }
    assert_int_equal(strata_close(&g), STRATA_OK);
}

static uint64_t node_count(strata_graph *g)
{
    strata_memstats ms;
    assert_int_equal(strata_memory_stats(g, &ms), STRATA_OK);
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    uint64_t n = 0;
    for (strata_id id = 0; id < ms.node_slots; id++)
        n += strata_node_exists(v, id);
    strata_view_release(&v);
    return n;
}

static char *big_string(size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        s[i] = (char)('a' + i % 26);
    s[n] = '\0';
    return s;
}

/* ---- a preallocated segment ------------------------------------------------------ */

/* A new segment has its full size at once; commits overwrite its zeros
   and leave the size alone until they outgrow it; 0, 1 and many records
   reopen exactly, with nothing reported cut. */
static void test_zero_one_many_records(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    int counts[] = { 0, 1, 40, 400 };
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        char db[300], seg[400];
        snprintf(db, sizeof db, "%s/db%zu", dir, c);
        strata_graph *g = NULL;
        strata_open_options full = { .sync = STRATA_SYNC_FULL };
        wal_open_ok(db, &full, &g);
        wal_segment_path(db, seg, sizeof seg);
        assert_int_equal(wal_file_size(seg), TEST_PREALLOC);
        /* The dump interns T: interned first, it is logged with the
           first record (tokens go with the next record; with none, none). */
        strata_token t;
        if (counts[c])
            assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "T", &t), STRATA_OK);
        for (int i = 0; i < counts[c]; i++) {
            strata_id id;
            assert_int_equal(strata_node_create(g, NULL, 0, &id), STRATA_OK);
            uint64_t end = wal_segment_end(seg), size = wal_file_size(seg);
            /* The size moves only when a record crosses it, by a whole
               preallocation. */
            assert_true(end <= size);
            assert_int_equal(size % TEST_PREALLOC, 0);
            assert_true(size - end < TEST_PREALLOC + 64);
        }
        char *want = wal_dump_with_next_ids(g);
        assert_int_equal(strata_close(&g), STRATA_OK);
        strata_open_report rep;
        char err[512];
        assert_int_equal(open_report(db, &rep, err, sizeof err, false, &g), STRATA_OK);
        assert_int_equal(rep.torn_bytes, 0);
        assert_int_equal(rep.truncated_bytes, 0);
        assert_string_equal(rep.message, "");
        assert_int_equal(rep.records_replayed, (uint64_t)counts[c]);
        char *got = wal_dump_with_next_ids(g);
        wal_assert_same(want, got);
        free(want);
        free(got);
        assert_int_equal(strata_close(&g), STRATA_OK);
    }
    wal_rmtree(dir);
}

/* 200 commits of 16 bytes each under sync full: the file's size changes
   for none of them (the point of preallocating). */
static void test_commits_keep_size(void **state)
{
    (void)state;
    char dir[256], seg[400];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_graph *g = NULL;
    strata_open_options full = { .sync = STRATA_SYNC_FULL };
    wal_open_ok(dir, &full, &g);
    wal_segment_path(dir, seg, sizeof seg);
    strata_token k;
    strata_id n;
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "v", &k), STRATA_OK);
    assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
    uint64_t size = wal_file_size(seg);
    for (int i = 0; i < 200; i++) {
        strata_value *v = strata_value_int(i);
        assert_int_equal(strata_node_set(g, n, k, v), STRATA_OK);
        strata_value_free(&v);
        assert_int_equal(wal_file_size(seg), size);
    }
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_rmtree(dir);
}

/* The rule on bytes alone: any one non-zero byte after the records, at
   any offset and alignment, is not the end; zeros to the end are, and a
   lone byte there is a torn tail ending just past it (a header that never
   arrived whole). */
static void test_classify_single_bytes(void **state)
{
    (void)state;
    unsigned char buf[200];
    for (size_t len = 150; len < 160; len++) {
        for (size_t off = 24; off < 40; off++) {
            memset(buf, 0, sizeof buf);
            wal_end e;
            waltail_classify(buf, len, off, 7, &e);
            assert_int_equal(e.kind, WAL_END_CLEAN);
            for (size_t at = off; at < len; at++) {
                memset(buf, 0, sizeof buf);
                buf[at] = 0x5a;
                waltail_classify(buf, len, off, 7, &e);
                assert_int_not_equal(e.kind, WAL_END_CLEAN);
                if (e.kind == WAL_END_TORN)
                    assert_true(e.tail_end == at + 1 || e.tail_end == len);
            }
        }
    }
}

/* ---- torn or damaged ---------------------------------------------------------------- */

/* A record of several sectors (a 3000-byte string) whose later sectors
   never reached the disk: torn, cut, reported; the records before kept.
   Its header alone zero (its first sector lost, later ones written): torn
   too.  Everything after it zero but a prefix inside one sector: a disk
   cannot leave that, so it is damage. */
static void test_torn_record_then_zeros(void **state)
{
    (void)state;
    char dir[256], db[300], copy[300], seg[400];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    snprintf(db, sizeof db, "%s/db", dir);
    snprintf(copy, sizeof copy, "%s/copy", dir);
    char *big = big_string(3000);
    commit_nodes(db, STRATA_SYNC_FULL, 5, big);
    wal_segment_path(db, seg, sizeof seg);
    seg_file f = seg_read(seg);
    size_t offs[16];
    assert_int_equal(seg_records(&f, offs, 15), 5);
    size_t last = offs[4], end = offs[5];
    assert_true(end - last > 3 * WAL_SECTOR);
    for (int how = 0; how < 3; how++) {
        wal_copytree(db, copy);
        char cseg[400];
        wal_segment_path(copy, cseg, sizeof cseg);
        seg_file c = seg_read(cseg);
        if (how == 0)   /* every sector after the record's first lost */
            memset(c.p + (last / WAL_SECTOR + 1) * WAL_SECTOR, 0,
                   end - (last / WAL_SECTOR + 1) * WAL_SECTOR);
        else if (how == 1)   /* its header lost, its body written */
            memset(c.p + last, 0, WAL_REC_HEADER);
        else   /* one sector in the middle lost */
            memset(c.p + (last / WAL_SECTOR + 2) * WAL_SECTOR, 0, WAL_SECTOR);
        seg_write(cseg, &c);
        free(c.p);
        strata_open_report rep;
        char err[512];
        strata_graph *g = NULL;
        assert_int_equal(open_report(copy, &rep, err, sizeof err, false, &g), STRATA_OK);
        assert_int_equal(node_count(g), 4);
        assert_true(rep.torn_bytes > 0);
        assert_non_null(strstr(rep.message, "torn tail"));
        /* It takes commits where the torn record was, and keeps them. */
        strata_id n;
        assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
        assert_int_equal(strata_close(&g), STRATA_OK);
        assert_int_equal(open_report(copy, &rep, err, sizeof err, false, &g), STRATA_OK);
        assert_int_equal(node_count(g), 5);
        assert_int_equal(rep.torn_bytes, 0);
        assert_int_equal(strata_close(&g), STRATA_OK);
        wal_rmtree(copy);
    }
    /* A small last record with its last bytes zeroed: the rest of its
       sector was written, so the record was too, then damaged. */
    commit_nodes(copy, STRATA_SYNC_FULL, 3, NULL);
    wal_segment_path(copy, seg, sizeof seg);
    seg_file c = seg_read(seg);
    assert_int_equal(seg_records(&c, offs, 15), 3);
    assert_int_equal(offs[2] / WAL_SECTOR, (offs[3] - 1) / WAL_SECTOR);
    memset(c.p + offs[3] - 3, 0, 3);
    seg_write(seg, &c);
    free(c.p);
    strata_open_report rep;
    char err[512];
    strata_graph *g = NULL;
    assert_int_equal(open_report(copy, &rep, err, sizeof err, false, &g), STRATA_ECORRUPT);
    assert_null(g);
    char at[64];
    snprintf(at, sizeof at, "at byte %zu", offs[2]);
    assert_non_null(strstr(err, at));
    assert_non_null(strstr(err, "wal-"));
    assert_int_equal(open_report(copy, &rep, err, sizeof err, true, &g), STRATA_OK);
    assert_int_equal(node_count(g), 2);
    assert_true(rep.truncated_bytes > 0);
    assert_int_equal(strata_close(&g), STRATA_OK);
    free(f.p);
    free(big);
    wal_rmtree(dir);
}

/* Damage in a record followed by whole records: under sync full each
   later record names it synced, so the damage lies on acknowledged data
   and opening refuses, naming file and offset — even when the damage
   looks like a lost sector.  Under sync off the later records name nothing
   synced: they are unsynced writes that reached the disk before the
   damaged one, and go with it as a torn tail. */
static void test_damage_then_records(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    char *big = big_string(1500);
    for (int mode = 0; mode < 2; mode++) {
        for (int how = 0; how < 2; how++) {
            char db[300], seg[400];
            snprintf(db, sizeof db, "%s/db%d%d", dir, mode, how);
            commit_nodes(db, mode ? STRATA_SYNC_OFF : STRATA_SYNC_FULL, 6, big);
            wal_segment_path(db, seg, sizeof seg);
            seg_file f = seg_read(seg);
            size_t offs[16];
            assert_int_equal(seg_records(&f, offs, 15), 6);
            size_t at = offs[2];   /* the third node's record */
            if (how == 0)
                f.p[at + WAL_REC_HEADER + 100] ^= 0x10;   /* a flipped bit */
            else   /* a lost sector */
                memset(f.p + (at / WAL_SECTOR + 1) * WAL_SECTOR, 0, WAL_SECTOR);
            seg_write(seg, &f);
            free(f.p);
            strata_open_report rep;
            char err[512];
            strata_graph *g = NULL;
            strata_status s = open_report(db, &rep, err, sizeof err, false, &g);
            if (mode == 0 || how == 0) {
                assert_int_equal(s, STRATA_ECORRUPT);
                char want[64];
                snprintf(want, sizeof want, "at byte %zu", at);
                assert_non_null(strstr(err, want));
                assert_non_null(strstr(err, "wal-"));
                assert_int_equal(open_report(db, &rep, err, sizeof err, true, &g), STRATA_OK);
                assert_true(rep.truncated_bytes > 0);
            } else {
                assert_int_equal(s, STRATA_OK);
                assert_true(rep.torn_bytes > 0);
                assert_non_null(strstr(rep.message, "torn tail"));
            }
            assert_int_equal(node_count(g), 2);
            assert_int_equal(strata_close(&g), STRATA_OK);
        }
    }
    free(big);
    wal_rmtree(dir);
}

/* Bytes past a segment's zero tail that do not form a whole record (say,
   a stray write): neither a zero tail nor a torn record, since the record
   due is absent (its header zero) — cut as torn; but a whole, synced
   record there is kept from being dropped silently. */
static void test_stray_bytes_after_zero_tail(void **state)
{
    (void)state;
    char dir[256], db[300], seg[400];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    snprintf(db, sizeof db, "%s/db", dir);
    commit_nodes(db, STRATA_SYNC_FULL, 3, NULL);
    wal_segment_path(db, seg, sizeof seg);
    seg_file f = seg_read(seg);
    size_t offs[8];
    assert_int_equal(seg_records(&f, offs, 7), 3);
    /* Move the last record 600 bytes on: record 3's place is zeros, and a
       whole record naming it synced lies after. */
    size_t last = offs[2], len = offs[3] - offs[2];
    memmove(f.p + last + 600, f.p + last, len);
    memset(f.p + last, 0, 600);
    unsigned char *h = f.p + last + 600;
    uint64_t seq = wal_le(h + 4, 8);
    put_le_n(h + 4, seq + 1, 8);   /* the record after the one due */
    put_le_n(h + 12, 1, 4);        /* ... which names it synced */
    put_le_n(h + 16, crc32c(0, h, 16), 4);
    seg_write(seg, &f);
    strata_open_report rep;
    char err[512];
    strata_graph *g = NULL;
    assert_int_equal(open_report(db, &rep, err, sizeof err, false, &g), STRATA_ECORRUPT);
    assert_non_null(strstr(err, "reached the disk"));
    /* The same record naming nothing synced: a torn tail. */
    put_le_n(h + 12, seq + 1, 4);
    put_le_n(h + 16, crc32c(0, h, 16), 4);
    seg_write(seg, &f);
    assert_int_equal(open_report(db, &rep, err, sizeof err, false, &g), STRATA_OK);
    assert_int_equal(node_count(g), 2);
    assert_true(rep.torn_bytes > 0);
    assert_int_equal(strata_close(&g), STRATA_OK);
    free(f.p);
    wal_rmtree(dir);
}

/* Each record's lag says how far behind the disk was: 1 under sync full
   (every earlier record synced); under sync normal 1 again once the
   background sync has run (a second later), more before it; under sync
   off the records since opening. */
static void test_lag_by_sync_mode(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_sync modes[] = { STRATA_SYNC_FULL, STRATA_SYNC_NORMAL, STRATA_SYNC_OFF };
    for (int m = 0; m < 3; m++) {
        char db[300], seg[400];
        snprintf(db, sizeof db, "%s/db%d", dir, m);
        strata_graph *g = NULL;
        strata_open_options o = { .sync = modes[m] };
        wal_open_ok(db, &o, &g);
        strata_id n;
        for (int i = 0; i < 3; i++)
            assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
        /* sync normal: the background sync reaches the third record within
           about 100 ms (30 s on a loaded machine), and the fourth's lag
           says so */
        for (int waited = 0; modes[m] == STRATA_SYNC_NORMAL && wal_synced_seq(g) < 3 &&
                             waited < 3000;
             waited++) {
            struct timespec ten_ms = { 0, 10 * 1000 * 1000 };
            nanosleep(&ten_ms, NULL);
        }
        assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
        assert_int_equal(strata_close(&g), STRATA_OK);
        wal_segment_path(db, seg, sizeof seg);
        seg_file f = seg_read(seg);
        size_t offs[8];
        assert_int_equal(seg_records(&f, offs, 7), 4);
        uint64_t lags[4];
        for (int i = 0; i < 4; i++)
            lags[i] = wal_le(f.p + offs[i] + 12, 4);
        free(f.p);
        assert_int_equal(lags[0], 1);   /* nothing before it */
        if (modes[m] == STRATA_SYNC_FULL) {
            assert_true(lags[1] == 1 && lags[2] == 1 && lags[3] == 1);
        } else if (modes[m] == STRATA_SYNC_NORMAL) {
            assert_true(lags[1] >= 1 && lags[1] <= 2 && lags[2] >= 1 && lags[2] <= 3);
            assert_int_equal(lags[3], 1);
        } else {
            assert_true(lags[1] == 2 && lags[2] == 3 && lags[3] == 4);
        }
    }
    wal_rmtree(dir);
}

/* A segment that is not the last ends in zeros after its records (a
   checkpoint synced it before starting the next): that opens; anything
   else there, even what would be a torn tail in the last, is damage. */
static void test_segment_before_the_last(void **state)
{
    (void)state;
    char dir[256], db[300], copy[300], first[400];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    snprintf(db, sizeof db, "%s/db", dir);
    snprintf(copy, sizeof copy, "%s/copy", dir);
    commit_nodes(db, STRATA_SYNC_FULL, 3, NULL);
    snprintf(first, sizeof first, "%s/wal-0000000000000001.log", db);
    strata_graph *g = NULL;
    wal_open_ok(db, NULL, &g);
    wal_checkpoint_stop_after(1);   /* as a crash would: both segments stay */
    assert_int_equal(strata_checkpoint(g), STRATA_OK);
    wal_checkpoint_stop_after(0);
    strata_id n;
    assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
    assert_int_equal(strata_close(&g), STRATA_OK);
    assert_int_equal(wal_count_files(db, "wal-"), 2);
    strata_open_report rep;
    char err[512];
    assert_int_equal(open_report(db, &rep, err, sizeof err, false, &g), STRATA_OK);
    assert_int_equal(node_count(g), 4);
    assert_int_equal(rep.torn_bytes, 0);
    assert_int_equal(strata_close(&g), STRATA_OK);
    for (int how = 0; how < 2; how++) {
        wal_copytree(db, copy);
        char seg[400];
        snprintf(seg, sizeof seg, "%s/wal-0000000000000001.log", copy);
        seg_file f = seg_read(seg);
        size_t offs[8];
        assert_int_equal(seg_records(&f, offs, 7), 3);
        if (how == 0)   /* its last record's header never arrived: torn in a last segment */
            memset(f.p + offs[2], 0, WAL_REC_HEADER);
        else   /* a stray byte in the zeros */
            f.p[offs[3] + 700] = 1;
        seg_write(seg, &f);
        free(f.p);
        assert_int_equal(open_report(copy, &rep, err, sizeof err, false, &g), STRATA_ECORRUPT);
        assert_non_null(strstr(err, "wal-0000000000000001.log at byte"));
        wal_rmtree(copy);
    }
    wal_rmtree(dir);
}

/* ---- an old log ------------------------------------------------------------------- */

/* Writes segment 1 of db (a new directory) in the given version: the
   header, then one record per body (version 1: 20-byte record headers;
   2 and 3: 24, with lag 1), then zeros_after zero bytes.  Frees the
   bodies; returns where the records end. */
static size_t write_segment(const char *db, uint32_t seg_version, wal_buf *bodies, int n,
                            size_t zeros_after)
{
    assert_int_equal(mkdir(db, 0777), 0);
    unsigned char buf[512] = { 0 };
    memcpy(buf, "STRATAWL", 8);
    put_le_n(buf + 8, 1, 8);
    put_le_n(buf + 16, seg_version, 4);
    put_le_n(buf + 20, crc32c(0, buf, 20), 4);
    size_t off = 24, hsize = seg_version == 1 ? 20 : 24;
    for (int i = 0; i < n; i++) {
        unsigned char *h = buf + off;
        put_le_n(h, bodies[i].len, 4);
        put_le_n(h + 4, (uint64_t)i + 1, 8);
        if (seg_version == 1) {
            put_le_n(h + 12, crc32c(0, h, 12), 4);
        } else {
            put_le_n(h + 12, 1, 4);
            put_le_n(h + 16, crc32c(0, h, 16), 4);
        }
        put_le_n(h + hsize - 4, crc32c(0, bodies[i].p, bodies[i].len), 4);
        memcpy(h + hsize, bodies[i].p, bodies[i].len);
        off += hsize + bodies[i].len;
        walbuf_free(&bodies[i]);
    }
    char seg[400];
    snprintf(seg, sizeof seg, "%s/wal-0000000000000001.log", db);
    FILE *out = fopen(seg, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(buf, 1, off + zeros_after, out), off + zeros_after);
    fclose(out);
    return off;
}

/* The calls the old-log tests write: the key token "v" (token 0), a node
   create, node 0's delete, and node 0's v = 7. */
enum { CALL_TOKEN, CALL_CREATE, CALL_DELETE, CALL_SET_7 };

/* Encodes the calls listed (ending with -1) into body b. */
static void encode_calls(wal_buf *b, const int *calls)
{
    strata_value *seven = strata_value_int(7);
    for (; *calls >= 0; calls++) {
        wal_op op;
        switch (*calls) {
        case CALL_TOKEN:
            op = (wal_op){ .code = WOP_TOKEN, .kind = STRATA_KEY, .name = "v", .name_len = 1 };
            break;
        case CALL_CREATE:
            op = (wal_op){ .code = WOP_NODE_CREATE };
            break;
        case CALL_DELETE:
            op = (wal_op){ .code = WOP_NODE_DELETE, .id = 0 };
            break;
        default:
            op = (wal_op){ .code = WOP_NODE_SET, .id = 0, .a = 0,
                           .val = (const value *)(const void *)seven };
        }
        assert_int_equal(walrec_encode(b, &op), 0);
    }
    strata_value_free(&seven);
}

/* Writes a version-1 segment (20-byte record headers, no preallocation)
   holding: the key token "v", node 0, node 0's v = 7, node 1. */
static size_t write_v1_log(const char *db, size_t zeros_after)
{
    wal_buf bodies[3] = { { 0 } };
    encode_calls(&bodies[0], (const int[]){ CALL_TOKEN, CALL_CREATE, -1 });
    encode_calls(&bodies[1], (const int[]){ CALL_SET_7, -1 });
    encode_calls(&bodies[2], (const int[]){ CALL_CREATE, -1 });
    return write_segment(db, 1, bodies, 3, zeros_after);
}

static void assert_v1_graph(strata_graph *g, uint64_t nodes)
{
    assert_int_equal(node_count(g), nodes);
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    strata_token k;
    assert_int_equal(strata_token_lookup(v, STRATA_KEY, "v", &k), STRATA_OK);
    strata_value *got = NULL;
    assert_int_equal(strata_node_get(v, 0, k, &got), STRATA_OK);
    int64_t x;
    assert_int_equal(strata_value_get_int(got, &x), STRATA_OK);
    assert_int_equal(x, 7);
    strata_value_free(&got);
    strata_view_release(&v);
}

/* An old log opens as before — its zero or cut tail reported torn and
   cut, a damaged record refused — and new commits go to a new,
   preallocated segment; both reopen. */
static void test_old_log(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    for (int how = 0; how < 4; how++) {
        char db[300];
        snprintf(db, sizeof db, "%s/db%d", dir, how);
        size_t end = write_v1_log(db, how == 1 ? 100 : 0);
        char seg[400];
        snprintf(seg, sizeof seg, "%s/wal-0000000000000001.log", db);
        if (how == 2)
            assert_int_equal(truncate(seg, (off_t)end - 1), 0);   /* the last record cut */
        if (how == 3)
            wal_flip_bit(seg, 24 + 20 + 1, 2);   /* the first record's body */
        strata_open_report rep;
        char err[512];
        strata_graph *g = NULL;
        long syncs = wal_sync_count();
        strata_status s = open_report(db, &rep, err, sizeof err, false, &g);
        /* The old segment synced (what it holds must be on the disk before
           new records say so), then the new one created. */
        if (how == 0)
            assert_int_equal(wal_sync_count() - syncs, 2);
        if (how == 3) {
            assert_int_equal(s, STRATA_ECORRUPT);
            assert_non_null(strstr(err, "wal-0000000000000001.log at byte 24"));
            continue;
        }
        assert_int_equal(s, STRATA_OK);
        assert_v1_graph(g, how == 2 ? 1 : 2);
        assert_int_equal(rep.torn_bytes, how == 1 ? 100 : how == 2 ? 21 : 0);   /* the last record: 20 + 2 bytes */
        strata_id n;
        assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
        assert_int_equal(strata_close(&g), STRATA_OK);
        assert_int_equal(wal_count_files(db, "wal-"), 2);
        char newest[400];
        wal_segment_path(db, newest, sizeof newest);
        seg_file f = seg_read(newest);
        assert_int_equal(wal_le(f.p + 16, 4), 3);
        assert_int_equal(f.len, TEST_PREALLOC);
        free(f.p);
        assert_int_equal(open_report(db, &rep, err, sizeof err, false, &g), STRATA_OK);
        assert_int_equal(rep.torn_bytes, 0);
        assert_v1_graph(g, how == 2 ? 2 : 3);
        assert_int_equal(strata_close(&g), STRATA_OK);
    }
    wal_rmtree(dir);
}

/* Writes a segment of the given version (2 or 3) holding two records:
   the key token "v" and nodes 0 and 1; then one unit that deletes node 0,
   creates a node and sets node 0's v = 7. */
static void write_reuse_log(const char *db, uint32_t seg_version)
{
    wal_buf bodies[2] = { { 0 } };
    encode_calls(&bodies[0], (const int[]){ CALL_TOKEN, CALL_CREATE, CALL_CREATE, -1 });
    encode_calls(&bodies[1], (const int[]){ CALL_DELETE, CALL_CREATE, CALL_SET_7, -1 });
    write_segment(db, seg_version, bodies, 2, 64);   /* a zero tail */
}

/* A version-2 log replays call by call, as its writer ran: the unit's
   create took the id its delete freed, so node 0 exists again and gets
   v = 7.  The same records in a version-3 segment replay as one
   statement, whose create takes a new id (core/txn.h): node 0 stays
   deleted and the set names a node that does not exist — refused as
   damage, never applied to another node. */
static void test_version_2_replays_call_by_call(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    char db[300];
    snprintf(db, sizeof db, "%s/v2", dir);
    write_reuse_log(db, 2);
    strata_open_report rep;
    char err[512];
    strata_graph *g = NULL;
    assert_int_equal(open_report(db, &rep, err, sizeof err, false, &g), STRATA_OK);
    assert_v1_graph(g, 2);
    assert_int_equal(strata_close(&g), STRATA_OK);

    snprintf(db, sizeof db, "%s/v3", dir);
    write_reuse_log(db, 3);
    assert_int_equal(open_report(db, &rep, err, sizeof err, false, &g), STRATA_ECORRUPT);
    assert_non_null(strstr(err, "record 2 does not replay"));
    wal_rmtree(dir);
}

/* ---- failed preallocation ---------------------------------------------------------- */

/* Creating a database whose first segment cannot be preallocated fails
   with EIO and leaves no segment; a commit that must grow the segment
   fails as a failed write does (rolled back, the graph writable once the
   cause is gone); so does a checkpoint that cannot start its segment. */
static void test_prealloc_faults(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(wal_tmpdir(dir, sizeof dir), 0);
    strata_open_options full = { .sync = STRATA_SYNC_FULL };
    char err[512];
    full.err = err;
    full.errlen = sizeof err;
    strata_graph *g = NULL;
    wal_fault_at(WAL_FAULT_PREALLOC, 1, ENOSPC);
    assert_int_equal(strata_open(dir, &full, &g), STRATA_EIO);
    wal_fault_clear();
    assert_null(g);
    assert_non_null(strstr(err, "No space left"));
    assert_int_equal(wal_count_files(dir, "wal-"), 0);

    wal_open_ok(dir, &full, &g);
    strata_token k;
    assert_int_equal(strata_token_intern(g, STRATA_KEY, "v", &k), STRATA_OK);
    strata_id n;
    assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
    free(wal_dump_with_next_ids(g));   /* interns the dump's own token */
    char *before = wal_dump_with_next_ids(g);
    char *big = big_string(TEST_PREALLOC + 100);   /* past the preallocation */
    strata_value *v = strata_value_string(big, strlen(big));
    for (int kind = 0; kind < 2; kind++) {
        wal_fault_at(WAL_FAULT_PREALLOC, 1, ENOSPC);
        strata_status s;
        if (kind == 0) {
            s = strata_node_set(g, n, k, v);
        } else {
            assert_int_equal(strata_begin(g), STRATA_OK);
            assert_int_equal(strata_node_set(g, n, k, v), STRATA_OK);
            s = strata_commit(g);
        }
        wal_fault_clear();
        assert_int_equal(s, STRATA_EIO);
        assert_non_null(strstr(strata_errmsg(g), "preallocating the log"));
        assert_false(strata_in_transaction(g));
        char *now = wal_dump_with_next_ids(g);
        wal_assert_same(before, now);
        free(now);
    }
    assert_int_equal(strata_node_set(g, n, k, v), STRATA_OK);   /* the cause gone */
    strata_value_free(&v);
    char *grown = wal_dump_with_next_ids(g);

    wal_fault_at(WAL_FAULT_PREALLOC, 1, EIO);
    assert_int_equal(strata_checkpoint(g), STRATA_EIO);
    wal_fault_clear();
    assert_int_equal(wal_count_files(dir, "wal-"), 1);
    assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
    assert_int_equal(strata_checkpoint(g), STRATA_OK);
    assert_int_equal(strata_node_create(g, NULL, 0, &n), STRATA_OK);
    char *last = wal_dump_with_next_ids(g);
    assert_int_equal(strata_close(&g), STRATA_OK);
    wal_open_ok(dir, &full, &g);
    char *back = wal_dump_with_next_ids(g);
    wal_assert_same(last, back);
    assert_int_equal(strata_close(&g), STRATA_OK);
    free(before);
    free(grown);
    free(last);
    free(back);
    free(big);
    wal_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_one_many_records),
        cmocka_unit_test(test_commits_keep_size),
        cmocka_unit_test(test_classify_single_bytes),
        cmocka_unit_test(test_torn_record_then_zeros),
        cmocka_unit_test(test_damage_then_records),
        cmocka_unit_test(test_stray_bytes_after_zero_tail),
        cmocka_unit_test(test_lag_by_sync_mode),
        cmocka_unit_test(test_segment_before_the_last),
        cmocka_unit_test(test_old_log),
        cmocka_unit_test(test_version_2_replays_call_by_call),
        cmocka_unit_test(test_prealloc_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
