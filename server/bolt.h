/*
 * One Bolt connection's protocol state, apart from sockets: the transport
 * (server.c, or a fuzz target) hands it the 20 handshake bytes, then each
 * dechunked message; replies are appended, already chunked, to c->out and
 * handed to c->flush whenever enough has gathered.
 *
 * States (Bolt's server state machine):
 *   NEGOTIATION --handshake--> CONNECTED --HELLO--> READY (4.4, 5.0) or
 *   AUTHENTICATION (5.1+) --LOGON--> READY
 *   READY --RUN--> STREAMING --PULL/DISCARD (all)--> READY
 *   READY --BEGIN--> TX_READY --RUN--> TX_STREAMING --PULL all--> TX_READY
 *   TX_* --COMMIT/ROLLBACK--> READY;  READY --LOGOFF--> AUTHENTICATION
 *   any --failure--> FAILED: everything but RESET and GOODBYE is IGNORED
 *   a RESET queued behind other messages makes those IGNORED (interrupted);
 *   RESET --> READY (an open transaction rolled back); GOODBYE --> closed.
 */
#ifndef SERVER_BOLT_H
#define SERVER_BOLT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/auth.h"
#include "server/packstream.h"
#include "strata.h"

#define BOLT_MAX_OPEN_RESULTS 16   /* results open at once in a transaction */

typedef struct bolt_conn bolt_conn;

/* What every connection shares. */
typedef struct bolt_env {
    strata_graph *g;
    /* The writer: the connection allowed to call the graph handle
       (strata_query, begin, commit, rollback), or NULL.  An explicit write
       transaction holds it from BEGIN to COMMIT or ROLLBACK, across
       messages that different threads may process, so it is a token
       (owner, guarded by writer_lock) rather than a mutex held. */
    pthread_mutex_t writer_lock;
    const bolt_conn *writer_owner;
    /* Called (without writer_lock held) each time the writer comes free,
       so the transport can retry the connections waiting for it. */
    void (*writer_freed)(void *arg);
    void *writer_freed_arg;
    const auth_db *auth;      /* NULL: no authentication */
    unsigned tx_timeout_ms;   /* longest wait for, or hold of, the writer */
    size_t max_result_buffer; /* bytes of replies held before a flush fails */
    const char *address;      /* host:port, for ROUTE */
    atomic_uint_fast64_t next_id;
    atomic_uint_fast64_t commits;
} bolt_env;

typedef enum bolt_state {
    BOLT_NEGOTIATION,
    BOLT_CONNECTED,
    BOLT_AUTHENTICATION,
    BOLT_READY,
    BOLT_STREAMING,
    BOLT_TX_READY,
    BOLT_TX_STREAMING,
    BOLT_FAILED,
    BOLT_DEFUNCT,
} bolt_state;

/* A canned answer to a probing query (dbms.components, SHOW DATABASES). */
typedef struct canned {
    size_t ncols, nrows;
    const char **names;
    strata_value **cells;   /* nrows * ncols */
    size_t next;
} canned;

typedef struct bolt_result {
    int64_t qid;
    strata_result *r;       /* NULL for a canned answer */
    canned *c;
    bool pending_row;       /* a row fetched ahead (to know has_more) not sent yet */
    const strata_value *const *row;
    bool on_view;           /* ran on a view: type "r" */
    bool autocommit;
} bolt_result;

/* Sends c->out's bytes; -1 when the peer is gone (the connection ends). */
typedef int (*bolt_flush_fn)(bolt_conn *c);

struct bolt_conn {
    bolt_env *env;
    uint64_t id;
    char peer[64];
    int major, minor;
    bool utc_patch;
    bolt_state state;
    char user[130];
    pack_opts opts;
    pack_buf out;
    bolt_flush_fn flush;
    void *transport;

    /* the transaction */
    bool in_tx, tx_write, holds_writer, tx_timed_out;
    /* set by the transport when this connection has waited for the writer
       for tx_timeout_ms: the message waiting fails (LockClientStopped) */
    bool writer_wait_over;
    strata_view *tx_view;           /* a read transaction's view */
    bolt_result results[BOLT_MAX_OPEN_RESULTS];
    size_t nresults;
    int64_t next_qid;

    /* RESETs already received and queued behind the current message */
    unsigned resets_pending;

    /* what a RESET from another thread interrupts (guarded by lock) */
    pthread_mutex_t lock;
    bool busy, busy_on_writer;
    strata_view *busy_view;
    strata_result *busy_result;
    atomic_bool cancel;
    strata_cancel *stop;       /* watched by this connection's view queries
                                  and their results; requested on RESET */
};

void bolt_conn_init(bolt_conn *c, bolt_env *env, const char *peer);
/* Rolls back and frees whatever the connection holds. */
void bolt_conn_close(bolt_conn *c);
/* The handshake: in holds the magic and four proposals; out receives the
   reply (zero when no version is common: the connection then ends).
   -1 for a wrong magic. */
int bolt_handshake(bolt_conn *c, const uint8_t in[20], uint8_t out[4]);
/* One dechunked message; 0 to go on, -1 to end the connection (GOODBYE,
   a malformed message, a failed authentication) with the reason logged,
   BOLT_WAIT when it needs the writer another connection holds: nothing was
   answered, and the transport hands the same message again once the writer
   is free (env->writer_freed) or, with writer_wait_over set, when the wait
   has lasted tx_timeout_ms. */
#define BOLT_WAIT 1
int bolt_message(bolt_conn *c, const uint8_t *msg, size_t len);
/* Whether msg is a RESET (the transport counts those queued). */
bool bolt_is_reset(const uint8_t *msg, size_t len);
/* From another thread: interrupt what the connection is running. */
void bolt_interrupt(bolt_conn *c);
/* Writer held past the timeout by an idle transaction: roll it back. */
void bolt_expire_tx(bolt_conn *c);

#endif
