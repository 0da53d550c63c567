/*
 * readers — W2 of docs/BENCHMARKS.md: reader fanout and reader/writer overlap,
 * strata against SQLite (WAL, through libsqlite3) in the same process and
 * the same run, on seed 001's workload.
 *
 *   readers [--waves W] [--quick] [--json]
 *   readers --lookups-only [--nodes N] [--loop L] [--variant ID] [--json]
 *
 * Data: 10,000 records; key i is the 8-byte big-endian encoding of i, the
 * value 128 bytes whose first 16 bytes spell the key in hex and the next 8
 * a version number (so every read can be checked).
 *   - strata: one node per record, label Record, property "key" (int64,
 *     UNIQUE index) and property "value" (a 128-byte string).
 *   - SQLite: a file database in a fresh directory under /tmp (removed at
 *     exit), journal_mode=WAL, synchronous=FULL,
 *     kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID, k the 8 key bytes.
 *
 * Cases, each timed from CLOCK_MONOTONIC around the whole unit of work:
 *   fanout R (R = 1, 4, 8): one wave = start R threads; each takes one view
 *     (strata: strata_snapshot; SQLite: opens its own connection, BEGIN),
 *     does 128 point lookups with keys from its own xorshift64, checks
 *     every value, releases (SQLite: COMMIT, close); the wave ends when all
 *     are joined.  As in seed 001, SQLite uses one connection per reader
 *     thread and the connection's set-up is part of the timed work; strata
 *     has no connection, only a view.
 *   overlap: start 4 reader threads; each pins a view (SQLite: a connection
 *     and a read transaction) and reads key K, checking it holds the old
 *     version; once all four are pinned one writer commits a new value for
 *     K (strata: strata_node_set through the graph; SQLite: UPDATE in a
 *     BEGIN IMMEDIATE transaction on the writer's connection, synchronous=
 *     FULL, so the commit fsyncs); a fresh view must see the new value;
 *     then every reader re-reads K in its pinned view and must still see
 *     the old one.  Thread start, pins, write and every check are inside
 *     the timed region on both sides.  The writer's connection and the
 *     fresh reader's connection are opened once, before the rounds.
 *   thread floor: the same waves with threads that return at once — what
 *     thread start and join alone cost.
 *   tight loop: one thread, one view, random point lookups back to back —
 *     the per-core lookup rate, with a breakdown of where the time goes,
 *     and the same lookup without value handles (strata_index_get_int,
 *     then strata_node_peek's borrowed read) one key at a time and 64 keys
 *     per call (strata_index_get_ints, strata_nodes_peek), every value
 *     checked alike; then the full lookup (and SQLite's) on as many
 *     threads as there are
 *     cores at once, to see whether the rate grows with threads.
 *   --lookups-only: the strata rows of the tight loop alone (L lookups,
 *     2,000,000 by default), on N records (10,000 by default; 1,000,000 for
 *     the random-key figure on a big graph): no waves, no SQLite; --variant
 *     runs one of them alone (strata_full, strata_prebuilt_key,
 *     strata_index_only, strata_get_only, strata_direct, strata_batch).
 *     Under callgrind (--toggle-collect=tight_loop) with a small L it
 *     counts instructions per lookup: divide by L + L/10 + 1 (the warm-up).
 *   The tight loops report the wall clock and the thread's CPU time: on a
 *     loaded machine the wall clock counts the time the thread waits for a
 *     core, the CPU time does not (both still suffer the other jobs'
 *     cache pollution).
 *
 * Waves of the two engines alternate (strata, SQLite, strata, ...) so both
 * see the same machine load; report ratios, not absolute times (the
 * machines are shared and noisy).  A failed check exits with status 1.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <strata.h>

#define BENCH_NAME "readers"
#include "bench_util.h"

#define RECORDS 10000
#define VALUE_LEN 128
#define LOOKUPS_PER_READER 128
#define OVERLAP_READERS 4

static const int fanouts[] = { 1, 4, 8 };
#define NFANOUTS ((int)(sizeof fanouts / sizeof fanouts[0]))

/* Seed 001's table (Criterion point estimates, x86_64 Windows, Tosumu in
   Rust), per wave in milliseconds, for reference only. */
static const double seed_tosumu_ms[] = { 8.130, 33.895, 66.669 };
static const double seed_sqlite_ms[] = { 1.902, 4.646, 7.746 };
static const double seed_overlap_tosumu_ms = 1.984, seed_overlap_sqlite_ms = 6.401;

/* ---- small helpers ------------------------------------------------------ */

/* A per-thread seed: never zero (xorshift's fixed point), different per
   wave and thread. */
static uint64_t thread_seed(int wave, int thread)
{
    return 0x9e3779b97f4a7c15ull * (uint64_t)(wave * 64 + thread + 1) | 1;
}

#define SQL_OK(db, call)                                                               \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (rc_ != SQLITE_OK && rc_ != SQLITE_DONE && rc_ != SQLITE_ROW)               \
            fail("%s: %s", #call, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc_));      \
    } while (0)

/* ---- the records -------------------------------------------------------- */

static const char hexdigits[] = "0123456789abcdef";

static void put_hex(uint64_t x, char *out, int digits)
{
    for (int i = digits - 1; i >= 0; i--, x >>= 4)
        out[i] = hexdigits[x & 15];
}

/* The check of a value reads 8 text bytes at a time (SWAR): some 100
   straight-line instructions a lookup, not 190 with branches, so the
   loops measure the engines more than the harness; it checks the same
   bytes.  Here: the 8 bytes at p in memory order, as a native word. */
