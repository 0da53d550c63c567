/*
 * wave — W3 of docs/BENCHMARKS.md: a wave of 16 concurrent readers under a
 * writer that never stops, on seed 000's workload: strata against SQLite
 * WAL with one connection behind a mutex and with a pool of 4 connections.
 *
 *   wave [--waves W] [--quick] [--json] [--plain-writes]
 *
 * Data: 2,000 nodes and 6,000 relationships between random nodes.  A node
 * has seed 000's 12 fields, shaped like a small knowledge-graph node:
 *
 *   id          text, "node-0000123" (unique)    created_at  int, epoch s
 *   kind        text, one of 6                   updated_at  int, epoch s
 *   name        text, 2-3 words                  tags        2-5 short strings
 *   title       text, 5-9 words                  score       float
 *   body        text, 40-90 words (~300-600 B)   status      text, one of 3
 *   source      text, a URL-ish origin           metadata    JSON text, ~90 B
 *
 *   - strata: nodes labelled Node with those 12 properties (tags a list of
 *     strings), a UNIQUE index on id, relationships of 4 types.
 *   - SQLite: one file database per backend in a fresh directory under
 *     /tmp (removed at exit), journal_mode=WAL, and on every connection
 *     busy_timeout=5000 and synchronous=NORMAL, as seed 000 sets them;
 *     nodes(12 columns, id TEXT PRIMARY KEY, tags as JSON text),
 *     edges(src, dst, kind) with indices on src and dst, and seed 000's
 *     FTS5 trigram index over (name, body), external content on nodes,
 *     kept in sync by AFTER INSERT/UPDATE/DELETE triggers.
 *
 * The writer: a background thread upserts nodes in a tight loop for the
 * whole run of a backend, counting successful writes.  An upsert picks a
 * random id and changes body, updated_at, score and status:
 *   - strata: find the node by id through the unique index (a view taken
 *     and released), then one statement of 4 strata_node_set calls;
 *   - SQLite: INSERT ... ON CONFLICT(id) DO UPDATE SET those 4 columns, in
 *     its own (autocommit) transaction; the FTS trigger re-indexes the row.
 *
 * The readers: a pool of 16 worker threads, started once before anything
 * is timed and shared by every backend (seed 000 ran tokio tasks on a
 * started runtime).  A wave posts 16 tasks and ends when the 16th is done
 * (measured on the posting thread, CLOCK_MONOTONIC).  A task reads one
 * random node whole and checks it:
 *   - strata: takes a view, looks the id up in the unique index, reads all
 *     12 properties, releases the view;
 *   - SQLite single-mutex: on the one shared connection, behind a FIFO
 *     lock the writer also takes per upsert (seed 000's AsyncGraph is an
 *     Arc<Mutex<Connection>> under tokio, and tokio's Mutex is FIFO-fair;
 *     a plain pthread mutex would let the looping writer barge);
 *   - SQLite wal-pool-4: takes one of 4 reader connections (waiting when
 *     all are busy), SELECTs the row by id, gives it back; the writer has a
 *     connection of its own.
 *
 * Reported per backend: wave median and mean, reads/s, the writer's
 * successful upserts per wave (the validity check: a starved writer makes
 * the comparison meaningless) and the share of waves during which one
 * completed, and the writer's throughput alone (before the waves, no
 * readers) and while waves run back to back (over the whole wave phase,
 * which lasts at least as long).  A first row times waves of empty tasks:
 * the pool's own floor.  For strata also: how long readers waited to take
 * a view, and whether the graph folded back to its size once the writer
 * stopped (a warning on stderr if not).  Backends run one after the other,
 * each with its own writer; on a shared 2-core machine compare the ratios,
 * not the absolute times.  --plain-writes makes strata's upsert 4 plain
 * sets instead of a statement.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <strata.h>

#define BENCH_NAME "wave"
#include "bench_util.h"

#define NODES 2000
#define RELS 6000
#define FIELDS 12
#define WAVE_READERS 16
#define POOL_THREADS 16
#define SQLITE_POOL 4

/* Seed 000's criterion medians, Apple Silicon, tokio: reference only. */
static const double seed_mutex_ms = 687, seed_pool_ms = 381;

/* ---- helpers ------------------------------------------------------------ */

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static double mean(const double *t, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += t[i];
    return s / n;
}

/* ---- the nodes ------------------------------------------------------------ */

static const char *const field_names[FIELDS] = {
    "id", "kind", "name", "title", "body", "created_at",
    "updated_at", "tags", "score", "status", "source", "metadata",
};
enum { F_ID, F_KIND, F_NAME, F_TITLE, F_BODY, F_CREATED, F_UPDATED, F_TAGS, F_SCORE, F_STATUS,
       F_SOURCE, F_META };

static const char *const words[] = {
    "graph", "node", "edge", "index", "query", "snapshot", "writer", "reader", "memory",
    "version", "level", "stack", "property", "label", "relation", "concept", "theory",
    "model", "system", "network", "signal", "pattern", "history", "origin", "method",
    "result", "measure", "sample", "protein", "river", "city", "language", "market",
    "engine", "storage", "layer", "journal", "undo", "commit", "branch", "share", "fold",
    "copy", "write", "path", "radix", "chunk", "arena", "token", "string", "value", "list",
    "alpha", "beta", "gamma", "delta", "north", "south", "early", "late", "small", "large",
    "open", "closed",
};
#define NWORDS (sizeof words / sizeof words[0])
static const char *const kinds[] = { "concept", "person", "document", "event", "place", "note" };
static const char *const statuses[] = { "active", "draft", "archived" };
static const char *const reltypes[] = { "RELATES_TO", "MENTIONS", "PART_OF", "CITES" };

