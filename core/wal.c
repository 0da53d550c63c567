/*
 * The write-ahead log: files, appends, recovery and checkpoints.  What a
 * record holds and when it is written: core/wal.h; the bytes:
 * docs/FORMAT.md, "The log".
 *
 * A database is a directory:
 *
 *   LOCK                    flock()ed while open: one process at a time
 *   snapshot-<S>            the graph after record S (strata_save's file)
 *   wal-<F>.log             a segment: records F, F+1, ... (hex, 16 digits)
 *
 * Segments are preallocated: created at their full size (zeros), so that
 * an append overwrites zeros and its fdatasync journals no new file size
 * (docs/BENCHMARKS.md, "Durable commits").  Invariants:
 *   1. Past seg_size the segment holds zeros, except for a record being
 *      written and, after a failed append, what it left (tail_dirty):
 *      cut before anything else is written.
 *   2. alloc_end is the file's size; seg_size <= alloc_end.
 *   3. Every record up to synced_seq is on the disk; each record's header
 *      says how far behind that was (its lag), which recovery needs to tell
 *      damage from unsynced writes (core/wal_tail.c).
 *
 * States and the function that moves between them:
 *   closed -> open          strata_open: lock, load the newest snapshot,
 *                           replay every later record, cut a torn tail,
 *                           open the last segment for appending (one
 *                           of an older version: start a new segment).
 *   open -> open            wal_commit: one record appended (and fsynced
 *                           under sync full).
 *   open -> checkpointing   strata_checkpoint: (1) under the log's mutex,
 *                           sync the segment, start wal-<S+1>, take a view;
 *                           (2) save the view as snapshot-<S> (temporary
 *                           file, rename, directory fsync); (3) remove the
 *                           older snapshots and segments.  A crash after
 *                           (1) leaves the old snapshot and every record;
 *                           after (2) the new snapshot and records that
 *                           opening skips (and removes).
 *   open -> closed          wal_close: sync, unlock.
 */
#include "core/wal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core/persist.h"
#include "core/persist_codec.h"
#include "core/txn.h"

#define SEG_MAGIC "STRATAWL"
/* Written: 3, preallocated, each record replayed as one statement.  Still
   read: 2 (preallocated) and 1, whose records replay call by call — their
   writers let a statement reuse the ids it freed (core/txn.h). */
#define SEG_VERSION 3u
#define SEG_VERSION_UNITS 3u   /* the first whose records replay as units */
#define SEG_HEADER WAL_SEG_HEADER
#define REC_HEADER WAL_REC_HEADER
#define REC_MAX_BODY WAL_REC_MAX_BODY
#define DEFAULT_CHECKPOINT_BYTES (64ull << 20)
#define NORMAL_SYNC_MS 100
/* A segment's preallocation: the log's size at which a checkpoint starts,
   at most PREALLOC_MAX (past it the segment grows by that much at a time),
   in whole pages.  Test builds keep it tiny so the growth path runs. */
#if defined(STRATA_TESTING) && !defined(STRATA_FULL_SIZES)
#define PREALLOC_MAX (16u << 10)
#else
#define PREALLOC_MAX (64ull << 20)
#endif
#define PREALLOC_PAGE 4096u

_Thread_local const strata_graph *wal_inside;

struct wal {
    pthread_mutex_t mu;        /* recursive: writers, commits, segment switch */
    char *dir;
    int lock_fd;
    int seg_fd;
    uint64_t seg_first;        /* first sequence number of the open segment */
    uint64_t seg_size;         /* bytes of whole records in it */
    uint64_t alloc_end;        /* the file's size: zeros from seg_size on */
    uint64_t prealloc;         /* bytes a segment is created with */
    bool tail_dirty;           /* a failed append left bytes past seg_size */
    _Atomic uint64_t synced_seq;   /* every record up to it is on the disk */
    uint64_t written_seq;      /* sync normal: the last record written (fd_mu) */
    uint64_t next_seq;
    uint64_t snap_seq;
    uint64_t log_bytes;        /* since the snapshot */
    uint64_t checkpoint_bytes;
    wal_buf cap;               /* the open unit's calls */
    wal_buf tok;               /* scratch: tokens for the next record */
    size_t stmt_mark;
    uint32_t tokens_logged[3];
    strata_sync sync;
    bool checkpointing;
    /* sync normal: a thread fsyncs the segment when dirty */
    pthread_mutex_t fd_mu;     /* guards seg_fd against the thread */
    pthread_cond_t cv;
    pthread_t thread;
    bool thread_on, stopping, dirty;
};

/* ---- the I/O seam (fault injection in test builds) ---------------------- */

#ifdef STRATA_TESTING
static long fault_left[WAL_FAULT_NPOINTS];
static int fault_err[WAL_FAULT_NPOINTS];
static int stop_after_step;

void wal_fault_at(wal_fault_point p, long k, int err)
{
    fault_left[p] = k;
    fault_err[p] = err;
}

void wal_fault_clear(void) { memset(fault_left, 0, sizeof fault_left); }

static atomic_long sync_count;
long wal_sync_count(void) { return atomic_load(&sync_count); }
uint64_t wal_synced_seq(const strata_graph *g) { return atomic_load(&g->wal->synced_seq); }

void wal_checkpoint_stop_after(int k) { stop_after_step = k; }

static bool fault_hit(wal_fault_point p)
{
    if (fault_left[p] <= 0)
        return false;
    if (fault_left[p] > 1) {
        fault_left[p]--;
        return false;
    }
    errno = fault_err[p];
    return true;   /* stays at 1: every later call fails too */
}
#define FAULT(p) fault_hit(p)
#define STOP_AFTER(k) (stop_after_step == (k))
#else
#define FAULT(p) false
#define STOP_AFTER(k) false
#endif