static uint64_t text8(const void *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* The same with the first byte lowest, on any byte order. */
static uint64_t load8(const void *p)
{
    uint64_t w = text8(p);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);   /* first byte lowest, as on little-endian */
#endif
    return w;
}

#define BYTES(b) (0x0101010101010101ull * (b))

/* The word whose 8 bytes in memory are x's 8 hex digits, most significant
   first: compared with text8 of the stored bytes. */
static uint64_t hex8(uint32_t x)
{
    uint64_t v = x;
    v = (v | v << 16) & 0x0000ffff0000ffffull;
    v = (v | v << 8) & 0x00ff00ff00ff00ffull;
    v = (v | v << 4) & BYTES(0x0f);   /* byte i: nibble i, least first */
    v = __builtin_bswap64(v);         /* most significant nibble first */
    uint64_t letters = ((v + BYTES(6)) >> 4) & BYTES(1);   /* nibble >= 10 */
    v += BYTES('0') + letters * ('a' - '0' - 10);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* 8 lower-case hex digits at s as a number, or -1 when one is not. */
static int64_t parse_hex8(const char *s)
{
    uint64_t w = load8(s);
    if (w & BYTES(0x80))
        return -1;
    /* bit 7 of each byte: at least the bound (no byte carries: all < 0x80) */
#define AT_LEAST(b) (w + BYTES(0x80 - (b)))
    uint64_t digit = AT_LEAST('0') & ~AT_LEAST('9' + 1);
    uint64_t letter = AT_LEAST('a') & ~AT_LEAST('f' + 1);
#undef AT_LEAST
    if (((digit | letter) & BYTES(0x80)) != BYTES(0x80))
        return -1;
    uint64_t n = (w & BYTES(0x0f)) + ((w >> 6) & BYTES(1)) * 9;   /* byte i: digit i */
    n = ((n << 4) + (n >> 8)) & 0x00ff00ff00ff00ffull;
    n = ((n << 8) + (n >> 16)) & 0x0000ffff0000ffffull;
    n = ((n << 16) + (n >> 32)) & 0xffffffffull;
    return (int64_t)n;
}

/* Value layout: [0,16) key in hex, ':', [17,25) version in hex, ':', then
   filler to 128 bytes.  Text, so it is a valid strata string as is. */
static void make_value(uint64_t key, uint32_t version, char out[VALUE_LEN])
{
    put_hex(key, out, 16);
    out[16] = ':';
    put_hex(version, out + 17, 8);
    out[25] = ':';
    for (int i = 26; i < VALUE_LEN; i++)
        out[i] = (char)('a' + (key + (uint64_t)i) % 26);
}

/* The version a value holds, after checking it is 128 bytes and belongs to
   key; -1 when it does not. */
static int64_t value_version(const void *bytes, size_t len, uint64_t key)
{
    if (!bytes || len != VALUE_LEN)
        return -1;
    if (text8(bytes) != hex8((uint32_t)(key >> 32)) ||
        text8((const char *)bytes + 8) != hex8((uint32_t)key))
        return -1;
    return parse_hex8((const char *)bytes + 17);
}

static void key_bytes(uint64_t key, unsigned char out[8])
{
    for (int i = 7; i >= 0; i--, key >>= 8)
        out[i] = (unsigned char)(key & 0xff);
}

/* ---- the strata side ---------------------------------------------------- */

typedef struct strata_fixture {
    strata_graph *g;
    strata_token label, key_tok, value_tok;
    strata_index idx;
    uint64_t n;                    /* records: RECORDS, or --nodes */
    strata_value **keys;           /* prebuilt key values, tight loop only */
    strata_id *ids;                /* node of record i, tight loop only */
} strata_fixture;

static strata_fixture sf;

/* The key is stored as an int64, not as the 8 key bytes in a string:
   strata strings are UTF-8 text, and big-endian encodings of 0..9999
   contain NUL bytes and bytes >= 0x80 that are not valid UTF-8.  The
   int64 holds exactly the same information (the big-endian bytes read
   back as a signed 64-bit integer are i) and orders the same way, and it
   is what a strata user would store; both are inline 16-byte values. */
static void strata_fill(uint64_t n)
{
    sf.n = n;
    sf.keys = malloc(n * sizeof *sf.keys);
    sf.ids = malloc(n * sizeof *sf.ids);
    if (!sf.keys || !sf.ids)
        fail("out of memory");
    if (strata_graph_new(&sf.g) != STRATA_OK)
        fail("strata_graph_new failed");
    strata_graph *g = sf.g;
    STRATA_OK_G(g, strata_token_intern(g, STRATA_LABEL, "Record", &sf.label));
    STRATA_OK_G(g, strata_token_intern(g, STRATA_KEY, "key", &sf.key_tok));
    STRATA_OK_G(g, strata_token_intern(g, STRATA_KEY, "value", &sf.value_tok));
    STRATA_OK_G(g, strata_index_create(g, STRATA_INDEX_UNIQUE, false, sf.label, &sf.key_tok, 1,
                                       &sf.idx));
    char buf[VALUE_LEN];
    for (uint64_t i = 0; i < n; i++) {
        strata_id id;
        STRATA_OK_G(g, strata_node_create(g, &sf.label, 1, &id));
        strata_value *k = strata_value_int((int64_t)i);
        make_value(i, 0, buf);
        strata_value *v = strata_value_string(buf, VALUE_LEN);
        if (!k || !v)
            fail("out of memory building values");
        STRATA_OK_G(g, strata_node_set(g, id, sf.key_tok, k));
        STRATA_OK_G(g, strata_node_set(g, id, sf.value_tok, v));
        strata_value_free(&v);
        sf.keys[i] = k;
        sf.ids[i] = id;
    }
}

/* The node of key in view, through the unique index (a point lookup:
   strata_index_get, no iterator); fails on a miss. */
static strata_id strata_find(strata_view *view, const strata_value *keyval, uint64_t key)
{
    strata_id id;
    if (strata_index_get(view, sf.idx, &keyval, 1, &id) != STRATA_OK)
        fail("strata: key %llu not found: %s", (unsigned long long)key,
             strata_view_errmsg(view));
    return id;
}

/* One point lookup as a user writes a read loop: build the key value, look
   it up in the unique index, read the value property into a handle the
   thread reuses (strata_node_read: no allocation), check it.  Returns the
   version. */
static int64_t strata_read(strata_view *view, uint64_t key)
{
    static __thread strata_value *val;
    if (!val && !(val = strata_value_null()))
        fail("out of memory");
    strata_value *k = strata_value_int((int64_t)key);
    if (!k)
        fail("out of memory");
    strata_id id = strata_find(view, k, key);
    strata_value_free(&k);
    const char *s;
    size_t len;
    STRATA_OK_V(view, strata_node_read(view, id, sf.value_tok, val));
    STRATA_OK_V(view, strata_value_get_string(val, &s, &len));
    int64_t version = value_version(s, len, key);
    if (version < 0)
        fail("strata: wrong value for key %llu", (unsigned long long)key);
    return version;
}

/* ---- the SQLite side ---------------------------------------------------- */

static char tmpdir[64] = "", dbpath[96] = "", walpath[112] = "", shmpath[112] = "";

static void remove_tmpdir(void)
{
    if (!tmpdir[0])
        return;
    unlink(walpath);
    unlink(shmpath);
    unlink(dbpath);
    rmdir(tmpdir);
    tmpdir[0] = '\0';
}

static void on_signal(int sig)
{
    /* unlink and rmdir are async-signal-safe */
    remove_tmpdir();
    signal(sig, SIG_DFL);
    raise(sig);
}

static sqlite3 *sql_open(void)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK)
        fail("sqlite3_open_v2(%s): %s", dbpath, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_busy_timeout(db, 5000);
    return db;
}

