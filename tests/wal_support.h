/*
 * What the log tests share: a temporary directory, random work through
 * the public API (idle writes, statements and transactions that commit or
 * roll back, schema changes), and a dump that adds the ids the graph
 * would hand out next (free lists) to persist_support.h's canonical dump.
 * Include after persist_support.h.
 */
#ifndef STRATA_TESTS_WAL_SUPPORT_H
#define STRATA_TESTS_WAL_SUPPORT_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/persist_codec.h"

typedef struct rng {
    uint64_t s;
} rng;

static inline uint32_t rng_next(rng *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(r->s >> 33);
}

static inline uint32_t rng_below(rng *r, uint32_t n) { return n ? rng_next(r) % n : 0; }

static inline int wal_tmpdir(char *dir, size_t len)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, len, "%s/strata-wal-XXXXXX", base);
    return mkdtemp(dir) ? 0 : -1;
}

static inline void wal_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[1400];
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p)
            continue;
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            wal_rmtree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static inline void wal_copytree(const char *from, const char *to)
{
    mkdir(to, 0777);
    DIR *d = opendir(from);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char a[1400], b[1400];
        snprintf(a, sizeof a, "%s/%s", from, e->d_name);
        snprintf(b, sizeof b, "%s/%s", to, e->d_name);
        FILE *in = fopen(a, "rb"), *out = fopen(b, "wb");
        assert_non_null(in);
        assert_non_null(out);
        char buf[8192];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
            assert_int_equal(fwrite(buf, 1, n, out), n);
        fclose(in);
        fclose(out);
    }
    closedir(d);
}

static inline uint64_t wal_file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

/* Files of dir whose name starts with prefix. */
static inline int wal_count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

static inline uint64_t wal_le(const unsigned char *p, int n)
{
    uint64_t x = 0;
    for (int i = 0; i < n; i++)
        x |= (uint64_t)p[i] << (8 * i);
    return x;
}

/* Where the whole records of a segment end: segments are preallocated
   (versions 2 and 3), so this is not the file's size.  Walks the records by
   their lengths while their headers check (FORMAT.md, "Record"). */
static inline uint64_t wal_segment_end(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint64_t len = wal_file_size(path);
    unsigned char *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, len, f), len);
    fclose(f);
    assert_true(len >= 24);
    bool v1 = wal_le(buf + 16, 4) == 1;
    uint64_t hsize = v1 ? 20 : 24, off = 24;
    while (off + hsize <= len) {
        const unsigned char *h = buf + off;
        uint64_t body = wal_le(h, 4), crc_at = v1 ? 12 : 16;
        if (wal_le(h + crc_at, 4) != crc32c(0, h, crc_at) || body > len - off - hsize)
            break;
        off += hsize + body;
    }
    free(buf);
    return off;
}

/* The bytes of records (and segment headers) in every log segment. */
static inline uint64_t wal_log_size(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    uint64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "wal-", 4) == 0) {
            char p[1400];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            n += wal_segment_end(p);
        }
    closedir(d);
    return n;
}

/* The path of the newest segment. */
static inline void wal_segment_path(const char *dir, char *out, size_t len)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char best[256] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "wal-", 4) == 0 && strcmp(e->d_name, best) > 0)
            memcpy(best, e->d_name, strlen(e->d_name) + 1);
    closedir(d);
    assert_true(best[0]);
    snprintf(out, len, "%s/%s", dir, best);
}

static inline void wal_flip_bit(const char *path, uint64_t at, int bit)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, (off_t)at), 1);
    c ^= (unsigned char)(1u << bit);
    assert_int_equal(pwrite(fd, &c, 1, (off_t)at), 1);
    close(fd);
}

/* Fails naming the first line where two dumps differ. */
static inline void wal_assert_same(const char *want, const char *got)
{
    if (!strcmp(want, got))
        return;
    size_t line = 1, i = 0, start = 0;
    while (want[i] && want[i] == got[i]) {
        if (want[i] == '\n') {
            line++;
            start = i + 1;
        }
        i++;
    }
    fail_msg("dumps differ at line %zu:\nwant: %.*s\ngot:  %.*s", line, (int)strcspn(want + start, "\n"), want + start, (int)strcspn(got + start, "\n"),
             got + start);
}

