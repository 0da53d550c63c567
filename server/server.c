/*
 * `strata serve`: listens, multiplexes the connections, and feeds the
 * protocol (bolt.c) whole messages on a pool of --threads worker threads.
 *
 * Threads:
 *   - --threads workers, each waiting (epoll) on its own set of idle
 *     connections, armed one-shot.  A connection is given at accept to the
 *     worker with the fewest, and that worker answers it from then on: it
 *     reads what has arrived, answers every whole message, sends the
 *     replies and arms the connection again.  So any number of connections
 *     (up to --max-connections) share N threads, an idle one holds none,
 *     and a request costs one wake-up of a thread whose caches hold the
 *     connection (a shared set handed each request to the next thread in
 *     line: 5-9 us more CPU per request, measured).
 *   - a worker busy in one turn for LONG_TURN_MS (a long query, a client
 *     slow to read) has its other idle connections moved by the watchdog to
 *     a worker that is not busy, so they do not wait behind it (parked ones
 *     stay: the writer coming free puts them on the shared run queue).
 *   - the listening socket and an eventfd are in every worker's set
 *     (EPOLLEXCLUSIVE: one worker wakes); the eventfd is written when a
 *     connection goes on the shared run queue, which every worker looks at
 *     before waiting.
 *   - a message that needs the writer while another connection holds it
 *     (bolt_message says BOLT_WAIT) parks its connection: no worker waits.
 *     When the writer comes free every parked connection goes on the run
 *     queue; one parked for --tx-timeout goes with its wait over, and its
 *     message fails (LockClientStopped).  A parked connection stays armed,
 *     so a RESET or a close reaches it.
 *   - a watchdog looks, every 20 ms, at the sockets of connections busy in
 *     the engine (a RESET waiting there interrupts the running query), and
 *     every 100 ms at idle ones (idle, login and transaction time limits,
 *     and the moves above).
 *   - the main thread waits for SIGINT/SIGTERM, then closes everything.
 *
 * A connection's state is handed between threads under the server lock
 * (its `where`), which orders every worker's use of it after the last.
 * Connections live in slots that are reused, never freed while serving;
 * an event names slot and generation, so one that arrives for a closed
 * connection is recognised and dropped.
 *
 * Limits, each ending only the connection that breaks it, with a log line:
 * message size (--max-message), reply bytes buffered at once, idle time
 * (--idle-timeout), the writer held by an idle transaction (--tx-timeout:
 * rolled back, the client told on its next message), malformed bytes.
 */
#include "server/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/auth.h"
#include "server/bolt.h"
#include "server/log.h"
#include "strata.h"

typedef struct options {
    const char *path, *listen, *auth, *log;
    unsigned threads, max_connections, idle_s, tx_timeout_s;
    size_t max_message;
    bool quiet;
} options;

/* Where a connection is; changed only under the server lock. */
typedef enum conn_where {
    CONN_IDLE,      /* armed in epoll, waiting for bytes */
    CONN_QUEUED,    /* on the run queue */
    CONN_RUNNING,   /* a worker has it */
    CONN_PARKED,    /* waiting for the writer (and armed, for a RESET or a close) */
    CONN_DEAD,      /* closed; its slot free */
} conn_where;

/* One connection: its socket, its protocol state, its input. */
typedef struct conn {
    uint32_t slot, gen;        /* what its epoll events name */
    unsigned home;             /* the worker whose epoll set holds it (server lock) */
    int fd;
    bolt_conn bolt;
    bool handshaken;
    uint8_t *in;
    size_t len, cap;
    size_t scanned;            /* input bytes already scanned for RESETs */

    /* guarded by the server lock */
    conn_where where;
    int64_t connected_ms;      /* when accepted: authentication is timed from here */
    int64_t since_ms;          /* idle since (the end of its last turn) */
    int64_t wait_since_ms;     /* waiting for the writer since, or 0 */
    const char *close_why;     /* the watchdog's reason to close it, or NULL */
    bool expire_tx;            /* its transaction held the writer idle too long */
    bool wait_over;            /* parked for --tx-timeout */
    struct conn *prev, *next;  /* the registry */
    struct conn *wprev, *wnext;/* the connections parked for the writer */
    struct conn *qnext;        /* the run queue, or the free slots */
} conn;