static void sql_exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        fail("%s: %s", sql, err ? err : "?");
}

static sqlite3_stmt *sql_prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    SQL_OK(db, sqlite3_prepare_v2(db, sql, -1, &st, NULL));
    return st;
}

static void sqlite_load(void)
{
    strcpy(tmpdir, "/tmp/strata-readers-XXXXXX");
    if (!mkdtemp(tmpdir))
        fail("mkdtemp: %s", strerror(errno));
    snprintf(dbpath, sizeof dbpath, "%s/kv.db", tmpdir);
    snprintf(walpath, sizeof walpath, "%s-wal", dbpath);
    snprintf(shmpath, sizeof shmpath, "%s-shm", dbpath);
    atexit(remove_tmpdir);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
    signal(SIGPIPE, on_signal);   /* e.g. piped into head */

    sqlite3 *db = NULL;
    if (sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL))
        fail("create %s: %s", dbpath, sqlite3_errmsg(db));
    sql_exec(db, "PRAGMA journal_mode=WAL");
    sql_exec(db, "PRAGMA synchronous=FULL");
    sql_exec(db, "CREATE TABLE kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID");
    sql_exec(db, "BEGIN");
    sqlite3_stmt *ins = sql_prepare(db, "INSERT INTO kv(k, v) VALUES(?1, ?2)");
    unsigned char k[8];
    char v[VALUE_LEN];
    for (uint64_t i = 0; i < RECORDS; i++) {
        key_bytes(i, k);
        make_value(i, 0, v);
        sqlite3_bind_blob(ins, 1, k, 8, SQLITE_TRANSIENT);
        sqlite3_bind_blob(ins, 2, v, VALUE_LEN, SQLITE_TRANSIENT);
        if (sqlite3_step(ins) != SQLITE_DONE)
            fail("insert: %s", sqlite3_errmsg(db));
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    sql_exec(db, "COMMIT");
    sqlite3_close(db);
}

static const char select_sql[] = "SELECT v FROM kv WHERE k = ?1";

static int64_t sqlite_read(sqlite3 *db, sqlite3_stmt *sel, uint64_t key)
{
    unsigned char k[8];
    key_bytes(key, k);
    sqlite3_bind_blob(sel, 1, k, 8, SQLITE_STATIC);
    if (sqlite3_step(sel) != SQLITE_ROW)
        fail("sqlite: key %llu not found: %s", (unsigned long long)key, sqlite3_errmsg(db));
    int64_t version = value_version(sqlite3_column_blob(sel, 0),
                                    (size_t)sqlite3_column_bytes(sel, 0), key);
    sqlite3_reset(sel);
    if (version < 0)
        fail("sqlite: wrong value for key %llu", (unsigned long long)key);
    return version;
}

/* ---- fanout -------------------------------------------------------------- */

/* NOTHING: threads that return at once, the floor of thread start and
   join under every wave. */
typedef enum engine { STRATA, SQLITE, NOTHING } engine;

typedef struct fanout_arg {
    uint64_t seed;
} fanout_arg;