typedef struct node_data {
    char id[16];
    const char *kind, *status;
    char name[48], title[96], body[1024], source[64], metadata[160];
    int64_t created_at, updated_at;
    int ntags;
    const char *tags[5];
    char tags_json[96];
    double score;
} node_data;

static node_data nodes[NODES];
static uint32_t rel_ends[RELS][3];   /* start, end, type */

/* Appends n random words separated by spaces; returns the length. */
static size_t put_words(char *out, size_t cap, int n, uint64_t *rng)
{
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        const char *w = words[xorshift(rng) % NWORDS];
        int k = snprintf(out + len, cap - len, "%s%s", i ? " " : "", w);
        if (k < 0 || (size_t)k >= cap - len)
            break;
        len += (size_t)k;
    }
    return len;
}

static void make_id(int i, char out[16]) { snprintf(out, 16, "node-%07d", i); }

/* A body the writer can put: one of a fixed set, so text generation is not
   part of the timed writes (same on every backend). */
#define NBODIES 64
static char bodies[NBODIES][1024];

static void make_data(void)
{
    uint64_t rng = 0x853c49e6748fea9bull;
    for (int i = 0; i < NODES; i++) {
        node_data *d = &nodes[i];
        make_id(i, d->id);
        d->kind = kinds[xorshift(&rng) % 6];
        put_words(d->name, sizeof d->name, 2 + (int)(xorshift(&rng) % 2), &rng);
        put_words(d->title, sizeof d->title, 5 + (int)(xorshift(&rng) % 5), &rng);
        put_words(d->body, sizeof d->body, 40 + (int)(xorshift(&rng) % 51), &rng);
        d->created_at = 1700000000 + (int64_t)(xorshift(&rng) % 30000000);
        d->updated_at = d->created_at + (int64_t)(xorshift(&rng) % 1000000);
        d->ntags = 2 + (int)(xorshift(&rng) % 4);
        size_t tl = (size_t)snprintf(d->tags_json, sizeof d->tags_json, "[");
        for (int t = 0; t < d->ntags; t++) {
            d->tags[t] = words[xorshift(&rng) % NWORDS];
            tl += (size_t)snprintf(d->tags_json + tl, sizeof d->tags_json - tl, "%s\"%s\"",
                                   t ? "," : "", d->tags[t]);
        }
        snprintf(d->tags_json + tl, sizeof d->tags_json - tl, "]");
        d->score = (double)(xorshift(&rng) % 10000) / 10000.0;
        d->status = statuses[xorshift(&rng) % 3];
        snprintf(d->source, sizeof d->source, "https://wiki.example.org/%s/%d", d->kind, i);
        snprintf(d->metadata, sizeof d->metadata,
                 "{\"lang\":\"en\",\"confidence\":%.2f,\"origin\":\"import\",\"revision\":%d,"
                 "\"checked\":%s}", d->score, (int)(xorshift(&rng) % 50),
                 xorshift(&rng) & 1 ? "true" : "false");
    }
    for (int r = 0; r < RELS; r++) {
        rel_ends[r][0] = (uint32_t)(xorshift(&rng) % NODES);
        rel_ends[r][1] = (uint32_t)(xorshift(&rng) % NODES);
        rel_ends[r][2] = (uint32_t)(xorshift(&rng) % 4);
    }
    for (int b = 0; b < NBODIES; b++)
        put_words(bodies[b], sizeof bodies[b], 40 + (int)(xorshift(&rng) % 51), &rng);
}

/* What one upsert changes, drawn by the writer from its own generator. */
typedef struct upsert {
    int node;
    const char *body, *status;
    int64_t updated_at;
    double score;
} upsert;

static upsert next_upsert(uint64_t *rng, int64_t serial)
{
    upsert u;
    u.node = (int)(xorshift(rng) % NODES);
    u.body = bodies[xorshift(rng) % NBODIES];
    u.status = statuses[xorshift(rng) % 3];
    u.updated_at = 1800000000 + serial;
    u.score = (double)(xorshift(rng) % 10000) / 10000.0;
    return u;
}

/* ---- backends ------------------------------------------------------------ */

/* B_FLOOR: empty tasks and no writer, the pool's own cost (waking 16
   threads and hearing from the last), the floor under every other row. */
typedef enum backend { B_FLOOR, B_STRATA, B_SQLITE_MUTEX, B_SQLITE_POOL, NBACKENDS } backend;
static const char *const backend_names[] = { "pool floor (no-op)", "strata",
                                             "SQLite single-mutex", "SQLite wal-pool-4" };
static const char *const backend_ids[] = { "pool_floor", "strata", "sqlite_single_mutex",
                                           "sqlite_wal_pool_4" };

/* ---- strata ----------------------------------------------------------------- */

static struct {
    strata_graph *g;
    strata_token label, keys[FIELDS];
    strata_index idx;
} sg;

static strata_value *str_value(const char *s)
{
    strata_value *v = strata_value_string(s, strlen(s));
    if (!v)
        fail("out of memory");
    return v;
}