static inline void wal_open_ok(const char *db, const strata_open_options *opts, strata_graph **g)
{
    char err[512] = "";
    /* Without options: no fsync, to keep the tests quick (what reaches
       the files is the same in every mode; test_sync_modes and the crash
       harness run sync full). */
    strata_open_options o = opts ? *opts : (strata_open_options){ .sync = STRATA_SYNC_OFF };
    o.err = err;
    o.errlen = sizeof err;
    strata_status s = strata_open(db, &o, g);
    if (s != STRATA_OK)
        fail_msg("strata_open(%s): %s: %s", db, strata_errstr(s), err);
}

/* The canonical dump, checked for integrity, plus the ids three node
   creates and three relationship creates would get now (the free
   lists), found in a transaction that is rolled back. */
static inline char *wal_dump_with_next_ids(strata_graph *g)
{
    strata_view *v = NULL;
    assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
    assert_int_equal(strata_integrity_check(v), STRATA_OK);
    char *d = dump_view(v);
    strata_view_release(&v);
    assert_int_equal(strata_begin(g), STRATA_OK);
    strata_token t;
    assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, "T", &t), STRATA_OK);
    strata_id n[3], r[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(strata_node_create(g, NULL, 0, &n[i]), STRATA_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(strata_rel_create(g, n[0], n[i], t, &r[i]), STRATA_OK);
    assert_int_equal(strata_rollback(g), STRATA_OK);
    size_t len = strlen(d);
    d = realloc(d, len + 200);
    assert_non_null(d);
    snprintf(d + len, 200, "next nodes %llu %llu %llu rels %llu %llu %llu\n",
             (unsigned long long)n[0], (unsigned long long)n[1], (unsigned long long)n[2],
             (unsigned long long)r[0], (unsigned long long)r[1], (unsigned long long)r[2]);
    return d;
}

typedef struct wal_tokens {
    strata_token label[3], type[2], key[4];
} wal_tokens;

static inline void wal_intern_all(strata_graph *g, wal_tokens *t)
{
    static const char *labels[] = { "A", "B", "C" }, *types[] = { "T", "U" },
                      *keys[] = { "k0", "k1", "k2", "k3" };
    for (int i = 0; i < 3; i++)
        assert_int_equal(strata_token_intern(g, STRATA_LABEL, labels[i], &t->label[i]),
                         STRATA_OK);
    for (int i = 0; i < 2; i++)
        assert_int_equal(strata_token_intern(g, STRATA_RELTYPE, types[i], &t->type[i]),
                         STRATA_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal(strata_token_intern(g, STRATA_KEY, keys[i], &t->key[i]), STRATA_OK);
}

static inline strata_value *wal_random_value(rng *r)
{
    switch (rng_below(r, 6)) {
    case 0:
        return strata_value_int((int64_t)rng_below(r, 50) - 10);
    case 1: {
        char s[24];
        int n = snprintf(s, sizeof s, "s%u", rng_below(r, 1000));
        return strata_value_string(s, (size_t)n);
    }
    case 2:
        return strata_value_float((double)rng_below(r, 1000) / 7.0);
    case 3:
        return strata_value_bool(rng_below(r, 2));
    case 4: {
        strata_value *items[3] = { strata_value_int(1), strata_value_int(rng_below(r, 9)),
                                   strata_value_int(3) };
        strata_value *l = strata_value_list((const strata_value *const *)items, 3);
        for (int i = 0; i < 3; i++)
            strata_value_free(&items[i]);
        return l;
    }
    default:
        return strata_value_null();   /* removes */
    }
}

/* One random write call; its status is whatever the graph says (misses,
   constraint violations and connected deletes are part of the work). */
static inline void wal_random_call(strata_graph *g, rng *r, const wal_tokens *t)
{
    strata_memstats ms;
    assert_int_equal(strata_memory_stats(g, &ms), STRATA_OK);
    strata_id node = rng_below(r, (uint32_t)ms.node_slots + 1);
    strata_id rel = rng_below(r, (uint32_t)ms.rel_slots + 1);
    strata_id out;
    switch (rng_below(r, 10)) {
    case 0:
    case 1: {
        strata_token l[2] = { t->label[rng_below(r, 3)], t->label[rng_below(r, 3)] };
        (void)strata_node_create(g, l, rng_below(r, 3), &out);
        break;
    }
    case 2:
    case 3: {
        strata_value *v = wal_random_value(r);
        (void)strata_node_set(g, node, t->key[rng_below(r, 4)], v);
        strata_value_free(&v);
        break;
    }
    case 4:
        (void)strata_rel_create(g, node, rng_below(r, (uint32_t)ms.node_slots + 1),
                                t->type[rng_below(r, 2)], &out);
        break;
    case 5: {
        strata_value *v = wal_random_value(r);
        (void)strata_rel_set(g, rel, t->key[rng_below(r, 4)], v);
        strata_value_free(&v);
        break;
    }
    case 6:
        (void)(rng_below(r, 2) ? strata_node_delete(g, node) : strata_node_detach_delete(g, node));
        break;
    case 7:
        (void)strata_rel_delete(g, rel);
        break;
    case 8:
        (void)(rng_below(r, 2) ? strata_node_add_label(g, node, t->label[rng_below(r, 3)])
                               : strata_node_remove_label(g, node, t->label[rng_below(r, 3)]));
        break;
    default:
        (void)strata_node_remove(g, node, t->key[rng_below(r, 4)]);
        break;
    }
}

/* One unit of random work: an idle call, a statement, a transaction with
   statements inside, each committing or rolling back; now and then an
   index is created or dropped. */
static inline void wal_random_unit(strata_graph *g, rng *r, const wal_tokens *t)
{
    uint32_t what = rng_below(r, 20);
    if (what < 10) {
        wal_random_call(g, r, t);
    } else if (what < 14) {
        assert_int_equal(strata_statement_begin(g), STRATA_OK);
        for (uint32_t k = rng_below(r, 6); k > 0; k--)
            wal_random_call(g, r, t);
        (void)strata_statement_end(g, rng_below(r, 4) != 0);
    } else if (what < 18) {
        assert_int_equal(strata_begin(g), STRATA_OK);
        for (uint32_t k = rng_below(r, 5); k > 0; k--) {
            if (rng_below(r, 2)) {
                wal_random_call(g, r, t);
                continue;
            }
            assert_int_equal(strata_statement_begin(g), STRATA_OK);
            for (uint32_t j = rng_below(r, 4); j > 0; j--)
                wal_random_call(g, r, t);
            (void)strata_statement_end(g, rng_below(r, 3) != 0);
        }
        if (rng_below(r, 4))
            assert_int_equal(strata_commit(g), STRATA_OK);
        else
            assert_int_equal(strata_rollback(g), STRATA_OK);
    } else {
        strata_index idx;
        strata_token key = t->key[rng_below(r, 4)];
        strata_index_kind kind = (strata_index_kind)rng_below(r, 3);
        /* One schema change per unit: each is a record of its own. */
        if (rng_below(r, 2)) {
            (void)strata_index_create(g, kind, false, t->label[rng_below(r, 3)], &key, 1, &idx);
            return;
        }
        strata_view *v = NULL;
        strata_index all[32];
        size_t count = 0;
        assert_int_equal(strata_snapshot(g, &v), STRATA_OK);
        assert_int_equal(strata_indexes(v, all, 32, &count), STRATA_OK);
        strata_view_release(&v);
        if (count > 3)
            assert_int_equal(strata_index_drop(g, all[rng_below(r, (uint32_t)count)]),
                             STRATA_OK);
    }
}

/* n units of random work, then one node created (so the tokens are in
   the log). */
static inline void wal_random_work(strata_graph *g, rng *r, int n)
{
    wal_tokens t;
    wal_intern_all(g, &t);
    for (int i = 0; i < n; i++)
        wal_random_unit(g, r, &t);
    strata_id last;
    assert_int_equal(strata_node_create(g, NULL, 0, &last), STRATA_OK);
}

#endif