static void *strata_fanout_reader(void *p)
{
    fanout_arg *a = p;
    strata_view *view;
    STRATA_OK_G(sf.g, strata_snapshot(sf.g, &view));
    for (int i = 0; i < LOOKUPS_PER_READER; i++)
        strata_read(view, xorshift(&a->seed) % RECORDS);
    strata_view_release(&view);
    return NULL;
}

static void *empty_reader(void *p) { return p; }

static void *sqlite_fanout_reader(void *p)
{
    fanout_arg *a = p;
    sqlite3 *db = sql_open();
    sqlite3_stmt *sel = sql_prepare(db, select_sql);
    sql_exec(db, "BEGIN");
    for (int i = 0; i < LOOKUPS_PER_READER; i++)
        sqlite_read(db, sel, xorshift(&a->seed) % RECORDS);
    sql_exec(db, "COMMIT");
    sqlite3_finalize(sel);
    sqlite3_close(db);
    return NULL;
}

/* One wave; returns its time in milliseconds. */
static double fanout_wave(engine e, int readers, int wave)
{
    pthread_t th[8];
    fanout_arg args[8];
    for (int t = 0; t < readers; t++)
        args[t].seed = thread_seed(wave, t);
    double t0 = now_ms();
    for (int t = 0; t < readers; t++)
        if (pthread_create(&th[t], NULL,
                           e == STRATA   ? strata_fanout_reader
                           : e == SQLITE ? sqlite_fanout_reader
                                         : empty_reader,
                           &args[t]))
            fail("pthread_create failed");
    for (int t = 0; t < readers; t++)
        pthread_join(th[t], NULL);
    return now_ms() - t0;
}

/* ---- overlap -------------------------------------------------------------- */

/* The round's rendezvous: readers count themselves pinned, then wait for
   the writer's "written". */
typedef struct rendezvous {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int pinned;
    bool written;
} rendezvous;

static rendezvous rv = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false };

static void rv_pinned_then_wait(void)
{
    pthread_mutex_lock(&rv.lock);
    rv.pinned++;
    pthread_cond_broadcast(&rv.cond);
    while (!rv.written)
        pthread_cond_wait(&rv.cond, &rv.lock);
    pthread_mutex_unlock(&rv.lock);
}

static void rv_wait_pinned(int n)
{
    pthread_mutex_lock(&rv.lock);
    while (rv.pinned < n)
        pthread_cond_wait(&rv.cond, &rv.lock);
    pthread_mutex_unlock(&rv.lock);
}

static void rv_written(void)
{
    pthread_mutex_lock(&rv.lock);
    rv.written = true;
    pthread_cond_broadcast(&rv.cond);
    pthread_mutex_unlock(&rv.lock);
}

typedef struct overlap_arg {
    uint64_t key;
    int64_t old_version;
} overlap_arg;

static void *strata_overlap_reader(void *p)
{
    overlap_arg *a = p;
    strata_view *view;
    STRATA_OK_G(sf.g, strata_snapshot(sf.g, &view));
    if (strata_read(view, a->key) != a->old_version)
        fail("strata: pinned view did not see the old value before the write");
    rv_pinned_then_wait();
    if (strata_read(view, a->key) != a->old_version)
        fail("strata: pinned view saw the writer's value");
    strata_view_release(&view);
    return NULL;
}

static void *sqlite_overlap_reader(void *p)
{
    overlap_arg *a = p;
    sqlite3 *db = sql_open();
    sqlite3_stmt *sel = sql_prepare(db, select_sql);
    sql_exec(db, "BEGIN");   /* the read transaction starts at the first SELECT */
    if (sqlite_read(db, sel, a->key) != a->old_version)
        fail("sqlite: pinned read transaction did not see the old value before the write");
    rv_pinned_then_wait();
    if (sqlite_read(db, sel, a->key) != a->old_version)
        fail("sqlite: pinned read transaction saw the writer's value");
    sql_exec(db, "COMMIT");
    sqlite3_finalize(sel);
    sqlite3_close(db);
    return NULL;
}

/* The SQLite writer's and the fresh reader's connections, opened once. */
typedef struct sqlite_overlap_conns {
    sqlite3 *writer, *fresh;
    sqlite3_stmt *update, *fresh_sel;
} sqlite_overlap_conns;

static void strata_commit_value(uint64_t key, uint32_t version)
{
    strata_view *view;
    STRATA_OK_G(sf.g, strata_snapshot(sf.g, &view));
    strata_value *k = strata_value_int((int64_t)key);
    strata_id id = strata_find(view, k, key);
    strata_value_free(&k);
    strata_view_release(&view);
    char buf[VALUE_LEN];
    make_value(key, version, buf);
    strata_value *v = strata_value_string(buf, VALUE_LEN);
    if (!v)
        fail("out of memory");
    STRATA_OK_G(sf.g, strata_node_set(sf.g, id, sf.value_tok, v));
    strata_value_free(&v);
}

static void sqlite_commit_value(sqlite_overlap_conns *c, uint64_t key, uint32_t version)
{
    unsigned char k[8];
    char buf[VALUE_LEN];
    key_bytes(key, k);
    make_value(key, version, buf);
    sql_exec(c->writer, "BEGIN IMMEDIATE");
    sqlite3_bind_blob(c->update, 1, buf, VALUE_LEN, SQLITE_STATIC);
    sqlite3_bind_blob(c->update, 2, k, 8, SQLITE_STATIC);
    if (sqlite3_step(c->update) != SQLITE_DONE || sqlite3_changes(c->writer) != 1)
        fail("sqlite update: %s", sqlite3_errmsg(c->writer));
    sqlite3_reset(c->update);
    sql_exec(c->writer, "COMMIT");
}