/* Writes every byte of iov at off; 0 or an errno. */
static int io_writev(int fd, struct iovec *iov, int n, uint64_t off)
{
    while (n > 0) {
        if (FAULT(WAL_FAULT_WRITE))
            return errno;
        ssize_t k = pwritev(fd, iov, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : EIO;
        off += (uint64_t)k;
        while (n > 0 && (size_t)k >= iov->iov_len) {
            k -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + k;
            iov->iov_len -= (size_t)k;
        }
    }
    return 0;
}

/* Reserves [off, off + len) of fd as zeros, the file's size set past it:
   later writes there change no size, so their fdatasync journals nothing.
   0 or an errno. */
static int io_prealloc(int fd, uint64_t off, uint64_t len)
{
    if (FAULT(WAL_FAULT_PREALLOC))
        return errno;
    int rc;
    while ((rc = posix_fallocate(fd, (off_t)off, (off_t)len)) == EINTR)
        continue;
    return rc;
}

static int io_sync(int fd)
{
#ifdef STRATA_TESTING
    atomic_fetch_add(&sync_count, 1);
#endif
    if (FAULT(WAL_FAULT_SYNC))
        return errno;
    return fdatasync(fd) != 0 ? errno : 0;
}

static void put_le(unsigned char *p, uint64_t x, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t x = 0;
    for (int i = 0; i < n; i++)
        x |= (uint64_t)p[i] << (8 * i);
    return x;
}

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = mem_alloc(mem_scratch(), n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void path_free(char *p)
{
    if (p)
        mem_free(mem_scratch(), p);
}

static char *seg_path(const char *dir, uint64_t first)
{
    char name[40];
    snprintf(name, sizeof name, "wal-%016llx.log", (unsigned long long)first);
    return path_join(dir, name);
}

static char *snap_path(const char *dir, uint64_t seq)
{
    char name[40];
    snprintf(name, sizeof name, "snapshot-%016llx", (unsigned long long)seq);
    return path_join(dir, name);
}

static uint64_t round_up_page(uint64_t x)
{
    return (x + PREALLOC_PAGE - 1) / PREALLOC_PAGE * PREALLOC_PAGE;
}

/* The bytes a new segment is preallocated with, for a checkpoint past
   checkpoint_bytes. */
static uint64_t prealloc_for(uint64_t checkpoint_bytes)
{
    uint64_t n = checkpoint_bytes < PREALLOC_MAX ? checkpoint_bytes : PREALLOC_MAX;
    return round_up_page(n > SEG_HEADER ? n : SEG_HEADER);
}

/* Creates segment wal-<first>.log with its header, preallocated to size
   bytes (zeros), synced with its directory entry.  The fd, or -1 with
   errno. */
static int seg_create(const char *dir, uint64_t first, uint64_t size)
{
    char *p = seg_path(dir, first);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {
        path_free(p);
        return -1;
    }
    unsigned char h[SEG_HEADER];
    memcpy(h, SEG_MAGIC, 8);
    put_le(h + 8, first, 8);
    put_le(h + 16, SEG_VERSION, 4);
    put_le(h + 20, crc32c(0, h, 20), 4);
    struct iovec iov = { h, sizeof h };
    /* The header first: a crash that keeps the size but not the header
       leaves a segment whose header is zeros, which opening removes as
       one cut while being created. */
    int rc = io_writev(fd, &iov, 1, 0);
    if (!rc && size > SEG_HEADER)
        rc = io_prealloc(fd, SEG_HEADER, size - SEG_HEADER);
    if (!rc)
        rc = io_sync(fd);
    if (!rc)
        rc = persist_sync_dir(dir);
    if (rc) {
        /* A segment left behind would claim records that go elsewhere. */
        close(fd);
        unlink(p);
        path_free(p);
        errno = rc;
        return -1;
    }
    path_free(p);
    return fd;
}

/* ---- appending ------------------------------------------------------------ */

/* The tokens interned since the last record, as TOKEN calls. */
static int collect_tokens(struct wal *w, const catalog *c, uint32_t now[3])
{
    w->tok.len = 0;
    for (int k = 0; k < 3; k++) {
        now[k] = intern_count(c->tokens[k]);
        for (uint32_t id = w->tokens_logged[k]; id < now[k]; id++) {
            size_t len;
            const char *name = intern_name(c->tokens[k], id, &len);
            wal_op op = { .code = WOP_TOKEN, .kind = (uint8_t)k, .id = id, .name = name,
                          .name_len = len };
            if (walrec_encode(&w->tok, &op) != 0)
                return -1;
        }
    }
    return 0;
}

/* Cuts what a failed append left past the last record; 0 or an errno. */
static int clean_tail(struct wal *w)
{
    if (!w->tail_dirty)
        return 0;
    if (ftruncate(w->seg_fd, (off_t)w->seg_size) != 0)
        return errno;
    w->tail_dirty = false;
    w->alloc_end = w->seg_size;
    return 0;
}

/* Makes room for n more bytes at seg_size: a segment that outgrew its
   preallocation (a large transaction, a checkpoint that has not run, a
   cut tail) grows by another preallocation, not by each record, so only
   a commit that crosses its end changes the file's size. */
static int reserve(struct wal *w, uint64_t n)
{
    if (w->seg_size + n <= w->alloc_end)
        return 0;
    uint64_t end = round_up_page(w->seg_size + n);
    if (end < w->alloc_end + w->prealloc)
        end = w->alloc_end + w->prealloc;
    int rc = io_prealloc(w->seg_fd, w->alloc_end, end - w->alloc_end);
    if (!rc)
        w->alloc_end = end;
    return rc;
}

strata_status wal_commit(strata_graph *g)
{
    struct wal *w = g->wal;
    uint32_t now[3];
    if (collect_tokens(w, g->cat, now) != 0)
        return graph_fail(g, STRATA_ENOMEM, "out of memory writing the log record");
    if (w->cap.len == 0)
        return STRATA_OK;   /* nothing changed: no record */
    size_t body = w->tok.len + w->cap.len;
    if (body > REC_MAX_BODY)
        return graph_fail(g, STRATA_EINVAL, "a log record holds at most %u bytes; this commit "
                          "needs %zu", REC_MAX_BODY, body);
    unsigned char h[REC_HEADER];
    uint64_t seq = w->next_seq, synced = atomic_load(&w->synced_seq);
    uint64_t lag = seq - synced;
    put_le(h, body, 4);
    put_le(h + 4, seq, 8);
    put_le(h + 12, lag > UINT32_MAX ? UINT32_MAX : lag, 4);   /* capped: claims less */
    put_le(h + 16, crc32c(0, h, 16), 4);
    uint32_t crc = crc32c(0, w->tok.p, w->tok.len);
    put_le(h + 20, crc32c(crc, w->cap.p, w->cap.len), 4);
    struct iovec iov[3] = { { h, sizeof h }, { w->tok.p, w->tok.len }, { w->cap.p, w->cap.len } };
    const char *what = "cleaning";
    int rc = clean_tail(w);
    if (!rc) {
        what = "preallocating";
        rc = reserve(w, sizeof h + body);
    }
    if (!rc) {
        what = "writing";
        rc = io_writev(w->seg_fd, iov, 3, w->seg_size);
    }
    if (!rc && w->sync == STRATA_SYNC_FULL) {
        rc = io_sync(w->seg_fd);
        what = "syncing";
    }
    if (rc) {
        /* Whatever reached the file goes: recovery reads the bytes past
           the last record as a torn tail only if nothing but zeros and
           remains of one write follow, so they are cut now or, failing
           that, before the next append. */
        if (ftruncate(w->seg_fd, (off_t)w->seg_size) == 0)
            w->alloc_end = w->seg_size;
        else
            w->tail_dirty = true;
        return graph_fail(g, STRATA_EIO, "%s the log of %s failed (%s); the commit was rolled "
                          "back", what, w->dir, strerror(rc));
    }
    if (w->sync == STRATA_SYNC_FULL)
        atomic_store(&w->synced_seq, seq);
    w->seg_size += sizeof h + body;
    w->log_bytes += sizeof h + body;
    w->next_seq++;
    memcpy(w->tokens_logged, now, sizeof now);
    w->cap.len = 0;
    w->stmt_mark = 0;
    if (w->sync == STRATA_SYNC_NORMAL) {
        pthread_mutex_lock(&w->fd_mu);
        w->dirty = true;
        w->written_seq = seq;
        pthread_mutex_unlock(&w->fd_mu);
    }
    return STRATA_OK;
}

void wal_discard(strata_graph *g, bool stmt)
{
    struct wal *w = g->wal;
    w->cap.len = stmt ? w->stmt_mark : 0;
    if (!stmt)
        w->stmt_mark = 0;
}

void wal_stmt_mark(strata_graph *g) { g->wal->stmt_mark = g->wal->cap.len; }

/* ---- calls on a logged graph ------------------------------------------------ */

static bool unit_open(strata_graph *g)
{
    graph_write_begin(g);
    bool open = stmt_open(g) || txn_open(g);
    graph_write_end(g);
    return open;
}

/* Whether encoding op would read through a bad pointer or an oversized
   list: then the raw call fails on its own and there is nothing to log. */
static bool op_malformed(const wal_op *op)
{
    if (op->code == WOP_NODE_CREATE)
        return !op->out || (op->n && !op->list) || op->n > MAX_LABELS_PER_NODE;
    if (op->code == WOP_REL_CREATE)
        return !op->out;
    return false;
}

static strata_status write_call(strata_graph *g, const wal_op *op)
{
    struct wal *w = g->wal;
    if (op_malformed(op))
        return walrec_apply(g, op);
    bool implicit = !unit_open(g);
    strata_status s = implicit ? strata_statement_begin(g) : STRATA_OK;
    if (s)
        return s;
    size_t mark = w->cap.len;
    if (walrec_encode(&w->cap, op) != 0) {
        s = graph_fail(g, STRATA_ENOMEM, "out of memory logging a write");
    } else {
        s = walrec_apply(g, op);
        if (s)
            w->cap.len = mark;
    }
    if (implicit) {
        strata_status e = strata_statement_end(g, s == STRATA_OK);
        if (s == STRATA_OK)
            s = e;
    }
    return s;
}

/* Commits one schema change alone (they run outside units). */
static strata_status commit_alone(strata_graph *g, const wal_op *op)
{
    struct wal *w = g->wal;
    w->cap.len = 0;
    if (walrec_encode(&w->cap, op) != 0)
        return graph_fail(g, STRATA_ENOMEM, "out of memory logging a schema change");
    graph_write_begin(g);
    strata_status s = wal_commit(g);
    graph_write_end(g);
    w->cap.len = 0;
    return s;
}

static bool index_def_of(strata_graph *g, uint32_t id, index_def *out)
{
    version *v = graph_write_begin(g);
    int pos = idxset_find(v->indexes, id);
    if (pos >= 0)
        *out = *idxset_def(v->indexes, (uint32_t)pos);
    graph_write_end(g);
    return pos >= 0;
}

static wal_op index_create_op(const index_def *d)
{
    return (wal_op){ .code = WOP_INDEX_CREATE, .kind = d->kind, .flag = d->on_rels,
                     .a = d->token, .list = d->keys, .n = d->nkeys, .name = d->name,
                     .name_len = strlen(d->name) };
}

/* Schema changes run first and are logged after (their name may be
   generated); a failed log write undoes them. */
static strata_status schema_call(strata_graph *g, const wal_op *op)
{
    index_def d;
    if (op->code == WOP_INDEX_CREATE) {
        strata_status s = walrec_apply(g, op);   /* a NULL out fails here */
        if (s || !index_def_of(g, *op->idx_out, &d))
            return s;
        wal_op logged = index_create_op(&d);
        if ((s = commit_alone(g, &logged)) != STRATA_OK) {
            char msg[ERRMSG_MAX];
            snprintf(msg, sizeof msg, "%s", g->err);
            strata_index_drop(g, d.id);
            graph_fail(g, s, "%s", msg);
        }
        return s;
    }
    if (!index_def_of(g, (uint32_t)op->id, &d))
        return strata_index_drop(g, (strata_index)op->id);   /* fails: nothing to log */
    strata_status s = strata_index_drop(g, (strata_index)op->id);
    if (s)
        return s;
    wal_op logged = { .code = WOP_INDEX_DROP, .name = d.name, .name_len = strlen(d.name) };
    if ((s = commit_alone(g, &logged)) != STRATA_OK) {
        char msg[ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", g->err);
        wal_op back = index_create_op(&d);
        strata_index ignored;
        back.idx_out = &ignored;
        walrec_apply(g, &back);
        graph_fail(g, s, "%s", msg);
    }
    return s;
}

static void maybe_checkpoint(strata_graph *g)
{
    struct wal *w = g->wal;
    pthread_mutex_lock(&w->mu);
    bool due = w->log_bytes >= w->checkpoint_bytes && !w->checkpointing;
    pthread_mutex_unlock(&w->mu);
    if (due && !unit_open(g))
        strata_checkpoint(g);   /* a failure leaves the log growing: retried later */
}

strata_status wal_call(strata_graph *g, const wal_op *op)
{
    struct wal *w = g->wal;
    pthread_mutex_lock(&w->mu);
    const strata_graph *outer = wal_inside;
    wal_inside = g;
    strata_status s;
    if (op->code >= WOP_STMT_BEGIN)
        s = walrec_apply(g, op);   /* units: txn.c's hooks write the record */
    else if (op->code == WOP_INDEX_CREATE || op->code == WOP_INDEX_DROP)
        s = schema_call(g, op);
    else
        s = write_call(g, op);
    wal_inside = outer;
    bool check = s == STRATA_OK && outer != g && w->log_bytes >= w->checkpoint_bytes;
    pthread_mutex_unlock(&w->mu);
    if (check)
        maybe_checkpoint(g);
    return s;
}

/* ---- sync normal ------------------------------------------------------------- */

static void *sync_thread(void *arg)
{
    struct wal *w = arg;
    pthread_mutex_lock(&w->fd_mu);
    while (!w->stopping) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += NORMAL_SYNC_MS * 1000000L;
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cv, &w->fd_mu, &t);
        if (w->dirty) {
            w->dirty = false;
            uint64_t upto = w->written_seq;
            if (io_sync(w->seg_fd) != 0)
                w->dirty = true;   /* tried again next round */
            else if (upto > atomic_load(&w->synced_seq))
                atomic_store(&w->synced_seq, upto);
        }
    }
    pthread_mutex_unlock(&w->fd_mu);
    return NULL;
}

/* ---- opening ------------------------------------------------------------------- */

typedef struct opener {
    const char *dir;
    const strata_open_options *opts;
    strata_open_report *rep;
    char *err;
    size_t errlen;
    uint64_t *segs;
    size_t nsegs, capsegs;
    uint64_t snap_seq;
    bool have_snap;
    uint64_t prealloc;    /* a new segment's size */
    uint64_t alloc_end;   /* out: the appended segment's size */
} opener;

static strata_status open_fail(opener *o, strata_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static strata_status open_fail(opener *o, strata_status s, const char *fmt, ...)
{
    if (o->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(o->err, o->errlen, fmt, ap);
        va_end(ap);
    }
    return s;
}

static bool parse_hex_name(const char *name, const char *prefix, const char *suffix,
                           uint64_t *out)
{
    size_t pl = strlen(prefix), sl = strlen(suffix), n = strlen(name);
    if (n != pl + 16 + sl || strncmp(name, prefix, pl) != 0 || strcmp(name + pl + 16, suffix))
        return false;
    uint64_t x = 0;
    for (size_t i = pl; i < pl + 16; i++) {
        char c = name[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return false;
        x = x << 4 | (uint64_t)d;
    }
    *out = x;
    return true;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void remove_in(const char *dir, char *path)
{
    if (path) {
        unlink(path);
        path_free(path);
    }
    (void)dir;
}

/* Lists the directory: the newest snapshot, the segments in order.  Older
   snapshots and leftovers of an interrupted save are removed. */
static strata_status scan_dir(opener *o)
{
    DIR *d = opendir(o->dir);
    if (!d)
        return open_fail(o, STRATA_EIO, "%s: %s", o->dir, strerror(errno));
    struct dirent *e;
    uint64_t *snaps = NULL;
    size_t nsnaps = 0, capsnaps = 0;
    strata_status s = STRATA_OK;
    while ((e = readdir(d)) != NULL) {
        uint64_t x;
        if (parse_hex_name(e->d_name, "wal-", ".log", &x) ||
            parse_hex_name(e->d_name, "snapshot-", "", &x)) {
            bool seg = e->d_name[0] == 'w';
            uint64_t **arr = seg ? &o->segs : &snaps;
            size_t *n = seg ? &o->nsegs : &nsnaps, *cap = seg ? &o->capsegs : &capsnaps;
            if (*n == *cap) {
                size_t nc = *cap ? *cap * 2 : 8;
                uint64_t *p = mem_realloc(mem_scratch(), *arr, nc * sizeof **arr);
                if (!p) {
                    s = open_fail(o, STRATA_ENOMEM, "out of memory listing %s", o->dir);
                    break;
                }
                *arr = p;
                *cap = nc;
            }
            (*arr)[(*n)++] = x;
        } else if (strncmp(e->d_name, "snapshot-", 9) == 0 && strstr(e->d_name, ".tmp-")) {
            remove_in(o->dir, path_join(o->dir, e->d_name));
        }
    }
    closedir(d);
    if (s == STRATA_OK) {
        if (o->nsegs > 1)
            qsort(o->segs, o->nsegs, sizeof *o->segs, cmp_u64);
        if (nsnaps > 1)
            qsort(snaps, nsnaps, sizeof *snaps, cmp_u64);
        if (nsnaps) {
            o->have_snap = true;
            o->snap_seq = snaps[nsnaps - 1];
            for (size_t i = 0; i + 1 < nsnaps; i++)
                remove_in(o->dir, snap_path(o->dir, snaps[i]));
        }
    }
    mem_free(mem_scratch(), snaps);
    return s;
}

/* Where the data of a file of size bytes ends: past it only holes, which
   read as zeros.  A preallocated segment's space never written is one to
   the file systems that track it (ext4, XFS, tmpfs), so opening reads the
   records, not 64 MiB of zeros; where holes cannot be told, the size. */
static size_t data_end_of(int fd, size_t size)
{
    off_t pos = 0, end = 0;
    for (;;) {
        off_t data = lseek(fd, pos, SEEK_DATA);
        if (data < 0)
            return errno == ENXIO ? (size_t)end : size;
        off_t hole = lseek(fd, data, SEEK_HOLE);
        if (hole < 0 || (size_t)hole >= size)
            return size;
        end = pos = hole;
    }
}

/* Reads a file up to where its data ends (the rest is zeros): *len bytes. */
static int read_file(const char *path, unsigned char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return e;
    }
    size_t n = data_end_of(fd, (size_t)st.st_size);
    unsigned char *p = mem_alloc(mem_scratch(), n);
    if (!p) {
        close(fd);
        return ENOMEM;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, p + got, n - got, (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int e = k < 0 ? errno : EIO;
            close(fd);
            mem_free(mem_scratch(), p);
            return e;
        }
        got += (size_t)k;
    }
    close(fd);
    *out = p;
    *len = n;
    return 0;
}

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* Replays one record's calls onto g.  A record is one committed unit (a
   statement or a transaction); as_unit, its writes from its first delete
   on replay as one statement: which ids creates take depends on the
   unit's deletes before them (core/txn.h), so the replay hands out the ids
   the unit did.  (Before a delete a create takes a freed id in a unit as
   outside one, and a statement per record would cost a fifth of the
   replay of one-SET records.)  A schema change is a record of its own. */
static strata_status replay_body(strata_graph *g, const unsigned char *p, const unsigned char *end,
                                 bool as_unit, const char **why)
{
    static _Thread_local uint32_t scratch[1024];
    bool in_stmt = false;
    strata_status s = STRATA_OK;
    while (p < end && s == STRATA_OK) {
        wal_op op;
        value val;
        if (walrec_decode(&p, end, &op, scratch, &val, why) != 0) {
            s = STRATA_ECORRUPT;
            break;
        }
        bool frees = op.code == WOP_NODE_DELETE || op.code == WOP_NODE_DETACH ||
                     op.code == WOP_REL_DELETE;
        if (as_unit && frees && !in_stmt) {
            s = strata_statement_begin(g);
            in_stmt = s == STRATA_OK;
        }
        strata_id id;
        strata_index idx;
        op.out = &id;
        op.idx_out = &idx;
        if (s == STRATA_OK)
            s = walrec_apply(g, &op);
        value_release(&val);
        if (s)
            *why = strata_errmsg(g);
    }
    if (in_stmt) {
        strata_status e = strata_statement_end(g, s == STRATA_OK);
        if (s == STRATA_OK && e != STRATA_OK)
            *why = strata_errmsg(g);
        s = s ? s : e;
    }
    if (s == STRATA_OK || s == STRATA_ENOMEM)
        return s;
    return STRATA_ECORRUPT;
}

/* The outcome of reading one segment. */
typedef struct seg_scan {
    uint64_t valid_end;   /* bytes of whole, good records (and the header) */
    uint64_t tail_end;    /* torn: one past the cut tail's last byte */
    uint64_t data_end;    /* one past the last non-zero byte */
    uint32_t version;
    uint64_t last_seq;    /* of the last good record; first - 1 when none */
    bool torn;            /* stopped at a cut tail */
    bool corrupt;         /* stopped at damage */
    uint64_t bad_off;
    char why[128];
} seg_scan;

/* Whether the version-1 record at h (left bytes to the end of the file)
   is whole and the one due; if not, sc says why and whether it is torn
   (cut short: a header or body running past the end, or only zeros left)
   or damaged.  Version-1 segments grew with each append, so their end is
   the file's. */
static bool record_v1_whole(const unsigned char *h, size_t left, uint64_t seq, seg_scan *sc)
{
    if (all_zero(h, left)) {
        sc->torn = true;
        snprintf(sc->why, sizeof sc->why, "%zu zero bytes", left);
        return false;
    }
    if (left < WAL_REC_HEADER_V1) {
        sc->torn = true;
        snprintf(sc->why, sizeof sc->why, "a record header is cut short");
        return false;
    }
    uint64_t body = get_le(h, 4), rseq = get_le(h + 4, 8);
    if (get_le(h + 12, 4) != crc32c(0, h, 12)) {
        sc->corrupt = true;
        snprintf(sc->why, sizeof sc->why, "a record header fails its checksum");
        return false;
    }
    if (rseq != seq) {
        sc->corrupt = true;
        snprintf(sc->why, sizeof sc->why, "record %llu where %llu was due",
                 (unsigned long long)rseq, (unsigned long long)seq);
        return false;
    }
    if (body > left - WAL_REC_HEADER_V1) {
        sc->torn = true;
        snprintf(sc->why, sizeof sc->why, "record %llu is cut short", (unsigned long long)seq);
        return false;
    }
    if (get_le(h + 16, 4) != crc32c(0, h + WAL_REC_HEADER_V1, (size_t)body)) {
        sc->corrupt = true;
        snprintf(sc->why, sizeof sc->why, "record %llu fails its checksum",
                 (unsigned long long)seq);
        return false;
    }
    return true;
}

/* Reads segment first, replaying the records after o->snap_seq.  Stops at
   the first torn or damaged record (sc says which and where). */
static strata_status scan_segment(opener *o, strata_graph *g, uint64_t first, uint64_t expect,
                                  seg_scan *sc, uint64_t *replayed)
{
    memset(sc, 0, sizeof *sc);
    char *path = seg_path(o->dir, first);
    if (!path)
        return open_fail(o, STRATA_ENOMEM, "out of memory opening the log");
    unsigned char *buf = NULL;
    size_t len = 0;
    int rc = read_file(path, &buf, &len);
    strata_status s = STRATA_OK;
    if (rc) {
        s = open_fail(o, rc == ENOMEM ? STRATA_ENOMEM : STRATA_EIO, "%s: %s", path,
                      strerror(rc));
        goto done;
    }
    sc->last_seq = first - 1;
    sc->data_end = len;
    if (len < SEG_HEADER || all_zero(buf, SEG_HEADER)) {
        sc->torn = true;   /* cut while being created */
        sc->bad_off = 0;
        sc->tail_end = len;
        snprintf(sc->why, sizeof sc->why, "the segment header is cut short");
        goto done;
    }
    sc->version = (uint32_t)get_le(buf + 16, 4);
    if (memcmp(buf, SEG_MAGIC, 8) != 0 || get_le(buf + 8, 8) != first ||
        sc->version < 1 || sc->version > SEG_VERSION ||
        get_le(buf + 20, 4) != crc32c(0, buf, 20)) {
        sc->corrupt = true;
        sc->bad_off = 0;
        snprintf(sc->why, sizeof sc->why, "the segment header is damaged or of another version");
        goto done;
    }
    if (first != expect) {
        sc->corrupt = true;
        sc->bad_off = 0;
        snprintf(sc->why, sizeof sc->why, "records %llu to %llu are missing",
                 (unsigned long long)expect, (unsigned long long)first - 1);
        goto done;
    }
    size_t off = SEG_HEADER;
    sc->valid_end = off;
    sc->tail_end = len;
    uint64_t seq = first;
    size_t hsize = sc->version == 1 ? WAL_REC_HEADER_V1 : WAL_REC_HEADER;
    while (off < len) {
        const unsigned char *h = buf + off;
        if (sc->version == 1) {
            if (!record_v1_whole(h, len - off, seq, sc))
                break;
        } else if (walrec_check(buf, len, off, seq) != WAL_REC_WHOLE) {
            wal_end e;
            waltail_classify(buf, len, off, seq, &e);
            sc->torn = e.kind == WAL_END_TORN;
            sc->corrupt = e.kind == WAL_END_CORRUPT;
            sc->tail_end = e.tail_end;
            snprintf(sc->why, sizeof sc->why, "%s", e.why);
            break;
        }
        uint64_t body = get_le(h, 4);
        const unsigned char *b = h + hsize;
        if (seq > o->snap_seq) {
            const char *why = NULL;
            strata_status r =
                replay_body(g, b, b + body, sc->version >= SEG_VERSION_UNITS, &why);
            if (r) {
                s = open_fail(o, r, "%s at byte %zu: record %llu does not replay: %s", path, off,
                              (unsigned long long)seq, why ? why : "");
                goto done;
            }
            (*replayed)++;
        }
        off += hsize + (size_t)body;
        sc->valid_end = off;
        sc->last_seq = seq++;
    }
    sc->bad_off = sc->valid_end;
    if (sc->corrupt) {   /* what truncate_corrupt would cut */
        sc->data_end = len;
        while (sc->data_end > sc->valid_end && buf[sc->data_end - 1] == 0)
            sc->data_end--;
    }
done:
    if (buf)
        mem_free(mem_scratch(), buf);
    path_free(path);
    return s;
}

static strata_status cut_segment(opener *o, uint64_t first, uint64_t at)
{
    char *p = seg_path(o->dir, first);
    if (!p)
        return open_fail(o, STRATA_ENOMEM, "out of memory");
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    int rc = fd < 0 ? errno : 0;
    if (!rc && ftruncate(fd, (off_t)at) != 0)
        rc = errno;
    if (!rc)
        rc = io_sync(fd);
    if (fd >= 0)
        close(fd);
    strata_status s = rc ? open_fail(o, STRATA_EIO, "truncating %s: %s", p, strerror(rc))
                         : STRATA_OK;
    path_free(p);
    return s;
}

/* Opens the last segment (of the version written, whole records through
   end) for appending: preallocated again if a cut or a crash left it
   shorter, and synced, so that every record recovered is on the disk (a
   record's synced field counts on it). */
static strata_status open_for_append(opener *o, uint64_t first, int *seg_fd)
{
    char *p = seg_path(o->dir, first);
    if (!p)
        return open_fail(o, STRATA_ENOMEM, "out of memory");
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    int rc = fd < 0 ? errno : 0;
    struct stat st;
    if (!rc && fstat(fd, &st) != 0)
        rc = errno;
    uint64_t size = rc ? 0 : (uint64_t)st.st_size;
    if (!rc && size < o->prealloc) {
        rc = io_prealloc(fd, size, o->prealloc - size);
        size = o->prealloc;
    }
    if (!rc)
        rc = io_sync(fd);
    strata_status s = STRATA_OK;
    if (rc) {
        s = open_fail(o, STRATA_EIO, "%s: opening the log for appending: %s", p, strerror(rc));
        if (fd >= 0)
            close(fd);
    } else {
        *seg_fd = fd;
        o->alloc_end = size;
    }
    path_free(p);
    return s;
}

static strata_status sync_segment(opener *o, uint64_t first)
{
    char *p = seg_path(o->dir, first);
    if (!p)
        return open_fail(o, STRATA_ENOMEM, "out of memory");
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    int rc = fd < 0 ? errno : io_sync(fd);
    if (fd >= 0)
        close(fd);
    strata_status s = rc ? open_fail(o, STRATA_EIO, "%s: syncing: %s", p, strerror(rc))
                         : STRATA_OK;
    path_free(p);
    return s;
}

/* Loads the snapshot and replays the segments; leaves the last segment
   for appending at *seg_size. */
static strata_status recover(opener *o, strata_graph **gp, uint64_t *next_seq, int *seg_fd,
                             uint64_t *seg_first, uint64_t *seg_size, uint64_t *log_bytes)
{
    strata_status s;
    strata_graph *g = NULL;
    if (o->have_snap) {
        char *p = snap_path(o->dir, o->snap_seq);
        if (!p)
            return open_fail(o, STRATA_ENOMEM, "out of memory");
        s = strata_load_ex(p, &g, o->err, o->errlen);
        path_free(p);
    } else {
        s = strata_graph_new(&g);
        if (s)
            open_fail(o, s, "out of memory creating the graph");
    }
    if (s)
        return s;
    /* Segments wholly before the snapshot are obsolete (a checkpoint's
       step 3 did not run). */
    size_t from = 0;
    while (from + 1 < o->nsegs && o->segs[from + 1] <= o->snap_seq + 1) {
        remove_in(o->dir, seg_path(o->dir, o->segs[from]));
        from++;
    }
    uint64_t expect = from < o->nsegs && o->segs[from] <= o->snap_seq + 1 ? o->segs[from]
                                                                          : o->snap_seq + 1;
    uint64_t replayed = 0, last = o->snap_seq, bytes = 0, kept_end = 0;
    uint32_t kept_version = 0;
    *seg_fd = -1;
    for (size_t i = from; i < o->nsegs; i++) {
        seg_scan sc;
        if ((s = scan_segment(o, g, o->segs[i], expect, &sc, &replayed)) != STRATA_OK)
            goto fail;
        bool is_last = i + 1 == o->nsegs;
        if (sc.last_seq > last)
            last = sc.last_seq;
        bytes += sc.valid_end;
        if (sc.torn && is_last) {
            uint64_t size = sc.tail_end > sc.valid_end ? sc.tail_end : sc.valid_end;
            if (o->rep) {
                o->rep->torn_bytes = size - sc.valid_end;
                snprintf(o->rep->message, sizeof o->rep->message,
                         "wal-%016llx.log: a torn tail of %llu bytes at byte %llu (%s) was "
                         "cut; the last record kept is %llu",
                         (unsigned long long)o->segs[i],
                         (unsigned long long)(size - sc.valid_end),
                         (unsigned long long)sc.valid_end, sc.why, (unsigned long long)last);
            }
            if (sc.valid_end < SEG_HEADER) {
                remove_in(o->dir, seg_path(o->dir, o->segs[i]));
                o->nsegs--;
                break;
            }
            if ((s = cut_segment(o, o->segs[i], sc.valid_end)) != STRATA_OK)
                goto fail;
        } else if (sc.torn || sc.corrupt) {
            if (!o->opts || !o->opts->truncate_corrupt) {
                s = open_fail(o, STRATA_ECORRUPT,
                              "%s/wal-%016llx.log at byte %llu: %s (open with truncate_corrupt "
                              "to cut the log there, losing what follows)",
                              o->dir, (unsigned long long)o->segs[i],
                              (unsigned long long)sc.bad_off, sc.why);
                goto fail;
            }
            uint64_t cut = 0;
            for (size_t k = i + 1; k < o->nsegs; k++) {
                char *p = seg_path(o->dir, o->segs[k]);
                struct stat st;
                if (p && stat(p, &st) == 0)
                    cut += (uint64_t)st.st_size;
                remove_in(o->dir, p);
            }
            cut += sc.data_end - sc.valid_end;
            o->nsegs = i + 1;
            if (o->rep) {
                o->rep->truncated_bytes = cut;
                snprintf(o->rep->message, sizeof o->rep->message,
                         "wal-%016llx.log at byte %llu: %s; the log was cut there (%llu bytes); "
                         "the last record kept is %llu",
                         (unsigned long long)o->segs[i], (unsigned long long)sc.bad_off, sc.why,
                         (unsigned long long)cut, (unsigned long long)last);
            }
            if (sc.valid_end < SEG_HEADER) {
                remove_in(o->dir, seg_path(o->dir, o->segs[i]));
                o->nsegs--;
                break;
            }
            if ((s = cut_segment(o, o->segs[i], sc.valid_end)) != STRATA_OK)
                goto fail;
            if (persist_sync_dir(o->dir) != 0) {
                s = open_fail(o, STRATA_EIO, "%s: syncing: %s", o->dir, strerror(errno));
                goto fail;
            }
            kept_version = sc.version;
            kept_end = sc.valid_end;
            break;
        }
        kept_version = sc.version;
        kept_end = sc.valid_end;
        expect = sc.last_seq + 1;
    }
    if (o->nsegs > from && kept_version == SEG_VERSION) {
        if ((s = open_for_append(o, o->segs[o->nsegs - 1], seg_fd)) != STRATA_OK)
            goto fail;
        *seg_first = o->segs[o->nsegs - 1];
        *seg_size = kept_end;
    } else {
        /* No segment, or one of an older version: new commits go to a new,
           preallocated segment (which replaces an older segment left
           without records, since it takes the same name).  The old one is
           synced first: the records recovered from it must be on the disk
           before new records say they are. */
        if (o->nsegs > from && kept_end > SEG_HEADER &&
            (s = sync_segment(o, o->segs[o->nsegs - 1])) != STRATA_OK)
            goto fail;
        int fd = seg_create(o->dir, last + 1, o->prealloc);
        if (fd < 0) {
            s = open_fail(o, STRATA_EIO, "%s: creating a log segment: %s", o->dir,
                          strerror(errno));
            goto fail;
        }
        *seg_fd = fd;
        *seg_first = last + 1;
        *seg_size = SEG_HEADER;
        o->alloc_end = o->prealloc > SEG_HEADER ? o->prealloc : SEG_HEADER;
    }
    *next_seq = last + 1;
    *log_bytes = bytes;
    if (o->rep) {
        o->rep->snapshot_seq = o->snap_seq;
        o->rep->records_replayed = replayed;
        o->rep->last_seq = last;
    }
    *gp = g;
    return STRATA_OK;
fail:
    strata_graph_free(&g);
    return s;
}

/* An empty directory, or one holding a database's files: opening any
   other directory would scatter a database among someone's files. */
static bool looks_like_database(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return true;   /* the open that follows reports why */
    bool empty = true, ours = false;
    struct dirent *e;
    uint64_t x;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        empty = false;
        if (!strcmp(e->d_name, "LOCK") || parse_hex_name(e->d_name, "wal-", ".log", &x) ||
            parse_hex_name(e->d_name, "snapshot-", "", &x))
            ours = true;
    }
    closedir(d);
    return empty || ours;
}

/* The log's size past which a checkpoint starts: the caller's, or 64 MiB
   or the snapshot's size, whichever is larger. */
static uint64_t checkpoint_threshold(const opener *o)
{
    if (o->opts->checkpoint_bytes)
        return o->opts->checkpoint_bytes;
    uint64_t snap_bytes = 0;
    if (o->have_snap) {
        char *sp = snap_path(o->dir, o->snap_seq);
        struct stat st;
        if (sp && stat(sp, &st) == 0)
            snap_bytes = (uint64_t)st.st_size;
        path_free(sp);
    }
    return snap_bytes > DEFAULT_CHECKPOINT_BYTES ? snap_bytes : DEFAULT_CHECKPOINT_BYTES;
}

strata_status strata_open(const char *path, const strata_open_options *opts, strata_graph **out)
{
    static const strata_open_options defaults;
    if (!out)
        return STRATA_EINVAL;
    *out = NULL;
    if (!opts)
        opts = &defaults;
    opener o = { .dir = path, .opts = opts, .rep = opts->report, .err = opts->err,
                 .errlen = opts->err ? opts->errlen : 0 };
    if (o.errlen)
        o.err[0] = '\0';
    if (o.rep)
        memset(o.rep, 0, sizeof *o.rep);
    if (!path || !*path)
        return open_fail(&o, STRATA_EINVAL, "strata_open: no path");
    if (opts->sync > STRATA_SYNC_OFF)
        return open_fail(&o, STRATA_EINVAL, "strata_open: unknown sync mode %d", (int)opts->sync);
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return open_fail(&o, STRATA_EIO, "%s: creating the database directory: %s", path,
                         strerror(errno));
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return open_fail(&o, STRATA_EIO, "%s is not a database directory", path);
    if (!looks_like_database(path))
        return open_fail(&o, STRATA_EIO, "%s holds other files and no database: not a database "
                         "directory", path);
    char *lp = path_join(path, "LOCK");
    if (!lp)
        return open_fail(&o, STRATA_ENOMEM, "out of memory");
    int lock_fd = open(lp, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    path_free(lp);
    if (lock_fd < 0)
        return open_fail(&o, STRATA_EIO, "%s/LOCK: %s", path, strerror(errno));
    if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(lock_fd);
        return open_fail(&o, STRATA_EIO, "%s is in use by another process (%s)", path,
                         e == EWOULDBLOCK ? "its lock is held" : strerror(e));
    }
    strata_graph *g = NULL;
    struct wal *w = NULL;
    int seg_fd = -1;
    uint64_t next_seq = 1, seg_first = 1, seg_size = 0, log_bytes = 0;
    strata_status s = scan_dir(&o);
    uint64_t checkpoint_bytes = s == STRATA_OK ? checkpoint_threshold(&o) : 0;
    o.prealloc = prealloc_for(checkpoint_bytes);
    if (s == STRATA_OK)
        s = recover(&o, &g, &next_seq, &seg_fd, &seg_first, &seg_size, &log_bytes);
    if (s == STRATA_OK && !(w = mem_calloc(mem_scratch(), sizeof *w)))
        s = open_fail(&o, STRATA_ENOMEM, "out of memory");
    if (s == STRATA_OK && !(w->dir = mem_alloc(mem_scratch(), strlen(path) + 1)))
        s = open_fail(&o, STRATA_ENOMEM, "out of memory");
    mem_free(mem_scratch(), o.segs);
    if (s) {
        if (w)
            mem_free(mem_scratch(), w);
        if (seg_fd >= 0)
            close(seg_fd);
        strata_graph_free(&g);
        close(lock_fd);
        return s;
    }
    memcpy(w->dir, path, strlen(path) + 1);
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&w->mu, &a);
    pthread_mutexattr_destroy(&a);
    pthread_mutex_init(&w->fd_mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->lock_fd = lock_fd;
    w->seg_fd = seg_fd;
    w->seg_first = seg_first;
    w->seg_size = seg_size;
    w->next_seq = next_seq;
    w->snap_seq = o.snap_seq;
    w->log_bytes = log_bytes;
    w->sync = opts->sync;
    w->checkpoint_bytes = checkpoint_bytes;
    w->prealloc = o.prealloc;
    w->alloc_end = o.alloc_end;
    atomic_store(&w->synced_seq, next_seq - 1);   /* open_for_append / seg_create synced */
    for (int k = 0; k < 3; k++)
        w->tokens_logged[k] = intern_count(g->cat->tokens[k]);
    if (w->sync == STRATA_SYNC_NORMAL)
        w->thread_on = pthread_create(&w->thread, NULL, sync_thread, w) == 0;
    if (w->sync == STRATA_SYNC_NORMAL && !w->thread_on)
        w->sync = STRATA_SYNC_FULL;   /* no thread: every commit syncs instead */
    g->wal = w;
    *out = g;
    return STRATA_OK;
}

/* ---- checkpoints ------------------------------------------------------------- */

static void remove_obsolete(struct wal *w, uint64_t snap_seq, uint64_t seg_first)
{
    DIR *d = opendir(w->dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t x;
        if ((parse_hex_name(e->d_name, "wal-", ".log", &x) && x < seg_first) ||
            (parse_hex_name(e->d_name, "snapshot-", "", &x) && x < snap_seq))
            remove_in(w->dir, path_join(w->dir, e->d_name));
    }
    closedir(d);
    persist_sync_dir(w->dir);
}

strata_status strata_checkpoint(strata_graph *g)
{
    if (!g)
        return STRATA_EINVAL;
    struct wal *w = g->wal;
    if (!w)
        return graph_fail(g, STRATA_EINVAL, "this graph has no path: nothing to checkpoint");
    pthread_mutex_lock(&w->mu);
    if (w->checkpointing || unit_open(g)) {
        pthread_mutex_unlock(&w->mu);
        return graph_fail(g, STRATA_EINVAL, "%s", w->checkpointing
                                                      ? "a checkpoint is running"
                                                      : "a statement or transaction is open");
    }
    /* Step 1: the records so far go to the old segments, synced; new
       commits to a new segment; the view is exactly record S. */
    uint64_t S = w->next_seq - 1;
    strata_status s = STRATA_OK;
    /* What a failed append left goes first: a segment that is not the
       last must end in zeros. */
    int rc = clean_tail(w);
    if (!rc)
        rc = io_sync(w->seg_fd);
    if (!rc)
        atomic_store(&w->synced_seq, S);
    if (!rc && w->seg_size > SEG_HEADER) {
        int fd = seg_create(w->dir, S + 1, w->prealloc);
        if (fd < 0) {
            rc = errno;
        } else {
            pthread_mutex_lock(&w->fd_mu);
            close(w->seg_fd);
            w->seg_fd = fd;
            w->seg_first = S + 1;
            w->seg_size = SEG_HEADER;
            w->alloc_end = w->prealloc;
            w->tail_dirty = false;
            w->dirty = false;
            pthread_mutex_unlock(&w->fd_mu);
        }
    }
    strata_view *v = NULL;
    if (rc)
        s = graph_fail(g, STRATA_EIO, "checkpoint of %s: starting a log segment: %s", w->dir,
                       strerror(rc));
    else if ((s = strata_snapshot(g, &v)) == STRATA_OK) {
        w->checkpointing = true;
        w->log_bytes = 0;
    }
    pthread_mutex_unlock(&w->mu);
    if (s || STOP_AFTER(1)) {
        strata_view_release(&v);
        if (!s)
            w->checkpointing = false;
        return s;
    }
    /* Step 2: the snapshot, while writers go on. */
    char *sp = snap_path(w->dir, S);
    if (!sp)
        s = graph_fail(g, STRATA_ENOMEM, "out of memory checkpointing");
    else if (S != w->snap_seq || access(sp, F_OK) != 0) {
        s = strata_save_view(v, sp);
        if (s)
            graph_fail(g, s, "checkpoint: %s", strata_view_errmsg(v));
    }
    path_free(sp);
    struct stat st;
    uint64_t snap_bytes = 0;
    strata_view_release(&v);
    if (s == STRATA_OK && !STOP_AFTER(2)) {
        /* Step 3: what the snapshot made obsolete. */
        remove_obsolete(w, S, S + 1);
        sp = snap_path(w->dir, S);
        if (sp && stat(sp, &st) == 0)
            snap_bytes = (uint64_t)st.st_size;
        path_free(sp);
    }
    pthread_mutex_lock(&w->mu);
    if (s == STRATA_OK) {
        w->snap_seq = S;
        if (snap_bytes > w->checkpoint_bytes)
            w->checkpoint_bytes = snap_bytes;
    }
    w->checkpointing = false;
    pthread_mutex_unlock(&w->mu);
    return s;
}

/* ---- closing ---------------------------------------------------------------- */

strata_status wal_close(strata_graph *g)
{
    struct wal *w = g->wal;
    if (!w)
        return STRATA_OK;
    if (w->thread_on) {
        pthread_mutex_lock(&w->fd_mu);
        w->stopping = true;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->fd_mu);
        pthread_join(w->thread, NULL);
    }
    int rc = io_sync(w->seg_fd);
    close(w->seg_fd);
    close(w->lock_fd);   /* releases the flock */
    strata_status s = rc ? graph_fail(g, STRATA_EIO, "closing the log of %s: %s", w->dir,
                                      strerror(rc))
                         : STRATA_OK;
    walbuf_free(&w->cap);
    walbuf_free(&w->tok);
    pthread_mutex_destroy(&w->mu);
    pthread_mutex_destroy(&w->fd_mu);
    pthread_cond_destroy(&w->cv);
    path_free(w->dir);
    mem_free(mem_scratch(), w);
    g->wal = NULL;
    return s;
}

strata_status strata_close(strata_graph **gp)
{
    if (!gp || !*gp)
        return STRATA_EINVAL;
    strata_status s = wal_close(*gp);
    strata_graph_free(gp);
    return s;
}

bool strata_is_durable(strata_graph *g) { return g && g->wal; }

strata_status strata_log_stats_get(strata_graph *g, strata_log_stats *out)
{
    if (!g || !g->wal || !out)
        return STRATA_EINVAL;
    struct wal *w = g->wal;
    pthread_mutex_lock(&w->mu);
    out->log_bytes = w->log_bytes;
    out->snapshot_seq = w->snap_seq;
    out->last_seq = w->next_seq - 1;
    pthread_mutex_unlock(&w->mu);
    return STRATA_OK;
}