static void strata_set(strata_id id, int field, strata_value *v)
{
    if (!v)
        fail("out of memory");
    STRATA_OK_G(sg.g, strata_node_set(sg.g, id, sg.keys[field], v));
    strata_value_free(&v);
}

static void strata_fill(void)
{
    if (strata_graph_new(&sg.g) != STRATA_OK)
        fail("strata_graph_new failed");
    strata_graph *g = sg.g;
    STRATA_OK_G(g, strata_token_intern(g, STRATA_LABEL, "Node", &sg.label));
    for (int f = 0; f < FIELDS; f++)
        STRATA_OK_G(g, strata_token_intern(g, STRATA_KEY, field_names[f], &sg.keys[f]));
    strata_token types[4];
    for (int t = 0; t < 4; t++)
        STRATA_OK_G(g, strata_token_intern(g, STRATA_RELTYPE, reltypes[t], &types[t]));
    strata_id ids[NODES];
    for (int i = 0; i < NODES; i++) {
        const node_data *d = &nodes[i];
        STRATA_OK_G(g, strata_node_create(g, &sg.label, 1, &ids[i]));
        strata_set(ids[i], F_ID, str_value(d->id));
        strata_set(ids[i], F_KIND, str_value(d->kind));
        strata_set(ids[i], F_NAME, str_value(d->name));
        strata_set(ids[i], F_TITLE, str_value(d->title));
        strata_set(ids[i], F_BODY, str_value(d->body));
        strata_set(ids[i], F_CREATED, strata_value_int(d->created_at));
        strata_set(ids[i], F_UPDATED, strata_value_int(d->updated_at));
        strata_value *tags[5];
        for (int t = 0; t < d->ntags; t++)
            tags[t] = str_value(d->tags[t]);
        strata_set(ids[i], F_TAGS,
                   strata_value_list((const strata_value *const *)tags, (size_t)d->ntags));
        for (int t = 0; t < d->ntags; t++)
            strata_value_free(&tags[t]);
        strata_set(ids[i], F_SCORE, strata_value_float(d->score));
        strata_set(ids[i], F_STATUS, str_value(d->status));
        strata_set(ids[i], F_SOURCE, str_value(d->source));
        strata_set(ids[i], F_META, str_value(d->metadata));
    }
    for (int r = 0; r < RELS; r++) {
        strata_id rel;
        STRATA_OK_G(g, strata_rel_create(g, ids[rel_ends[r][0]], ids[rel_ends[r][1]],
                                         types[rel_ends[r][2]], &rel));
    }
    STRATA_OK_G(g, strata_index_create(g, STRATA_INDEX_UNIQUE, false, sg.label, &sg.keys[F_ID],
                                       1, &sg.idx));
}

/* The node with this id in view, or fails. */
static strata_id strata_find(strata_view *view, const char *id)
{
    strata_value *k = str_value(id);
    strata_node_iter *it;
    strata_id node;
    STRATA_OK_V(view, strata_index_lookup(view, sg.idx, (const strata_value *const *)&k, 1,
                                          &it));
    if (!strata_node_iter_next(it, &node))
        fail("strata: %s not found", id);
    strata_node_iter_free(&it);
    strata_value_free(&k);
    return node;
}

/* How long readers wait to take a view (strata_snapshot takes the graph's
   lock, which the writer holds for each write call): sum and worst, in
   nanoseconds, over the strata waves. */
static atomic_uint_fast64_t snap_ns_sum, snap_ns_max, snap_count;

static void note_snapshot_wait(uint64_t ns)
{
    atomic_fetch_add_explicit(&snap_ns_sum, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&snap_count, 1, memory_order_relaxed);
    uint64_t m = atomic_load_explicit(&snap_ns_max, memory_order_relaxed);
    while (ns > m && !atomic_compare_exchange_weak(&snap_ns_max, &m, ns))
        ;
}

static void strata_read_node(int i)
{
    strata_view *view;
    double t0 = now_ms();
    STRATA_OK_G(sg.g, strata_snapshot(sg.g, &view));
    note_snapshot_wait((uint64_t)((now_ms() - t0) * 1e6));
    strata_id node = strata_find(view, nodes[i].id);
    for (int f = 0; f < FIELDS; f++) {
        strata_value *v;
        STRATA_OK_V(view, strata_node_get(view, node, sg.keys[f], &v));
        if (strata_value_type(v) == STRATA_NULL)
            fail("strata: %s has no %s", nodes[i].id, field_names[f]);
        if (f == F_ID) {
            const char *s;
            size_t len;
            STRATA_OK_V(view, strata_value_get_string(v, &s, &len));
            if (strcmp(s, nodes[i].id) != 0)
                fail("strata: looked up %s, read %s", nodes[i].id, s);
        }
        strata_value_free(&v);
    }
    strata_view_release(&view);
}

/* With --plain-writes the 4 sets are 4 atomic calls, no statement: a
   reader may then see an upsert half done, which SQLite never shows. */
static bool plain_writes = false;