static uint32_t versions[2][RECORDS];   /* per engine, the committed version of each key */

static double overlap_round(engine e, sqlite_overlap_conns *c, uint64_t key)
{
    pthread_t th[OVERLAP_READERS];
    overlap_arg args[OVERLAP_READERS];
    uint32_t old = versions[e][key], new = old + 1;
    for (int t = 0; t < OVERLAP_READERS; t++)
        args[t] = (overlap_arg){ key, old };
    rv.pinned = 0;
    rv.written = false;

    double t0 = now_ms();
    for (int t = 0; t < OVERLAP_READERS; t++)
        if (pthread_create(&th[t], NULL,
                           e == STRATA ? strata_overlap_reader : sqlite_overlap_reader, &args[t]))
            fail("pthread_create failed");
    rv_wait_pinned(OVERLAP_READERS);
    if (e == STRATA) {
        strata_commit_value(key, new);
        strata_view *fresh;
        STRATA_OK_G(sf.g, strata_snapshot(sf.g, &fresh));
        if (strata_read(fresh, key) != new)
            fail("strata: a fresh view did not see the committed value");
        strata_view_release(&fresh);
    } else {
        sqlite_commit_value(c, key, new);
        if (sqlite_read(c->fresh, c->fresh_sel, key) != new)
            fail("sqlite: a fresh read did not see the committed value");
    }
    rv_written();
    for (int t = 0; t < OVERLAP_READERS; t++)
        pthread_join(th[t], NULL);
    double ms = now_ms() - t0;

    versions[e][key] = new;
    return ms;
}

/* ---- tight loop -------------------------------------------------------------- */

typedef enum loop_kind {
    LOOP_FULL,          /* key value built per lookup, index, node_read, check */
    LOOP_PREBUILT_KEY,  /* the same with the key values built beforehand */
    LOOP_INDEX_ONLY,    /* prebuilt key: index lookup + iterator only */
    LOOP_GET_ONLY,      /* node id known: node_get + check only */
    LOOP_CYPHER,        /* MATCH ... {key: $key} RETURN r.value on the view */
    LOOP_SQLITE,        /* a prepared SELECT in one read transaction */
    LOOP_DIRECT,        /* index_get_int + node_peek (no handle), check */
    LOOP_BATCH,         /* the same BATCH keys at a time: index_get_ints + nodes_peek */
    NLOOPS
} loop_kind;

/* Keys per call of the batched loop. */
#define BATCH 64

static const char *const loop_names[] = {
    "strata: key value + index_get + node_read",
    "strata: same, key values prebuilt",
    "strata: index_get only",
    "strata: node_read + check only (id known)",
    "strata: Cypher on the view, $key (plan cached)",
    "SQLite: prepared SELECT, one read txn",
    "strata: index_get_int + node_peek + check",
    "strata: the same, 64 keys per call (batched)",
};
static const char *const loop_ids[] = { "strata_full", "strata_prebuilt_key",
                                        "strata_index_only", "strata_get_only", "strata_cypher",
                                        "sqlite", "strata_direct", "strata_batch" };

static const char cypher_sql[] = "MATCH (r:Record {key: $key}) RETURN r.value";

/* One lookup through Cypher on the view: the parameter map built, the
   statement run (its plan from the graph's cache), the value checked. */
static int64_t cypher_read(strata_view *view, uint64_t key)
{
    static const char *const names[] = { "key" };
    const strata_value *vals[] = { sf.keys[key] };
    strata_value *params = strata_value_map(names, vals, 1);
    strata_result *r = NULL;
    if (!params || strata_view_query(view, cypher_sql, params, &r) != STRATA_OK)
        fail("strata: Cypher lookup of key %llu failed", (unsigned long long)key);
    const strata_value *const *row;
    const char *s;
    size_t len;
    if (!strata_result_next(r, &row) || strata_value_get_string(row[0], &s, &len) != STRATA_OK)
        fail("strata: Cypher lookup of key %llu found nothing", (unsigned long long)key);
    int64_t version = value_version(s, len, key);
    if (version < 0)
        fail("strata: wrong value for key %llu", (unsigned long long)key);
    strata_result_free(&r);
    strata_value_free(&params);
    return version;
}

/* The check of a value read for key, as strata_read's. */
static int64_t checked(strata_view *view, const strata_value *val, uint64_t key)
{
    const char *s;
    size_t len;
    STRATA_OK_V(view, strata_value_get_string(val, &s, &len));
    int64_t version = value_version(s, len, key);
    if (version < 0)
        fail("strata: wrong value for key %llu", (unsigned long long)key);
    return version;
}

/* One point lookup without value handles: the key passed as an integer,
   the property read borrowed (strata_node_peek: no retain, no copy). */
static int64_t direct_read(strata_view *view, uint64_t key)
{
    strata_id id;
    if (strata_index_get_int(view, sf.idx, (int64_t)key, &id) != STRATA_OK)
        fail("strata: key %llu not found: %s", (unsigned long long)key,
             strata_view_errmsg(view));
    const strata_value *val;
    STRATA_OK_V(view, strata_node_peek(view, id, sf.value_tok, &val));
    return checked(view, val, key);
}

/* BATCH lookups in two calls (every key of the batch through the index,
   then every node's property), each value checked; the keys come from
   the caller's generator as in the other loops.  Returns the versions'
   sum. */
