/*
 * wal — the write-ahead log of a graph opened on a path (docs/FORMAT.md).
 *
 * What is logged.  Each write call on a logged graph is captured before it
 * runs, as the call itself (an opcode and its arguments: the logical
 * change), into the log's capture buffer; a call that fails takes its
 * bytes back out.  Replaying the captured calls through the same write
 * functions in the same order reproduces the graph exactly, ids included,
 * since slot reuse is deterministic (ARCHITECTURE.md, "Statements").  A
 * statement that rolls back takes back its calls too, which is exact for
 * the same reason: rollback restores the free lists.
 *
 * When a record is written.  At each commit: a write call outside any
 * statement or transaction runs as an implicit statement; a statement
 * outside a transaction commits in strata_statement_end; a transaction in
 * strata_commit.  The commit appends one record — the tokens interned
 * since the last record, then the captured calls — under the graph's lock,
 * so before new views see the commit and before the call returns; a
 * failed append rolls the commit back and returns STRATA_EIO.
 *
 * Locking.  Every public call that writes or ends a unit takes the log's
 * (recursive) mutex first, then runs the raw call with this thread marked
 * as inside (wal_active() is then false for this graph), so the capture
 * buffer and the file see one writer at a time; the order is always the
 * log's mutex, then the graph's.
 *
 * Invariants:
 *   1. The capture buffer holds exactly the calls of the open unit that
 *      succeeded and were not rolled back, in order.
 *   2. Records on disk carry consecutive sequence numbers; the snapshot
 *      named snapshot-S holds every record up to S.
 *   3. tokens_logged[k] tokens of kind k are named by the snapshot or a
 *      record already written.
 */
#ifndef STRATA_CORE_WAL_H
#define STRATA_CORE_WAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strata.h"
#include "core/graph_impl.h"

/* The logged calls.  Codes are part of the file format (FORMAT.md). */
#define WAL_OPS(X)                                                   \
    X(WOP_TOKEN, 1)          /* kind, id, name */                  \
    X(WOP_NODE_CREATE, 2)    /* n, labels */                       \
    X(WOP_NODE_DELETE, 3)    /* id */                              \
    X(WOP_NODE_DETACH, 4)    /* id */                              \
    X(WOP_LABEL_ADD, 5)      /* id, label */                       \
    X(WOP_LABEL_REMOVE, 6)   /* id, label */                       \
    X(WOP_REL_CREATE, 7)     /* start, end, type */                \
    X(WOP_REL_DELETE, 8)     /* id */                              \
    X(WOP_NODE_SET, 9)       /* id, key, value (null: remove) */   \
    X(WOP_REL_SET, 10)       /* id, key, value (null: remove) */   \
    X(WOP_INDEX_CREATE, 11)  /* kind, on_rels, token, keys, name */ \
    X(WOP_INDEX_DROP, 12)    /* name */                            \
    /* units without an operand: begin/end of statements and txns */ \
    X(WOP_STMT_BEGIN, 13)                                          \
    X(WOP_STMT_END, 14)                                            \
    X(WOP_BEGIN, 15)                                               \
    X(WOP_COMMIT, 16)                                              \
    X(WOP_ROLLBACK, 17)

typedef enum wal_opcode {
#define WAL_OP_ENUM(name, code) name = code,
    WAL_OPS(WAL_OP_ENUM)
#undef WAL_OP_ENUM
} wal_opcode;

/* One call, decoded or about to be encoded.  Borrowed pointers. */
typedef struct wal_op {
    wal_opcode code;
    uint64_t id, a, b;          /* id; start/end; label/key/type in a */
    const uint32_t *list;       /* NODE_CREATE labels, INDEX_CREATE keys */
    size_t n;
    const value *val;           /* *_SET; NULL or null: remove */
    const char *name;           /* INDEX_*; TOKEN */
    size_t name_len;
    uint8_t kind;               /* INDEX_CREATE kind; TOKEN kind */
    bool flag;                  /* INDEX_CREATE on_rels; STMT_END commit */
    uint64_t *out;              /* NODE_CREATE, REL_CREATE */
    uint32_t *idx_out;          /* INDEX_CREATE */
} wal_op;

struct wal;

/* The thread's graph whose raw calls are running (see Locking above). */
extern _Thread_local const strata_graph *wal_inside;

static inline bool wal_active(const strata_graph *g)
{
    return g && g->wal && wal_inside != g;
}