static bool strata_upsert(const upsert *u)
{
    strata_view *view;
    STRATA_OK_G(sg.g, strata_snapshot(sg.g, &view));
    strata_id node = strata_find(view, nodes[u->node].id);
    strata_view_release(&view);
    if (!plain_writes)
        STRATA_OK_G(sg.g, strata_statement_begin(sg.g));
    strata_set(node, F_BODY, str_value(u->body));
    strata_set(node, F_UPDATED, strata_value_int(u->updated_at));
    strata_set(node, F_SCORE, strata_value_float(u->score));
    strata_set(node, F_STATUS, str_value(u->status));
    if (!plain_writes)
        STRATA_OK_G(sg.g, strata_statement_end(sg.g, true));
    return true;
}

/* ---- SQLite --------------------------------------------------------------- */

static char tmpdir[64] = "";
static char dbfiles[2][3][128];   /* per SQLite backend: db, -wal, -shm */

static void remove_tmpdir(void)
{
    if (!tmpdir[0])
        return;
    for (int b = 0; b < 2; b++)
        for (int f = 2; f >= 0; f--)
            if (dbfiles[b][f][0])
                unlink(dbfiles[b][f]);
    rmdir(tmpdir);
    tmpdir[0] = '\0';
}

static void on_signal(int sig)
{
    remove_tmpdir();   /* unlink and rmdir are async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
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
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail("prepare %s: %s", sql, sqlite3_errmsg(db));
    return st;
}

/* Every connection gets seed 000's per-connection pragmas. */
static sqlite3 *sql_open(const char *path, bool create)
{
    sqlite3 *db = NULL;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK)
        fail("open %s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
    sql_exec(db, "PRAGMA busy_timeout=5000");
    sql_exec(db, "PRAGMA synchronous=NORMAL");
    return db;
}

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE nodes(id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL,"
    " title TEXT, body TEXT, created_at INTEGER, updated_at INTEGER, tags TEXT, score REAL,"
    " status TEXT, source TEXT, metadata TEXT);"
    "CREATE TABLE edges(src TEXT NOT NULL, dst TEXT NOT NULL, kind TEXT NOT NULL);"
    "CREATE INDEX edges_src ON edges(src);"
    "CREATE INDEX edges_dst ON edges(dst);"
    "CREATE VIRTUAL TABLE nodes_fts USING fts5(name, body, content='nodes',"
    " content_rowid='rowid', tokenize='trigram');"
    "CREATE TRIGGER nodes_ai AFTER INSERT ON nodes BEGIN"
    " INSERT INTO nodes_fts(rowid, name, body) VALUES (new.rowid, new.name, new.body); END;"
    "CREATE TRIGGER nodes_ad AFTER DELETE ON nodes BEGIN"
    " INSERT INTO nodes_fts(nodes_fts, rowid, name, body)"
    " VALUES ('delete', old.rowid, old.name, old.body); END;"
    "CREATE TRIGGER nodes_au AFTER UPDATE ON nodes BEGIN"
    " INSERT INTO nodes_fts(nodes_fts, rowid, name, body)"
    " VALUES ('delete', old.rowid, old.name, old.body);"
    " INSERT INTO nodes_fts(rowid, name, body) VALUES (new.rowid, new.name, new.body); END;";

static const char upsert_sql[] =
    "INSERT INTO nodes(id, kind, name, title, body, created_at, updated_at, tags, score,"
    " status, source, metadata) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
    " ON CONFLICT(id) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at,"
    " score = excluded.score, status = excluded.status";

static const char select_sql[] =
    "SELECT id, kind, name, title, body, created_at, updated_at, tags, score, status, source,"
    " metadata FROM nodes WHERE id = ?1";

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

/* Binds a whole node (the insert branch of the upsert), with u's changes
   when u is not NULL. */
static void bind_node(sqlite3_stmt *st, const node_data *d, const upsert *u)
{
    bind_text(st, 1, d->id);
    bind_text(st, 2, d->kind);
    bind_text(st, 3, d->name);
    bind_text(st, 4, d->title);
    bind_text(st, 5, u ? u->body : d->body);
    sqlite3_bind_int64(st, 6, d->created_at);
    sqlite3_bind_int64(st, 7, u ? u->updated_at : d->updated_at);
    bind_text(st, 8, d->tags_json);
    sqlite3_bind_double(st, 9, u ? u->score : d->score);
    bind_text(st, 10, u ? u->status : d->status);
    bind_text(st, 11, d->source);
    bind_text(st, 12, d->metadata);
}

static void sqlite_create(const char *path)
{
    sqlite3 *db = sql_open(path, true);
    sql_exec(db, schema);
    sql_exec(db, "BEGIN");
    sqlite3_stmt *ins = sql_prepare(db, upsert_sql);
    for (int i = 0; i < NODES; i++) {
        bind_node(ins, &nodes[i], NULL);
        if (sqlite3_step(ins) != SQLITE_DONE)
            fail("insert node: %s", sqlite3_errmsg(db));
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    ins = sql_prepare(db, "INSERT INTO edges(src, dst, kind) VALUES (?1, ?2, ?3)");
    for (int r = 0; r < RELS; r++) {
        bind_text(ins, 1, nodes[rel_ends[r][0]].id);
        bind_text(ins, 2, nodes[rel_ends[r][1]].id);
        bind_text(ins, 3, reltypes[rel_ends[r][2]]);
        if (sqlite3_step(ins) != SQLITE_DONE)
            fail("insert edge: %s", sqlite3_errmsg(db));
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    sql_exec(db, "COMMIT");
    /* The FTS index must answer a trigram query, or the triggers are not
       doing what seed 000's schema does. */
    sqlite3_stmt *q = sql_prepare(db, "SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH 'rap'");
    if (sqlite3_step(q) != SQLITE_ROW || sqlite3_column_int(q, 0) == 0)
        fail("the FTS5 trigram index found nothing: %s", sqlite3_errmsg(db));
    sqlite3_finalize(q);
    sqlite3_close(db);
}

/* A connection with its prepared statements. */
typedef struct sql_conn {
    sqlite3 *db;
    sqlite3_stmt *select, *upsert;
} sql_conn;

static void conn_open(sql_conn *c, const char *path)
{
    c->db = sql_open(path, false);
    c->select = sql_prepare(c->db, select_sql);
    c->upsert = sql_prepare(c->db, upsert_sql);
}

static void conn_close(sql_conn *c)
{
    sqlite3_finalize(c->select);
    sqlite3_finalize(c->upsert);
    sqlite3_close(c->db);
}

static void sqlite_read_node(sql_conn *c, int i)
{
    sqlite3_stmt *st = c->select;
    bind_text(st, 1, nodes[i].id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW)
        fail("sqlite: reading %s: %s", nodes[i].id, sqlite3_errmsg(c->db));
    for (int f = 0; f < FIELDS; f++) {
        int t = sqlite3_column_type(st, f);
        if (t == SQLITE_NULL)
            fail("sqlite: %s has no %s", nodes[i].id, field_names[f]);
        if (t == SQLITE_TEXT)
            (void)sqlite3_column_text(st, f);
    }
    if (strcmp((const char *)sqlite3_column_text(st, F_ID), nodes[i].id) != 0)
        fail("sqlite: looked up %s, read another row", nodes[i].id);
    sqlite3_reset(st);
}

/* False when SQLite gave up (SQLITE_BUSY after busy_timeout). */
static bool sqlite_upsert(sql_conn *c, const upsert *u)
{
    bind_node(c->upsert, &nodes[u->node], u);
    int rc = sqlite3_step(c->upsert);
    sqlite3_reset(c->upsert);
    if (rc == SQLITE_DONE)
        return true;
    if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
        fail("sqlite upsert: %s", sqlite3_errmsg(c->db));
    return false;
}

/* A FIFO lock: seed 000's single-mutex backend is an async Mutex under
   tokio, which grants the lock in request order; a pthread mutex lets a
   thread in a tight loop take it again before a woken waiter runs. */
typedef struct fifo_lock {
    pthread_mutex_t m;
    pthread_cond_t c;
    uint64_t next, serving;
} fifo_lock;

static void fifo_acquire(fifo_lock *l)
{
    pthread_mutex_lock(&l->m);
    uint64_t ticket = l->next++;
    while (l->serving != ticket)
        pthread_cond_wait(&l->c, &l->m);
    pthread_mutex_unlock(&l->m);
}

static void fifo_release(fifo_lock *l)
{
    pthread_mutex_lock(&l->m);
    l->serving++;
    pthread_cond_broadcast(&l->c);
    pthread_mutex_unlock(&l->m);
}

/* The SQLite backends' connections. */
static struct {
    sql_conn shared;                 /* single-mutex: readers and writer */
    fifo_lock shared_lock;
    sql_conn writer;                 /* pool: the writer's own */
    sql_conn pool[SQLITE_POOL];      /* pool: the readers' */
    bool pool_busy[SQLITE_POOL];
    pthread_mutex_t pool_m;
    pthread_cond_t pool_c;
} sq = { .shared_lock = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 },
         .pool_m = PTHREAD_MUTEX_INITIALIZER, .pool_c = PTHREAD_COND_INITIALIZER };

static sql_conn *pool_take(void)
{
    pthread_mutex_lock(&sq.pool_m);
    for (;;) {
        for (int i = 0; i < SQLITE_POOL; i++)
            if (!sq.pool_busy[i]) {
                sq.pool_busy[i] = true;
                pthread_mutex_unlock(&sq.pool_m);
                return &sq.pool[i];
            }
        pthread_cond_wait(&sq.pool_c, &sq.pool_m);
    }
}

static void pool_give(sql_conn *c)
{
    pthread_mutex_lock(&sq.pool_m);
    sq.pool_busy[c - sq.pool] = false;
    pthread_cond_signal(&sq.pool_c);
    pthread_mutex_unlock(&sq.pool_m);
}

/* ---- one read, one write, per backend ---------------------------------------- */

static void read_node(backend b, int i)
{
    switch (b) {
    case B_FLOOR:
        break;
    case B_STRATA:
        strata_read_node(i);
        break;
    case B_SQLITE_MUTEX:
        fifo_acquire(&sq.shared_lock);
        sqlite_read_node(&sq.shared, i);
        fifo_release(&sq.shared_lock);
        break;
    case B_SQLITE_POOL: {
        sql_conn *c = pool_take();
        sqlite_read_node(c, i);
        pool_give(c);
        break;
    }
    default:
        fail("bad backend");
    }
}

static bool write_node(backend b, const upsert *u)
{
    bool ok = false;
    switch (b) {
    case B_STRATA:
        ok = strata_upsert(u);
        break;
    case B_SQLITE_MUTEX:
        fifo_acquire(&sq.shared_lock);
        ok = sqlite_upsert(&sq.shared, u);
        fifo_release(&sq.shared_lock);
        break;
    case B_SQLITE_POOL:
        ok = sqlite_upsert(&sq.writer, u);
        break;
    default:
        fail("bad backend");
    }
    return ok;
}

/* ---- the background writer ----------------------------------------------------- */

static struct {
    pthread_t th;
    backend b;
    atomic_bool stop;
    atomic_uint_fast64_t ok, busy;
} writer;

static void *writer_main(void *unused)
{
    (void)unused;
    uint64_t rng = 0xda942042e4dd58b5ull;
    int64_t serial = 0;
    while (!atomic_load_explicit(&writer.stop, memory_order_relaxed)) {
        upsert u = next_upsert(&rng, serial++);
        if (write_node(writer.b, &u))
            atomic_fetch_add_explicit(&writer.ok, 1, memory_order_relaxed);
        else
            atomic_fetch_add_explicit(&writer.busy, 1, memory_order_relaxed);
    }
    return NULL;
}

static void writer_start(backend b)
{
    writer.b = b;
    atomic_store(&writer.stop, false);
    atomic_store(&writer.ok, 0);
    atomic_store(&writer.busy, 0);
    if (pthread_create(&writer.th, NULL, writer_main, NULL))
        fail("pthread_create failed");
}

static void writer_stop(void)
{
    atomic_store(&writer.stop, true);
    pthread_join(writer.th, NULL);
}

/* ---- the worker pool --------------------------------------------------------------- */

typedef struct task {
    backend b;
    int node;
} task;

static struct {
    pthread_mutex_t m;
    pthread_cond_t work, done;
    task queue[WAVE_READERS];
    int head, tail;      /* tasks [head, tail) are waiting */
    int remaining;       /* tasks of the wave not finished */
    bool stop;
    pthread_t th[POOL_THREADS];
} pool = { .m = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
           .done = PTHREAD_COND_INITIALIZER };

static void *worker_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&pool.m);
    for (;;) {
        while (pool.head == pool.tail && !pool.stop)
            pthread_cond_wait(&pool.work, &pool.m);
        if (pool.head == pool.tail)
            break;
        task t = pool.queue[pool.head++];
        pthread_mutex_unlock(&pool.m);
        read_node(t.b, t.node);
        pthread_mutex_lock(&pool.m);
        if (--pool.remaining == 0)
            pthread_cond_signal(&pool.done);
    }
    pthread_mutex_unlock(&pool.m);
    return NULL;
}

static void pool_start(void)
{
    for (int i = 0; i < POOL_THREADS; i++)
        if (pthread_create(&pool.th[i], NULL, worker_main, NULL))
            fail("pthread_create failed");
}

static void pool_stop(void)
{
    pthread_mutex_lock(&pool.m);
    pool.stop = true;
    pthread_cond_broadcast(&pool.work);
    pthread_mutex_unlock(&pool.m);
    for (int i = 0; i < POOL_THREADS; i++)
        pthread_join(pool.th[i], NULL);
}

/* One wave: its time in milliseconds, from posting to the 16th done. */
static double run_wave(backend b, uint64_t *rng)
{
    task tasks[WAVE_READERS];
    for (int i = 0; i < WAVE_READERS; i++)
        tasks[i] = (task){ b, (int)(xorshift(rng) % NODES) };
    double t0 = now_ms();
    pthread_mutex_lock(&pool.m);
    memcpy(pool.queue, tasks, sizeof tasks);
    pool.head = 0;
    pool.tail = WAVE_READERS;
    pool.remaining = WAVE_READERS;
    pthread_cond_broadcast(&pool.work);
    while (pool.remaining > 0)
        pthread_cond_wait(&pool.done, &pool.m);
    pthread_mutex_unlock(&pool.m);
    return now_ms() - t0;
}

/* ---- measuring a backend ------------------------------------------------------------ */

typedef struct result {
    int waves;                     /* waves timed: at least --waves, and */
    double phase_ms;               /* enough to last the writer-alone time */
    double wave_median, wave_mean, reads_per_s;
    double writes_per_wave;        /* over the whole wave phase */
    int waves_with_write;          /* waves during which an upsert completed */
    double solo_per_s, with_readers_per_s;
    uint64_t busy;
} result;

/* Times waves for one backend while its writer runs.  The writer's rate
   with readers is taken over the whole wave phase, which lasts at least as
   long as the writer-alone measurement: waves are far shorter than one
   SQLite upsert, so a count per wave says little on its own, and the
   writer tends to get the CPU between waves, when the 16 workers sleep. */
static result measure(backend b, int min_waves, double solo_ms)
{
    result r;
    memset(&r, 0, sizeof r);
    int cap = min_waves;
    double *t = malloc(sizeof(double) * (size_t)cap);
    if (!t)
        fail("out of memory");
    bool with_writer = b != B_FLOOR;
    atomic_store(&writer.ok, 0);
    atomic_store(&writer.busy, 0);
    if (with_writer) {
        writer_start(b);
        /* The writer alone: no reader runs. */
        uint64_t n0 = atomic_load(&writer.ok);
        double t0 = now_ms();
        while (now_ms() - t0 < solo_ms)
            usleep(10000);
        uint64_t n1 = atomic_load(&writer.ok);
        r.solo_per_s = (double)(n1 - n0) / ((now_ms() - t0) / 1e3);
    }

    uint64_t rng = 0x6a09e667f3bcc908ull;
    for (int i = 0; i < 3; i++)   /* warm-up waves, untimed */
        run_wave(b, &rng);
    uint64_t phase_w0 = atomic_load(&writer.ok);
    double phase_t0 = now_ms();
    int n = 0;
    while (n < min_waves || now_ms() - phase_t0 < solo_ms) {
        if (n == cap) {
            cap *= 2;
            t = realloc(t, sizeof(double) * (size_t)cap);
            if (!t)
                fail("out of memory");
        }
        uint64_t before = atomic_load(&writer.ok);
        t[n] = run_wave(b, &rng);
        r.waves_with_write += atomic_load(&writer.ok) != before;
        n++;
    }
    r.phase_ms = now_ms() - phase_t0;
    uint64_t phase_writes = atomic_load(&writer.ok) - phase_w0;
    if (with_writer)
        writer_stop();
    r.busy = atomic_load(&writer.busy);
    r.waves = n;
    r.with_readers_per_s = phase_writes / (r.phase_ms / 1e3);
    r.writes_per_wave = (double)phase_writes / n;
    r.wave_mean = mean(t, n);
    r.wave_median = median(t, n);
    r.reads_per_s = WAVE_READERS / (r.wave_median / 1e3);
    free(t);
    return r;
}

static void print_result(bool json, backend b, const result *r)
{
    double seed = b == B_SQLITE_MUTEX ? seed_mutex_ms : b == B_SQLITE_POOL ? seed_pool_ms : 0;
    double ratio = r->solo_per_s > 0 ? r->with_readers_per_s / r->solo_per_s : 0;
    if (json) {
        printf("{\"bench\":\"W3\",\"backend\":\"%s\",\"waves\":%d,\"wave_median_ms\":%.4f,"
               "\"wave_mean_ms\":%.4f,\"reads_per_s\":%.0f", backend_ids[b], r->waves,
               r->wave_median, r->wave_mean, r->reads_per_s);
        if (b != B_FLOOR)
            printf(",\"writes_per_wave\":%.3f,\"waves_with_write\":%d,\"phase_ms\":%.1f,"
                   "\"writer_alone_per_s\":%.0f,\"writer_with_readers_per_s\":%.0f,"
                   "\"writer_ratio\":%.3f,\"writer_busy\":%llu", r->writes_per_wave,
                   r->waves_with_write, r->phase_ms, r->solo_per_s, r->with_readers_per_s,
                   ratio, (unsigned long long)r->busy);
        if (seed > 0)
            printf(",\"seed_median_ms\":%.0f", seed);
        printf("}\n");
    } else if (b == B_FLOOR) {
        printf("%-20s %6d %9.3f %9.3f %9s |%26s|%32s|\n", backend_names[b], r->waves,
               r->wave_median, r->wave_mean, "-", "", "");
    } else {
        char seedcol[32] = "";
        if (seed > 0)
            snprintf(seedcol, sizeof seedcol, "%.0f", seed);
        printf("%-20s %6d %9.3f %9.3f %9.0f | %9.2f %6.0f%% %7s | %9.0f %9.0f %7.0f%% | %s\n",
               backend_names[b], r->waves, r->wave_median, r->wave_mean, r->reads_per_s,
               r->writes_per_wave, 100.0 * r->waves_with_write / r->waves, "",
               r->solo_per_s, r->with_readers_per_s, 100 * ratio, seedcol);
        if (r->busy)
            printf("%-20s (the writer gave up with SQLITE_BUSY %llu times)\n", "",
                   (unsigned long long)r->busy);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int waves = 200;
    double solo_ms = 2000;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--waves") && i + 1 < argc)
            waves = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            waves = 30, solo_ms = 300;
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--plain-writes"))
            plain_writes = true;
        else {
            fprintf(stderr, "usage: wave [--waves W] [--quick] [--json] [--plain-writes]\n");
            return 2;
        }
    }
    if (waves < 2) {
        fprintf(stderr, "wave: need at least 2 waves\n");
        return 2;
    }

    make_data();
    double t0 = now_ms();
    strata_fill();
    double strata_ms = now_ms() - t0;

    strcpy(tmpdir, "/tmp/strata-wave-XXXXXX");
    if (!mkdtemp(tmpdir))
        fail("mkdtemp: %s", strerror(errno));
    atexit(remove_tmpdir);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
    signal(SIGPIPE, on_signal);   /* e.g. piped into head */
    static const char *const base[2] = { "single-mutex.db", "wal-pool-4.db" };
    for (int b = 0; b < 2; b++) {
        snprintf(dbfiles[b][0], sizeof dbfiles[b][0], "%s/%s", tmpdir, base[b]);
        snprintf(dbfiles[b][1], sizeof dbfiles[b][1], "%.100s-wal", dbfiles[b][0]);
        snprintf(dbfiles[b][2], sizeof dbfiles[b][2], "%.100s-shm", dbfiles[b][0]);
    }
    t0 = now_ms();
    sqlite_create(dbfiles[0][0]);
    sqlite_create(dbfiles[1][0]);
    double sqlite_ms = (now_ms() - t0) / 2;
    conn_open(&sq.shared, dbfiles[0][0]);
    conn_open(&sq.writer, dbfiles[1][0]);
    for (int i = 0; i < SQLITE_POOL; i++)
        conn_open(&sq.pool[i], dbfiles[1][0]);

    if (!json) {
        printf("W3 reader wave under a writer: %d nodes x %d fields + %d relationships; "
               "%d readers per wave on a pool of %d threads; at least %d waves per backend\n",
               NODES, FIELDS, RELS, WAVE_READERS, POOL_THREADS, waves);
        printf("loaded: strata %.0f ms, SQLite %.0f ms per database (WAL, synchronous=NORMAL, "
               "FTS5 trigram + triggers); libsqlite3 %s\n", strata_ms, sqlite_ms,
               sqlite3_libversion());
        printf("strata upsert: %s; the writer runs alone for %.1f s, then waves run for at "
               "least as long; times in ms;\nwrites per wave = the writer's successful upserts "
               "over the wave phase / waves; w/ one = waves during which one completed\n\n",
               plain_writes ? "4 plain sets (--plain-writes)" : "a statement of 4 sets",
               solo_ms / 1e3);
        printf("%-20s %6s %9s %9s %9s | %-24s | %-30s | %s\n", "", "", "wave", "wave",
               "reads/s", "    writes per wave", "      writer upserts/s", "seed 000");
        printf("%-20s %6s %9s %9s %9s | %9s %7s %7s | %9s %9s %8s | %s\n", "backend", "waves",
               "median", "mean", "(median)", "mean", "w/ one", "", "alone", "w/ waves",
               "ratio", "median");
    }

    pool_start();
    result res[NBACKENDS];
    strata_memstats mem_before, mem_after;
    for (int b = 0; b < NBACKENDS; b++) {
        if (b == B_STRATA)
            STRATA_OK_G(sg.g, strata_memory_stats(sg.g, &mem_before));
        res[b] = measure((backend)b, waves, solo_ms);
        print_result(json, (backend)b, &res[b]);
        if (b == B_STRATA) {
            /* One more write with no view held folds every base back: the
               graph should be its loaded size again, and not forked. */
            uint64_t rng = 1;
            upsert u = next_upsert(&rng, 0);
            strata_upsert(&u);
            STRATA_OK_G(sg.g, strata_memory_stats(sg.g, &mem_after));
            bool forked = strata_is_forked(sg.g);
            uint64_t nsnap = atomic_load(&snap_count);
            double snap_mean_us = nsnap ? atomic_load(&snap_ns_sum) / 1e3 / (double)nsnap : 0;
            double snap_max_us = atomic_load(&snap_ns_max) / 1e3;
            if (json)
                printf("{\"bench\":\"W3\",\"case\":\"strata_view_take\",\"views\":%llu,"
                       "\"mean_us\":%.3f,\"max_us\":%.1f}\n", (unsigned long long)nsnap,
                       snap_mean_us, snap_max_us);
            else
                printf("%-20s (readers taking a view: mean %.2f us, worst %.1f us over %llu "
                       "views, warm-up included)\n", "", snap_mean_us, snap_max_us,
                       (unsigned long long)nsnap);
            if (json)
                printf("{\"bench\":\"W3\",\"case\":\"strata_memory\",\"graph_bytes_before\":%llu,"
                       "\"graph_bytes_after\":%llu,\"forked_after\":%s}\n",
                       (unsigned long long)mem_before.graph_bytes,
                       (unsigned long long)mem_after.graph_bytes, forked ? "true" : "false");
            else
                printf("%-20s (graph %.1f MB before the writer, %.1f MB after it stopped and "
                       "one more write; forked after: %s)\n", "",
                       mem_before.graph_bytes / 1048576.0, mem_after.graph_bytes / 1048576.0,
                       forked ? "yes" : "no");
            /* No view is held now, so the write above must have folded
               every base back.  If not, some version is kept alive with
               no reader: a leak, which also makes every later write copy. */
            if (forked || mem_after.graph_bytes > 2 * mem_before.graph_bytes)
                fprintf(stderr, "wave: WARNING: strata is still forked (or grew %.1fx) with no "
                        "view held: versions are being leaked (see bench/README.md)\n",
                        (double)mem_after.graph_bytes / (double)mem_before.graph_bytes);
        }
    }
    pool_stop();

    double vs_pool = res[B_SQLITE_POOL].wave_median / res[B_STRATA].wave_median;
    double vs_mutex = res[B_SQLITE_MUTEX].wave_median / res[B_STRATA].wave_median;
    double pool_vs_mutex = res[B_SQLITE_MUTEX].wave_median / res[B_SQLITE_POOL].wave_median;
    if (json)
        printf("{\"bench\":\"W3\",\"case\":\"ratios\",\"strata_vs_pool_median\":%.2f,"
               "\"strata_vs_mutex_median\":%.2f,\"pool_vs_mutex_median\":%.2f,"
               "\"seed_pool_vs_mutex\":%.2f}\n", vs_pool, vs_mutex, pool_vs_mutex,
               seed_mutex_ms / seed_pool_ms);
    else
        printf("\nwave speed-up (median): strata vs SQLite pool %.1fx, strata vs single-mutex "
               "%.1fx; pool vs single-mutex %.2fx (seed 000: %.2fx)\n", vs_pool, vs_mutex,
               pool_vs_mutex, seed_mutex_ms / seed_pool_ms);

    conn_close(&sq.shared);
    conn_close(&sq.writer);
    for (int i = 0; i < SQLITE_POOL; i++)
        conn_close(&sq.pool[i]);
    strata_graph_free(&sg.g);
    return 0;
}