static uint64_t batch_read(strata_view *view, const uint64_t *keys, size_t n)
{
    int64_t k[BATCH];
    strata_id ids[BATCH];
    const strata_value *vals[BATCH];
    size_t found;
    for (size_t i = 0; i < n; i++)
        k[i] = (int64_t)keys[i];
    STRATA_OK_V(view, strata_index_get_ints(view, sf.idx, k, n, ids, &found));
    if (found != n)
        fail("strata: %zu of %zu keys not found", n - found, n);
    STRATA_OK_V(view, strata_nodes_peek(view, ids, n, sf.value_tok, vals));
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (uint64_t)checked(view, vals[i], keys[i]);
    return sum;
}

/* The calling thread's CPU time: what the loop cost this thread, whatever
   else the machine runs (the wall clock counts the time it waits for a
   core on a loaded machine). */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A loop's rate over the wall clock and over the thread's CPU time. */
typedef struct rate {
    double wall, cpu;   /* lookups per second */
} rate;

/* Returns the lookups per second of n lookups. */
static rate tight_loop(loop_kind kind, long n)
{
    uint64_t seed = 0x2545f4914f6cdd1dull;
    uint64_t sink = 0;
    double t0, t1, c0, c1;
    if (kind == LOOP_SQLITE) {
        sqlite3 *db = sql_open();
        sqlite3_stmt *sel = sql_prepare(db, select_sql);
        sql_exec(db, "BEGIN");
        sqlite_read(db, sel, 0);   /* starts the read transaction */
        c0 = cpu_ms();
        t0 = now_ms();
        for (long i = 0; i < n; i++)
            sink += (uint64_t)sqlite_read(db, sel, xorshift(&seed) % RECORDS);
        t1 = now_ms();
        c1 = cpu_ms();
        sql_exec(db, "COMMIT");
        sqlite3_finalize(sel);
        sqlite3_close(db);
    } else {
        strata_view *view;
        STRATA_OK_G(sf.g, strata_snapshot(sf.g, &view));
        c0 = cpu_ms();
        t0 = now_ms();
        for (long i = 0; i < n && kind == LOOP_BATCH; i += BATCH) {
            uint64_t keys[BATCH];
            size_t m = n - i < BATCH ? (size_t)(n - i) : BATCH;
            for (size_t j = 0; j < m; j++)
                keys[j] = xorshift(&seed) % sf.n;
            sink += batch_read(view, keys, m);
        }
        for (long i = 0; i < n && kind != LOOP_BATCH; i++) {
            uint64_t key = xorshift(&seed) % sf.n;
            if (kind == LOOP_DIRECT) {
                sink += (uint64_t)direct_read(view, key);
            } else if (kind == LOOP_FULL) {
                sink += (uint64_t)strata_read(view, key);
            } else if (kind == LOOP_CYPHER) {
                sink += (uint64_t)cypher_read(view, key);
            } else if (kind == LOOP_INDEX_ONLY) {
                sink += strata_find(view, sf.keys[key], key);
            } else {
                strata_id id = kind == LOOP_GET_ONLY ? sf.ids[key]
                                                     : strata_find(view, sf.keys[key], key);
                static __thread strata_value *val;
                if (!val && !(val = strata_value_null()))
                    fail("out of memory");
                const char *s;
                size_t len;
                STRATA_OK_V(view, strata_node_read(view, id, sf.value_tok, val));
                STRATA_OK_V(view, strata_value_get_string(val, &s, &len));
                int64_t version = value_version(s, len, key);
                if (version < 0)
                    fail("strata: wrong value for key %llu", (unsigned long long)key);
                sink += (uint64_t)version;
            }
        }
        t1 = now_ms();
        c1 = cpu_ms();
        strata_view_release(&view);
    }
    if (sink == UINT64_MAX)   /* keeps the loop's results alive */
        puts("");
    return (rate){ n / ((t1 - t0) / 1e3), n / ((c1 - c0) / 1e3) };
}

/* The same loop on T threads at once, each with its own view (SQLite: its
   own connection); returns the aggregate lookups per second over the wall
   time from starting the first thread to joining the last. */
typedef struct loop_arg {
    loop_kind kind;
    long n;
} loop_arg;

static void *loop_thread(void *p)
{
    loop_arg *a = p;
    tight_loop(a->kind, a->n);
    return NULL;
}