/* Runs op on a logged graph: takes the log's mutex, captures the call
   (when it changes the graph), runs it raw, takes the capture back if it
   failed, and commits an implicit statement when no unit was open. */
strata_status wal_call(strata_graph *g, const wal_op *op);

/* Hooks of core/txn.c, called under the graph's lock (and the log's
   mutex). */
/* Appends the open unit's record; STRATA_EIO / STRATA_ENOMEM (message set
   on g) when it could not be made durable: the caller rolls back. */
strata_status wal_commit(strata_graph *g);
/* The capture buffer back to the start of the open statement (stmt true)
   or empty. */
void wal_discard(strata_graph *g, bool stmt);
/* Remembers where the statement's calls begin. */
void wal_stmt_mark(strata_graph *g);

/* Closes the log (syncing it) and frees it; g->wal is NULL after. */
strata_status wal_close(strata_graph *g);

/* ---- records (core/wal_record.c) ----------------------------------------- */

typedef struct wal_buf {
    unsigned char *p;
    size_t len, cap;
} wal_buf;

/* Appends op's encoding; -1 when out of memory (buffer unchanged). */
int walrec_encode(wal_buf *b, const wal_op *op);
/* Decodes one op at *p (< end); borrowed pointers into the bytes and into
   scratch (labels/keys, value owned by *val_out).  0, or -1 with a
   reason in *why. */
int walrec_decode(const unsigned char **p, const unsigned char *end, wal_op *op,
                  uint32_t *scratch, value *val_out, const char **why);
/* Runs op on g through the public API (raw: the caller made sure). */
strata_status walrec_apply(strata_graph *g, const wal_op *op);
void walbuf_free(wal_buf *b);

/* ---- where the log ends (core/wal_tail.c) -------------------------------- */

#define WAL_SEG_HEADER 24        /* magic 8, first seq 8, version 4, crc 4 */
#define WAL_REC_HEADER_V1 20     /* length 4, seq 8, header crc 4, body crc 4 */
#define WAL_REC_HEADER 24        /* length 4, seq 8, lag 4, header crc 4, body crc 4 */
#define WAL_REC_MAX_BODY (1u << 30)
#define WAL_SECTOR 512           /* what a disk writes whole or not at all */

typedef enum wal_rec_check {
    WAL_REC_WHOLE,        /* header and body check, the number is the one due */
    WAL_REC_SHORT,        /* the header or the body runs past the end */
    WAL_REC_BAD_HEADER,   /* fails its checksum, or names another number */
    WAL_REC_BAD_BODY      /* the header checks, the body does not */
} wal_rec_check;

/* Checks the version-2 record at buf[off] (off <= len) against seq. */
wal_rec_check walrec_check(const unsigned char *buf, size_t len, size_t off, uint64_t seq);
/* Whether a version-2 record header's own checksum holds. */
bool walrec_header_checks(const unsigned char *h);

typedef enum wal_end_kind { WAL_END_CLEAN, WAL_END_TORN, WAL_END_CORRUPT } wal_end_kind;

typedef struct wal_end {
    wal_end_kind kind;
    size_t tail_end;   /* torn: one past the interrupted write's last byte */
    char why[128];
} wal_end;

/* What follows the whole records of a version-2 segment: buf[0, len) is
   the file, off where its whole records end, seq the number due there
   (wal_tail.c states the rule). */
void waltail_classify(const unsigned char *buf, size_t len, size_t off, uint64_t seq,
                      wal_end *out);

#ifdef STRATA_TESTING
/* I/O fault injection: the k-th log write / fsync / preallocation from
   now (k >= 1) fails with errno err, and every later one until cleared. */
typedef enum wal_fault_point {
    WAL_FAULT_WRITE,
    WAL_FAULT_SYNC,
    WAL_FAULT_PREALLOC,
    WAL_FAULT_NPOINTS
} wal_fault_point;
void wal_fault_at(wal_fault_point p, long k, int err);
void wal_fault_clear(void);
/* Log fsyncs done since the process started (every mode, every path). */
long wal_sync_count(void);
/* The sequence number every record up to which is on the disk. */
uint64_t wal_synced_seq(const strata_graph *g);
/* Checkpoint steps: stop (as a crash would) after step k (1: new segment,
   2: snapshot written, 3: old files removed); 0 runs to the end. */
void wal_checkpoint_stop_after(int k);
#endif

#endif