/* A worker thread and its epoll set. */
typedef struct pool_worker {
    struct server *s;
    unsigned index;
    int epoll_fd;
    unsigned nconns;           /* connections at home here */
    int64_t busy_since_ms;     /* in a turn since, or 0 (server lock) */
    pthread_t thread;
} pool_worker;

#define LONG_TURN_MS 100

typedef struct server {
    options o;
    bolt_env env;
    int listen_fd, wake_fd;    /* wake_fd: an eventfd, written when work is queued */
    pool_worker *workers;      /* --threads of them */
    char address[80];
    pthread_mutex_t lock;      /* guards the registry, queues and each conn's `where` */
    bool workers_stop;         /* the workers and the watchdog end */
    conn *conns;
    unsigned nconns;
    conn *qhead, *qtail;       /* the run queue */
    conn *parked_head, *parked_tail;
    conn **slots;              /* --max-connections of them, made when first used */
    uint32_t nslots;
    conn *free_slots;
} server;

#define EV_LISTEN UINT64_MAX
#define EV_WAKE (UINT64_MAX - 1)

/* Set by SIGINT/SIGTERM, read by every thread: a lock-free atomic, safe
   in a signal handler. */
static atomic_bool stopping;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&stopping, true);
}

/* ---- options ---- */

static int usage(void)
{
    fprintf(stderr,
            "usage: strata serve [PATH] [--listen ADDR:PORT] [--auth FILE] [--threads N]\n"
            "                    [--quiet] [--log FILE] [--max-connections N]\n"
            "                    [--max-message BYTES] [--idle-timeout SECONDS]\n"
            "                    [--tx-timeout SECONDS]\n");
    return 2;
}

static bool parse_count(const char *s, unsigned long long lo, unsigned long long hi,
                        unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi || s[0] == '-')
        return false;
    *out = v;
    return true;
}

static int parse_options(int argc, char **argv, options *o)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    *o = (options){.listen = "127.0.0.1:7687", .threads = (unsigned)(cores > 0 ? 2 * cores : 4),
                   .max_connections = 256, .idle_s = 600, .tx_timeout_s = 30,
                   .max_message = 16u << 20};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        unsigned long long v;
        bool has = i + 1 < argc;
        if (strcmp(a, "--listen") == 0 && has) {
            o->listen = argv[++i];
        } else if (strcmp(a, "--auth") == 0 && has) {
            o->auth = argv[++i];
        } else if (strcmp(a, "--log") == 0 && has) {
            o->log = argv[++i];
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (strcmp(a, "--threads") == 0 && has && parse_count(argv[++i], 1, 4096, &v)) {
            o->threads = (unsigned)v;
        } else if (strcmp(a, "--max-connections") == 0 && has &&
                   parse_count(argv[++i], 1, 100000, &v)) {
            o->max_connections = (unsigned)v;
        } else if (strcmp(a, "--max-message") == 0 && has &&
                   parse_count(argv[++i], 1024, 1u << 30, &v)) {
            o->max_message = (size_t)v;
        } else if (strcmp(a, "--idle-timeout") == 0 && has &&
                   parse_count(argv[++i], 1, 86400 * 7, &v)) {
            o->idle_s = (unsigned)v;
        } else if (strcmp(a, "--tx-timeout") == 0 && has &&
                   parse_count(argv[++i], 1, 86400, &v)) {
            o->tx_timeout_s = (unsigned)v;
        } else if (a[0] != '-' && !o->path) {
            o->path = a;
        } else {
            fprintf(stderr, "strata serve: bad option '%s'\n", a);
            return usage();
        }
    }
    return 0;
}

/* ---- the listening socket ---- */

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) ||
               (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

static void describe(const struct sockaddr *sa, char *buf, size_t cap)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
        port = ntohs(s4->sin_port);
        snprintf(buf, cap, "%s:%d", host, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
        port = ntohs(s6->sin6_port);
        snprintf(buf, cap, "[%s]:%d", host, port);
    } else {
        snprintf(buf, cap, "?");
    }
}