static double parallel_loop(loop_kind kind, long n, int threads)
{
    pthread_t th[8];
    loop_arg a = { kind, n };
    double t0 = now_ms();
    for (int t = 0; t < threads; t++)
        if (pthread_create(&th[t], NULL, loop_thread, &a))
            fail("pthread_create failed");
    for (int t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
    return (double)n * threads / ((now_ms() - t0) / 1e3);
}

/* ---- main ------------------------------------------------------------------ */

static void strata_free(void)
{
    for (uint64_t i = 0; i < sf.n; i++)
        strata_value_free(&sf.keys[i]);
    free(sf.keys);
    free(sf.ids);
    strata_graph_free(&sf.g);
}

static void print_loop(bool json, const char *json_case, uint64_t records, loop_kind k,
                       long loop_n, rate r)
{
    if (json)
        printf("{\"bench\":\"W2\",\"case\":\"%s\",\"records\":%llu,\"variant\":\"%s\","
               "\"lookups\":%ld,\"lookups_per_s\":%.0f,\"ns_per_lookup\":%.1f,"
               "\"cpu_lookups_per_s\":%.0f,\"cpu_ns_per_lookup\":%.1f}\n",
               json_case, (unsigned long long)records, loop_ids[k], loop_n, r.wall,
               1e9 / r.wall, r.cpu, 1e9 / r.cpu);
    else
        printf("  %-46s %7.2f M/s %8.1f ns | CPU %7.2f M/s %8.1f ns\n", loop_names[k],
               r.wall / 1e6, 1e9 / r.wall, r.cpu / 1e6, 1e9 / r.cpu);
}

/* --lookups-only: the strata rows of the tight loop alone, on n records
   (no SQLite, no waves), or the one variant named by only_variant: the
   per-core lookup rate on a bigger graph, and a short run to profile
   (callgrind: instructions per lookup). */
static int lookups_only(uint64_t n, long loop_n, const char *only_variant, bool json)
{
    static const loop_kind kinds[] = { LOOP_FULL,     LOOP_PREBUILT_KEY, LOOP_INDEX_ONLY,
                                       LOOP_GET_ONLY, LOOP_DIRECT,       LOOP_BATCH };
    size_t picked = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        picked += !only_variant || !strcmp(only_variant, loop_ids[kinds[i]]);
    if (!picked) {
        fprintf(stderr, "readers: no variant %s\n", only_variant);
        return 2;
    }
    strata_fill(n);
    if (!json)
        printf("lookups inside one view on one thread (%llu records, %ld random keys; "
               "wall clock | thread CPU time):\n", (unsigned long long)n, loop_n);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        loop_kind k = kinds[i];
        if (only_variant && strcmp(only_variant, loop_ids[k]))
            continue;
        tight_loop(k, loop_n / 10 + 1);   /* warm-up */
        print_loop(json, "tight_loop_only", n, k, loop_n, tight_loop(k, loop_n));
    }
    strata_free();
    return 0;
}

static void print_row(bool json, const char *name, const char *id, int readers, int lookups,
                      int rounds, stats s, stats q, double seed_s, double seed_q)
{
    double s_rate = lookups / (s.median / 1e3), q_rate = lookups / (q.median / 1e3);
    if (json) {
        printf("{\"bench\":\"W2\",\"case\":\"%s\",\"readers\":%d,\"lookups\":%d,\"rounds\":%d,"
               "\"strata_median_ms\":%.4f,\"strata_mean_ms\":%.4f,\"strata_lookups_per_s\":%.0f,"
               "\"sqlite_median_ms\":%.4f,\"sqlite_mean_ms\":%.4f,\"sqlite_lookups_per_s\":%.0f,"
               "\"speedup_median\":%.2f,\"speedup_mean\":%.2f,"
               "\"seed_tosumu_ms\":%.3f,\"seed_sqlite_ms\":%.3f}\n",
               id, readers, lookups, rounds, s.median, s.mean, s_rate, q.median, q.mean, q_rate,
               q.median / s.median, q.mean / s.mean, seed_s, seed_q);
    } else {
        printf("%-26s %8.3f %8.3f %9.0f | %8.3f %8.3f %9.0f | %7.1fx %7.1fx | %7.3f %7.3f\n",
               name, s.median, s.mean, s_rate / 1e3, q.median, q.mean, q_rate / 1e3,
               q.median / s.median, q.mean / s.mean, seed_s, seed_q);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int waves = 100;
    long loop_n = 2000000;
    bool json = false, only = false;
    const char *variant = NULL;
    uint64_t records = RECORDS;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--waves") && i + 1 < argc)
            waves = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--lookups-only"))
            only = true;
        else if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            records = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--variant") && i + 1 < argc)
            variant = argv[++i];
        else if (!strcmp(argv[i], "--loop") && i + 1 < argc)
            loop_n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            waves = 15, loop_n = 200000;
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else {
            fprintf(stderr, "usage: readers [--waves W] [--quick] [--json]\n"
                            "       readers --lookups-only [--nodes N] [--loop L] "
                            "[--variant ID] [--json]\n");
            return 2;
        }
    }
    if (only)
        return records && loop_n > 0 ? lookups_only(records, loop_n, variant, json) : 2;
    if (records != RECORDS || variant) {
        fprintf(stderr, "readers: --nodes and --variant go with --lookups-only\n");
        return 2;
    }
    if (waves < 2) {
        fprintf(stderr, "readers: need at least 2 waves\n");
        return 2;
    }

    double t_load = now_ms();
    strata_fill(RECORDS);
    double t_strata = now_ms() - t_load;
    sqlite_load();
    double t_sqlite = now_ms() - t_load - t_strata;
    if (!json) {
        printf("W2 reader fanout and overlap: %d records (8-byte keys, %d-byte values), "
               "%d waves/rounds per case, engines alternating\n", RECORDS, VALUE_LEN, waves);
        printf("loaded: strata %.0f ms, SQLite %.0f ms (%s, WAL, synchronous=FULL); "
               "libsqlite3 %s\n", t_strata, t_sqlite, dbpath, sqlite3_libversion());
        printf("times per wave in ms; k/s = thousand lookups per second at the median; "
               "speed-up = SQLite time / strata time\n\n");
        printf("%-26s %-28s | %-28s | %-16s | %s\n", "", "strata", "SQLite WAL", "speed-up",
               "seed 001 (ms)");
        printf("%-26s %8s %8s %9s | %8s %8s %9s | %8s %8s | %7s %7s\n", "workload", "median",
               "mean", "k/s", "median", "mean", "k/s", "median", "mean", "Tosumu", "SQLite");
    }

    double *ts = malloc(sizeof(double) * (size_t)waves);
    double *tq = malloc(sizeof(double) * (size_t)waves);
    double *tn = malloc(sizeof(double) * (size_t)waves);
    double floors[NFANOUTS];
    if (!ts || !tq || !tn)
        fail("out of memory");

    for (int f = 0; f < NFANOUTS; f++) {
        int r = fanouts[f];
        for (int w = 0; w < 2; w++) {   /* warm-up, untimed */
            fanout_wave(STRATA, r, -1 - w);
            fanout_wave(SQLITE, r, -1 - w);
        }
        for (int w = 0; w < waves; w++) {
            ts[w] = fanout_wave(STRATA, r, w);
            tq[w] = fanout_wave(SQLITE, r, w);
            tn[w] = fanout_wave(NOTHING, r, w);
        }
        floors[f] = summarise(tn, waves).median;
        if (json)
            printf("{\"bench\":\"W2\",\"case\":\"thread_floor_%d\",\"readers\":%d,"
                   "\"median_ms\":%.4f}\n", r, r, floors[f]);
        char name[64], id[32];
        snprintf(name, sizeof name, "%d reader%s, %d lookups", r, r > 1 ? "s" : "",
                 r * LOOKUPS_PER_READER);
        snprintf(id, sizeof id, "fanout_%d", r);
        print_row(json, name, id, r, r * LOOKUPS_PER_READER, waves, summarise(ts, waves),
                  summarise(tq, waves), seed_tosumu_ms[f], seed_sqlite_ms[f]);
    }

    if (!json)
        printf("%-26s %8.3f %8.3f %8.3f   (threads that return at once: start + join)\n",
               "thread floor, 1/4/8", floors[0], floors[1], floors[2]);

    sqlite_overlap_conns c;
    c.writer = sql_open();
    sql_exec(c.writer, "PRAGMA synchronous=FULL");
    c.update = sql_prepare(c.writer, "UPDATE kv SET v = ?1 WHERE k = ?2");
    c.fresh = sql_open();
    c.fresh_sel = sql_prepare(c.fresh, select_sql);
    uint64_t kseed = 0x51ed2701a3c4e5f7ull;
    for (int w = -2; w < waves; w++) {   /* two warm-up rounds */
        uint64_t key = xorshift(&kseed) % RECORDS;
        double s = overlap_round(STRATA, &c, key), q = overlap_round(SQLITE, &c, key);
        if (w >= 0)
            ts[w] = s, tq[w] = q;
    }
    /* Lookups counted as in seed 001's elements: 4 readers x 2 reads, one
       write; the k/s column is those 9 operations per round. */
    print_row(json, "4 pinned readers + 1 writer", "overlap", OVERLAP_READERS,
              2 * OVERLAP_READERS + 1, waves, summarise(ts, waves), summarise(tq, waves),
              seed_overlap_tosumu_ms, seed_overlap_sqlite_ms);
    sqlite3_finalize(c.update);
    sqlite3_finalize(c.fresh_sel);
    sqlite3_close(c.writer);
    sqlite3_close(c.fresh);

    strata_view *probe;
    strata_index_info info;
    STRATA_OK_G(sf.g, strata_snapshot(sf.g, &probe));
    STRATA_OK_V(probe, strata_index_info_get(probe, sf.idx, &info));
    strata_view_release(&probe);
    if (!json)
        printf("\nlookups inside one view on one thread (%ld random keys; unique index depth %u; "
               "target >= 10 M/s per core):\n", loop_n, info.depth);
    double rates[NLOOPS];
    for (int k = 0; k < NLOOPS; k++) {
        tight_loop((loop_kind)k, loop_n / 10);   /* warm-up */
        rate r = tight_loop((loop_kind)k, loop_n);
        rates[k] = r.wall;
        print_loop(json, "tight_loop", RECORDS, (loop_kind)k, loop_n, r);
    }
    if (!json)
        printf("  strata (full) vs SQLite, one thread: %.1fx; strata Cypher vs SQLite: %.1fx\n",
               rates[LOOP_FULL] / rates[LOOP_SQLITE], rates[LOOP_CYPHER] / rates[LOOP_SQLITE]);

    /* Does the rate grow with threads up to the core count? */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cores < 2 ? 2 : cores > 8 ? 8 : (int)cores;
    static const loop_kind par_kinds[] = { LOOP_FULL, LOOP_CYPHER, LOOP_SQLITE };
    for (size_t i = 0; i < sizeof par_kinds / sizeof par_kinds[0]; i++) {
        loop_kind k = par_kinds[i];
        double agg = parallel_loop(k, loop_n / 2, threads);
        if (json)
            printf("{\"bench\":\"W2\",\"case\":\"parallel_loop\",\"variant\":\"%s\","
                   "\"threads\":%d,\"lookups_per_thread\":%ld,\"lookups_per_s\":%.0f,"
                   "\"scaling_vs_one_thread\":%.2f}\n", loop_ids[k], threads, loop_n / 2, agg,
                   agg / rates[k]);
        else
            printf("  %d threads at once, %-32s %7.2f M/s  (%.2fx one thread)\n", threads,
                   k == LOOP_FULL ? "strata full lookup:" : k == LOOP_CYPHER ? "strata Cypher:"
                                                                            : "SQLite:",
                   agg / 1e6, agg / rates[k]);
    }

    strata_free();
    free(ts);
    free(tq);
    free(tn);
    return 0;
}