/* Opens the socket for "host:port" or "[v6]:port"; -1 with a message. */
static int open_listener(server *s)
{
    char host[256];
    const char *colon = strrchr(s->o.listen, ':');
    if (!colon || (size_t)(colon - s->o.listen) >= sizeof host) {
        fprintf(stderr, "strata serve: --listen takes ADDR:PORT, not '%s'\n", s->o.listen);
        return -1;
    }
    memcpy(host, s->o.listen, (size_t)(colon - s->o.listen));
    host[colon - s->o.listen] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') {
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai;
    int err = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
    if (err) {
        fprintf(stderr, "strata serve: --listen %s: %s\n", s->o.listen, gai_strerror(err));
        return -1;
    }
    if (!is_loopback(ai->ai_addr) && !s->o.auth) {
        fprintf(stderr, "strata serve: --listen %s is not a loopback address: it needs --auth "
                        "FILE (users from strata passwd)\n", s->o.listen);
        freeaddrinfo(ai);
        return -1;
    }
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 128) != 0) {
        fprintf(stderr, "strata serve: --listen %s: %s\n", s->o.listen, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    getsockname(fd, (struct sockaddr *)&bound, &blen);
    describe((struct sockaddr *)&bound, s->address, sizeof s->address);
    s->listen_fd = fd;
    return 0;
}

/* ---- sending and framing ---- */

static int send_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int flush_conn(bolt_conn *b)
{
    conn *c = b->transport;
    int rc = send_all(c->fd, b->out.data, b->out.len);
    pack_reset(&b->out);
    return rc;
}

/* Finds the next whole message at the start of c->in: 1 with it copied
   (dechunked) into *msg, 0 when more bytes are needed, -1 when it breaks
   the size limit, 2 after a NOOP keep-alive (*used: its bytes).
   *used: input bytes it took. */
static int next_message(const uint8_t *in, size_t len, size_t max, pack_buf *msg, size_t *used)
{
    size_t at = 0;
    pack_reset(msg);
    for (;;) {
        if (len - at < 2)
            return 0;
        size_t n = (size_t)in[at] << 8 | in[at + 1];
        if (n == 0) {
            at += 2;
            *used = at;
            return msg->len == 0 ? 2 : 1;
        }
        if (msg->len + n > max)
            return -1;
        if (len - at - 2 < n)
            return 0;
        pack_bytes(msg, in + at + 2, n);
        if (msg->failed)
            return -1;
        at += 2 + n;
    }
}

/* Counts the RESETs among the whole messages not yet scanned. */
static void scan_resets(server *s, conn *c)
{
    pack_buf msg = {0};
    for (;;) {
        size_t used = 0;
        int got = next_message(c->in + c->scanned, c->len - c->scanned, s->o.max_message, &msg,
                               &used);
        if (got != 1 && got != 2)
            break;
        if (got == 1 && bolt_is_reset(msg.data, msg.len))
            c->bolt.resets_pending++;
        c->scanned += used;
    }
    pack_free(&msg);
}

static void consume(conn *c, size_t used)
{
    memmove(c->in, c->in + used, c->len - used);
    c->len -= used;
    c->scanned = c->scanned > used ? c->scanned - used : 0;
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- the queues (server lock held) ---- */

static void enqueue(server *s, conn *c)
{
    c->where = CONN_QUEUED;
    c->qnext = NULL;
    if (s->qtail)
        s->qtail->qnext = c;
    else
        s->qhead = c;
    s->qtail = c;
    uint64_t one = 1;
    if (write(s->wake_fd, &one, sizeof one) < 0) {
        /* the counter is at its limit: a worker is due to wake anyway */
    }
}

static void park(server *s, conn *c)
{
    c->where = CONN_PARKED;
    c->wnext = NULL;
    c->wprev = s->parked_tail;
    if (s->parked_tail)
        s->parked_tail->wnext = c;
    else
        s->parked_head = c;
    s->parked_tail = c;
}

static void unpark(server *s, conn *c)
{
    if (c->wprev)
        c->wprev->wnext = c->wnext;
    else
        s->parked_head = c->wnext;
    if (c->wnext)
        c->wnext->wprev = c->wprev;
    else
        s->parked_tail = c->wprev;
    c->wprev = c->wnext = NULL;
}

/* Arms c's socket for one event (the lock held, so that c cannot be closed
   and its descriptor reused meanwhile). */
static void arm(server *s, conn *c)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT,
                             .data.u64 = (uint64_t)c->slot << 32 | c->gen};
    epoll_ctl(s->workers[c->home].epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* The writer came free (from bolt.c, on any worker): every connection
   parked for it tries again, in the order they parked. */
static void writer_freed(void *arg)
{
    server *s = arg;
    pthread_mutex_lock(&s->lock);
    while (s->parked_head) {
        conn *c = s->parked_head;
        unpark(s, c);
        enqueue(s, c);
    }
    pthread_mutex_unlock(&s->lock);
}

/* ---- a worker's turn on one connection ---- */

/* Makes room for and reads what has arrived, without waiting: 0 (possibly
   with nothing read), 1 when the client has closed its end, -1 with why. */
static int read_available(server *s, conn *c, const char **why)
{
    size_t most = s->o.max_message + 262144;
    if (c->cap - c->len < 65536 && c->cap < most) {
        size_t cap = c->cap ? c->cap * 2 : 131072;
        if (cap > most)
            cap = most;
        uint8_t *in = realloc(c->in, cap);
        if (!in) {
            *why = "out of memory";
            return -1;
        }
        c->in = in;
        c->cap = cap;
    }
    if (c->len == c->cap)
        return 0;   /* full: the messages in it are answered first */
    ssize_t n = recv(c->fd, c->in + c->len, c->cap - c->len, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    if (n < 0) {
        *why = strerror(errno);
        return -1;
    }
    if (n == 0)
        return 1;
    c->len += (size_t)n;
    return 0;
}

static int handshake(conn *c, const char **why)
{
    uint8_t reply[4];
    if (bolt_handshake(&c->bolt, c->in, reply) != 0) {
        *why = "not a Bolt client (wrong magic bytes)";
        return -1;
    }
    if (send_all(c->fd, reply, 4) != 0) {
        *why = "the client went away during the handshake";
        return -1;
    }
    if (c->bolt.state == BOLT_NEGOTIATION) {
        *why = "no Bolt version in common (this server speaks 4.4 and 5.0-5.4)";
        return -1;
    }
    consume(c, 20);
    c->handshaken = true;
    log_line("conn %llu %s: Bolt %d.%d negotiated", (unsigned long long)c->bolt.id,
             c->bolt.peer, c->bolt.major, c->bolt.minor);
    return 0;
}

/* Answers every whole message in c->in: 0, BOLT_WAIT with the message
   that waits for the writer left first in c->in, or -1 with why. */
static int answer_messages(server *s, conn *c, const char **why)
{
    pack_buf msg = {0};
    int rc = 0;
    for (;;) {
        size_t used = 0;
        int got = next_message(c->in, c->len, s->o.max_message, &msg, &used);
        if (got == 2) {
            consume(c, used);
            continue;
        }
        if (got < 0) {
            *why = "a message larger than --max-message";
            rc = -1;
            break;
        }
        if (got == 0) {
            if (c->len == s->o.max_message + 262144) {
                *why = "a message larger than --max-message";
                rc = -1;
            }
            break;
        }
        rc = bolt_message(&c->bolt, msg.data, msg.len);
        if (rc == BOLT_WAIT)
            break;
        consume(c, used);
        if (rc != 0) {
            *why = c->bolt.out.failed ? "a reply larger than the buffer limit" : "closed";
            break;
        }
    }
    pack_free(&msg);
    return rc;
}

/* Ends c (a worker has it, or it was never armed): out of the registry
   first, so the watchdog no longer looks at its socket; its slot is
   reused, with a new generation. */
static void close_conn(server *s, conn *c, const char *why)
{
    pthread_mutex_lock(&s->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->where = CONN_DEAD;
    c->gen++;
    pool_worker *home = &s->workers[c->home];
    pthread_mutex_unlock(&s->lock);
    if (c->bolt.out.len)
        flush_conn(&c->bolt);
    log_line("conn %llu %s: closed (%s)", (unsigned long long)c->bolt.id, c->bolt.peer, why);
    bolt_conn_close(&c->bolt);   /* may give the writer back, which takes the lock */
    epoll_ctl(home->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->in);
    pthread_mutex_lock(&s->lock);
    s->nconns--;
    home->nconns--;
    c->qnext = s->free_slots;
    s->free_slots = c;
    pthread_mutex_unlock(&s->lock);
}

/* One turn: what the watchdog asked for, then the bytes that have
   arrived, every whole message answered, the replies sent; then c is
   armed again, parked, or closed. */
static void turn(server *s, conn *c, const char *close_why, bool expire_tx, bool wait_over)
{
    const char *why = close_why;
    int rc = 0, got = 0;
    if (why)
        goto close;
    if (expire_tx)
        bolt_expire_tx(&c->bolt);
    if (wait_over)
        c->bolt.writer_wait_over = true;
    got = read_available(s, c, &why);
    if (got < 0)
        goto close;
    if (!c->handshaken && c->len >= 20 && handshake(c, &why) != 0)
        goto close;
    if (c->handshaken) {
        scan_resets(s, c);
        rc = answer_messages(s, c, &why);
        if (rc < 0)
            goto close;
        if (rc != BOLT_WAIT)
            c->bolt.writer_wait_over = false;   /* what waited was answered otherwise */
    }
    if (c->bolt.out.len && flush_conn(&c->bolt) != 0) {
        why = "the client stopped reading";
        goto close;
    }
    if (got == 1) {
        why = "the client closed the connection";
        goto close;
    }
    if (atomic_load(&stopping)) {
        why = "the server is stopping";
        goto close;
    }
    if (c->len == 0 && c->cap > (1u << 20)) {
        free(c->in);   /* a large message's room is not kept */
        c->in = NULL;
        c->cap = 0;
    }
    pthread_mutex_lock(&s->lock);
    c->since_ms = now_ms();
    if (rc == BOLT_WAIT) {
        if (!c->wait_since_ms)
            c->wait_since_ms = c->since_ms;
        park(s, c);
    } else {
        c->wait_since_ms = 0;
        c->where = CONN_IDLE;
    }
    /* a parked connection with a full buffer waits for the writer alone:
       armed, a readable socket would wake it for nothing, again and again */
    if (rc != BOLT_WAIT || c->len < c->cap)
        arm(s, c);
    pthread_mutex_unlock(&s->lock);
    return;
close:
    close_conn(s, c, why);
}

static void accept_one(server *s);

/* Takes c off the run queue or from an event (lock held): what the
   watchdog asked of it, and c is the caller's until its turn ends. */
static void take(conn *c, const char **why, bool *expire_tx, bool *wait_over)
{
    c->where = CONN_RUNNING;
    *why = c->close_why;
    *expire_tx = c->expire_tx;
    *wait_over = c->wait_over;
    c->close_why = NULL;
    c->expire_tx = c->wait_over = false;
}

/* The connection an event names, if it is still that connection and
   waiting for one (lock held); NULL for a stale event. */
static conn *named(server *s, uint64_t data)
{
    uint32_t slot = (uint32_t)(data >> 32), gen = (uint32_t)data;
    conn *c = slot < s->nslots ? s->slots[slot] : NULL;
    if (!c || c->gen != gen || (c->where != CONN_IDLE && c->where != CONN_PARKED))
        return NULL;
    if (c->where == CONN_PARKED)
        unpark(s, c);
    return c;
}

/* A worker: the run queue first, else the next event of its epoll set. */
static void *worker(void *arg)
{
    pool_worker *me = arg;
    server *s = me->s;
    pthread_mutex_lock(&s->lock);
    while (!s->workers_stop) {
        conn *c = s->qhead;
        if (c) {
            s->qhead = c->qnext;
            if (!s->qhead)
                s->qtail = NULL;
        } else {
            pthread_mutex_unlock(&s->lock);
            struct epoll_event ev;
            int n = epoll_wait(me->epoll_fd, &ev, 1, 200);
            if (n == 1 && ev.data.u64 == EV_LISTEN) {
                if (!atomic_load(&stopping))
                    accept_one(s);
                pthread_mutex_lock(&s->lock);
                continue;
            }
            if (n == 1 && ev.data.u64 == EV_WAKE) {
                uint64_t count;
                if (read(s->wake_fd, &count, sizeof count) < 0) {
                    /* another worker took it: the queue is looked at anyway */
                }
            }
            pthread_mutex_lock(&s->lock);
            if (n != 1 || ev.data.u64 == EV_WAKE || !(c = named(s, ev.data.u64)))
                continue;
        }
        const char *why;
        bool expire_tx, wait_over;
        take(c, &why, &expire_tx, &wait_over);
        me->busy_since_ms = now_ms();
        pthread_mutex_unlock(&s->lock);
        turn(s, c, why, expire_tx, wait_over);
        pthread_mutex_lock(&s->lock);
        me->busy_since_ms = 0;
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- the watchdog ---- */

/* Whether the bytes waiting on fd hold a RESET at a message boundary
   (walking chunks from the first unread byte), or the client has closed
   its end. */
static bool reset_waiting(int fd)
{
    uint8_t peek[4096];
    ssize_t n = recv(fd, peek, sizeof peek, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0)
        return true;   /* the client is gone: nobody waits for the answer */
    size_t at = 0;
    bool message_start = true;
    while (n > 0 && at + 2 <= (size_t)n) {
        size_t size = (size_t)peek[at] << 8 | peek[at + 1];
        if (size == 0) {
            message_start = true;
            at += 2;
            continue;
        }
        if (message_start && size == 2 && at + 6 <= (size_t)n && peek[at + 2] == 0xB0 &&
            peek[at + 3] == 0x0F && peek[at + 4] == 0 && peek[at + 5] == 0)
            return true;
        message_start = false;
        at += 2 + size;
    }
    return false;
}

#define PRE_AUTH_MS 30000   /* handshake, HELLO and LOGON must come within this */

/* An idle or parked connection past a time limit goes on the run queue
   with what to do (lock held). */
static void check_limits(server *s, conn *c, int64_t now)
{
    int64_t waited = now - c->since_ms;
    int64_t tx_ms = (int64_t)s->o.tx_timeout_s * 1000;
    if (c->where == CONN_PARKED) {
        if (now - c->wait_since_ms >= tx_ms) {
            unpark(s, c);
            c->wait_over = true;
            enqueue(s, c);
        }
        return;
    }
    if (c->where != CONN_IDLE)
        return;
    if (c->bolt.holds_writer) {
        if (waited >= tx_ms) {
            c->expire_tx = true;
            enqueue(s, c);
        }
        return;
    }
    bool authed = c->bolt.state != BOLT_NEGOTIATION && c->bolt.state != BOLT_CONNECTED &&
                  c->bolt.state != BOLT_AUTHENTICATION;
    int64_t limit = (int64_t)s->o.idle_s * 1000;
    /* before authentication a connection gets at most PRE_AUTH_MS, so
       silent sockets cannot hold the connection slots for long */
    if (!authed) {
        if (limit > PRE_AUTH_MS)
            limit = PRE_AUTH_MS;
        waited = now - c->connected_ms;
    }
    if (waited >= limit) {
        c->close_why = authed ? "idle for too long" : "no authentication within the time allowed";
        enqueue(s, c);
    }
}

/* c (idle) is at home on a worker stuck in a long turn: moves
   it to the worker, not busy, with the fewest connections (lock held).  An
   event the old set already gave is harmless: whoever takes c first under
   the lock has it, and its turn ends by arming it where it now lives. */
static void move_off_busy_worker(server *s, conn *c, int64_t now)
{
    pool_worker *from = &s->workers[c->home];
    if (!from->busy_since_ms || now - from->busy_since_ms < LONG_TURN_MS)
        return;
    pool_worker *to = NULL;
    for (unsigned i = 0; i < s->o.threads; i++) {
        pool_worker *w = &s->workers[i];
        if (!w->busy_since_ms && (!to || w->nconns < to->nconns))
            to = w;
    }
    if (!to)
        return;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT,
                             .data.u64 = (uint64_t)c->slot << 32 | c->gen};
    epoll_ctl(from->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
    if (epoll_ctl(to->epoll_fd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
        epoll_ctl(from->epoll_fd, EPOLL_CTL_ADD, c->fd, &ev);   /* stays, armed */
        return;
    }
    from->nconns--;
    to->nconns++;
    c->home = to->index;
}

static void *watchdog(void *arg)
{
    server *s = arg;
    /* it runs until the workers stop: while the server stops, a query
       running for a connection that was shut down is interrupted */
    for (unsigned tick = 0;; tick++) {
        struct timespec t = {0, 20 * 1000000L};
        nanosleep(&t, NULL);
        int64_t now = now_ms();
        pthread_mutex_lock(&s->lock);
        if (s->workers_stop) {
            pthread_mutex_unlock(&s->lock);
            break;
        }
        for (conn *c = s->conns; c; c = c->next) {
            if (c->where == CONN_RUNNING) {
                pthread_mutex_lock(&c->bolt.lock);
                bool busy = c->bolt.busy;
                pthread_mutex_unlock(&c->bolt.lock);
                if (busy && reset_waiting(c->fd))
                    bolt_interrupt(&c->bolt);
            } else if (tick % 5 == 0) {
                check_limits(s, c, now);
                if (c->where == CONN_IDLE)
                    move_off_busy_worker(s, c, now);
            }
        }
        pthread_mutex_unlock(&s->lock);
    }
    return NULL;
}

/* ---- accepting and dispatching ---- */

/* A connection slot: a free one, or a new one (lock held). */
static conn *slot_get(server *s)
{
    conn *c = s->free_slots;
    if (c) {
        s->free_slots = c->qnext;
    } else {
        if (s->nslots == s->o.max_connections || !(c = calloc(1, sizeof *c)))
            return NULL;
        c->slot = s->nslots;
        s->slots[s->nslots++] = c;
    }
    uint32_t slot = c->slot, gen = c->gen;
    *c = (conn){.slot = slot, .gen = gen};
    return c;
}

static void accept_one(server *s)
{
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    int fd = accept4(s->listen_fd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
    if (fd < 0)
        return;   /* another worker took it */
    char name[64];
    describe((struct sockaddr *)&peer, name, sizeof name);
    pthread_mutex_lock(&s->lock);
    bool full = s->nconns >= s->o.max_connections;
    conn *c = full ? NULL : slot_get(s);
    if (c)
        s->nconns++;   /* counted now, so that the limit holds across workers */
    pthread_mutex_unlock(&s->lock);
    if (full) {
        log_line("refused %s: %u connections already (--max-connections)", name,
                 s->o.max_connections);
        close(fd);
        return;
    }
    if (!c) {
        log_line("refused %s: out of memory", name);
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* replies are sent blocking, by the worker: a client that stops
       reading holds it at most --idle-timeout */
    struct timeval snd = {.tv_sec = s->o.idle_s};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof snd);
    c->fd = fd;
    bolt_conn_init(&c->bolt, &s->env, name);
    c->bolt.flush = flush_conn;
    c->bolt.transport = c;
    c->bolt.out.limit = s->env.max_result_buffer;
    log_line("conn %llu %s: connected", (unsigned long long)c->bolt.id, name);
    pthread_mutex_lock(&s->lock);
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    c->where = CONN_IDLE;
    c->since_ms = c->connected_ms = now_ms();
    pool_worker *home = &s->workers[0];
    for (unsigned i = 1; i < s->o.threads; i++)
        if (s->workers[i].nconns < home->nconns)
            home = &s->workers[i];
    c->home = home->index;
    home->nconns++;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT,
                             .data.u64 = (uint64_t)c->slot << 32 | c->gen};
    int added = epoll_ctl(home->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
    if (added != 0)
        c->where = CONN_RUNNING;   /* closed at once, as a worker would */
    pthread_mutex_unlock(&s->lock);
    if (added != 0)
        close_conn(s, c, "epoll refused the socket");
}

/* Clients of the server run queries it did not write: LOAD CSV is
   disabled in the library too, beneath the server's own refusal. */
static int open_graph(const options *o, strata_graph **g)
{
    char err[512];
    if (!o->path) {
        if (strata_graph_new(g) != STRATA_OK)
            return -1;
    } else if (strata_load_ex(o->path, g, err, sizeof err) != STRATA_OK) {
        fprintf(stderr, "strata serve: %s\n", err);
        return -1;
    }
    strata_csv_options csv = {.disabled = true};
    if (strata_set_csv_options(*g, &csv) != STRATA_OK) {
        fprintf(stderr, "strata serve: %s\n", strata_errmsg(*g));
        strata_graph_free(g);
        return -1;
    }
    return 0;
}

/* Serves until SIGINT/SIGTERM, then closes every connection (rolling back
   open transactions) and joins the threads. */
static int serve(server *s)
{
    unsigned started = 0;
    for (; started < s->o.threads; started++)
        if (pthread_create(&s->workers[started].thread, NULL, worker, &s->workers[started]) != 0)
            break;
    pthread_t dog;
    bool dog_started = started == s->o.threads && pthread_create(&dog, NULL, watchdog, s) == 0;
    if (dog_started) {
        printf("strata: Bolt server listening on %s\n", s->address);
        fflush(stdout);
        log_line("listening on %s (%s, %u worker threads%s)", s->address,
                 s->o.path ? s->o.path : "empty in-memory graph", s->o.threads,
                 s->env.auth ? ", authentication on" : "");
        while (!atomic_load(&stopping)) {
            struct timespec t = {0, 100 * 1000000L};
            nanosleep(&t, NULL);
        }
    } else {
        fprintf(stderr, "strata serve: cannot start %u threads\n", s->o.threads + 1);
        atomic_store(&stopping, true);
    }
    pthread_mutex_lock(&s->lock);
    log_line("stopping: closing %u connections", s->nconns);
    for (conn *c = s->conns; c; c = c->next)
        shutdown(c->fd, SHUT_RDWR);
    /* each connection sees its end on its next turn (a running query is
       interrupted by the watchdog, which sees the socket closed) */
    while (s->nconns > 0 && started > 0) {
        pthread_mutex_unlock(&s->lock);
        struct timespec t = {0, 20 * 1000000L};
        nanosleep(&t, NULL);
        pthread_mutex_lock(&s->lock);
    }
    s->workers_stop = true;
    pthread_mutex_unlock(&s->lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(s->workers[i].thread, NULL);
    if (dog_started)
        pthread_join(dog, NULL);
    return dog_started ? 0 : 1;
}

int server_main(int argc, char **argv)
{
    server s = {.listen_fd = -1, .wake_fd = -1};
    if (parse_options(argc, argv, &s.o) != 0)
        return 2;
    FILE *logf = NULL;
    if (s.o.log && !(logf = fopen(s.o.log, "a"))) {
        fprintf(stderr, "strata serve: --log %s: %s\n", s.o.log, strerror(errno));
        return 1;
    }
    log_setup(logf, s.o.quiet);
    auth_db *auth = NULL;
    strata_graph *g = NULL;
    int rc = 1;
    if (s.o.auth) {
        char err[512];
        if (!(auth = auth_load(s.o.auth, err, sizeof err))) {
            fprintf(stderr, "strata serve: --auth %s\n", err);
            goto cleanup;
        }
    }
    if (open_listener(&s) != 0 || open_graph(&s.o, &g) != 0)
        goto cleanup;
    if (!(s.workers = calloc(s.o.threads, sizeof *s.workers)) ||
        !(s.slots = calloc(s.o.max_connections, sizeof *s.slots))) {
        fprintf(stderr, "strata serve: out of memory\n");
        goto cleanup;
    }
    for (unsigned i = 0; i < s.o.threads; i++)
        s.workers[i] = (pool_worker){.s = &s, .index = i, .epoll_fd = -1};
    if ((s.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        fprintf(stderr, "strata serve: eventfd: %s\n", strerror(errno));
        goto cleanup;
    }
    /* the listening socket and the wake-up wake one worker each time */
    struct epoll_event lev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.u64 = EV_LISTEN};
    struct epoll_event wev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.u64 = EV_WAKE};
    for (unsigned i = 0; i < s.o.threads; i++) {
        int ep = s.workers[i].epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, s.listen_fd, &lev) != 0 ||
            epoll_ctl(ep, EPOLL_CTL_ADD, s.wake_fd, &wev) != 0) {
            fprintf(stderr, "strata serve: epoll: %s\n", strerror(errno));
            goto cleanup;
        }
    }
    pthread_mutex_init(&s.lock, NULL);
    s.env = (bolt_env){.g = g, .auth = auth, .tx_timeout_ms = s.o.tx_timeout_s * 1000,
                       .max_result_buffer = 64u << 20, .address = s.address,
                       .writer_freed = writer_freed, .writer_freed_arg = &s};
    pthread_mutex_init(&s.env.writer_lock, NULL);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    rc = serve(&s);
    pthread_mutex_destroy(&s.env.writer_lock);
    pthread_mutex_destroy(&s.lock);
cleanup:
    for (uint32_t i = 0; i < s.nslots; i++)
        free(s.slots[i]);
    free(s.slots);
    for (unsigned i = 0; s.workers && i < s.o.threads; i++)
        if (s.workers[i].epoll_fd >= 0)
            close(s.workers[i].epoll_fd);
    free(s.workers);
    if (s.wake_fd >= 0)
        close(s.wake_fd);
    if (s.listen_fd >= 0)
        close(s.listen_fd);
    strata_graph_free(&g);
    auth_free(&auth);
    if (logf)
        fclose(logf);
    return rc;
}
