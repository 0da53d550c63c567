/*
 * `strata serve`: listens, gives each connection a thread, and feeds the
 * protocol (bolt.c) whole messages.
 *
 * Threads: one per connection (at most --max-connections), blocking on its
 * socket; --threads bounds how many of them process a message at once (a
 * semaphore), so idle connections cost no processing slot.  A watchdog
 * thread looks, every 20 ms, at the sockets of connections that are busy
 * in the engine: a RESET waiting there interrupts the running query.
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
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* One connection: its socket, its protocol state, its input. */
typedef struct conn {
    int fd;
    bolt_conn bolt;
    uint8_t *in;
    size_t len, cap;
    size_t scanned;            /* input bytes already scanned for RESETs */
    struct conn *prev, *next;  /* the registry */
} conn;

typedef struct server {
    options o;
    bolt_env env;
    sem_t slots;
    int listen_fd;
    char address[80];
    pthread_mutex_t lock;      /* guards the registry */
    conn *conns;
    unsigned nconns;
    pthread_cond_t drained;
} server;

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
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
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

/* ---- one connection ---- */

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
   the size limit.  *used: input bytes it took.  Empty messages (NOOP
   keep-alives) are skipped. */
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
            if (msg->len == 0) {
                *used = at;   /* a NOOP */
                if (len - at < 2)
                    return 2;
                continue;
            }
            *used = at;
            return 1;
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
        if (got == 2) {
            c->scanned += used;
            continue;
        }
        if (got != 1)
            break;
        if (bolt_is_reset(msg.data, msg.len))
            c->bolt.resets_pending++;
        c->scanned += used;
    }
    pack_free(&msg);
}

/* Waits for input: 1 when readable, 0 on timeout, -1 on error. */
static int wait_readable(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    for (;;) {
        int n = poll(&p, 1, ms);
        if (n < 0 && errno == EINTR) {
            if (atomic_load(&stopping))
                return -1;
            continue;
        }
        return n > 0 ? 1 : n;
    }
}

#define PRE_AUTH_MS 30000   /* handshake, HELLO and LOGON must come within this */

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Reads more input; 0, or -1 with why set (closed, idle, too large). */
static int read_more(server *s, conn *c, const char **why)
{
    int64_t start = now_ms();
    for (;;) {
        if (atomic_load(&stopping)) {
            *why = "the server is stopping";
            return -1;
        }
        bool tx = c->bolt.holds_writer;
        int64_t limit = tx ? (int64_t)s->o.tx_timeout_s * 1000 : (int64_t)s->o.idle_s * 1000;
        /* before authentication a connection gets at most PRE_AUTH_MS, so
           silent sockets cannot hold the connection slots for long */
        bool authed = c->bolt.state != BOLT_NEGOTIATION && c->bolt.state != BOLT_CONNECTED &&
                      c->bolt.state != BOLT_AUTHENTICATION;
        if (!authed && limit > PRE_AUTH_MS)
            limit = PRE_AUTH_MS;
        int64_t left = limit - (now_ms() - start);
        if (left <= 0) {
            if (tx) {
                bolt_expire_tx(&c->bolt);
                start = now_ms();
                continue;
            }
            *why = authed ? "idle for too long" : "no authentication within the time allowed";
            return -1;
        }
        int r = wait_readable(c->fd, left < 200 ? (int)left : 200);
        if (r < 0) {
            *why = "poll failed";
            return -1;
        }
        if (r == 0)
            continue;
        break;
    }
    if (c->cap - c->len < 65536) {
        size_t cap = c->cap ? c->cap * 2 : 131072;
        if (cap > s->o.max_message + 262144)
            cap = s->o.max_message + 262144;
        if (cap <= c->len) {
            *why = "a message larger than --max-message";
            return -1;
        }
        uint8_t *in = realloc(c->in, cap);
        if (!in) {
            *why = "out of memory";
            return -1;
        }
        c->in = in;
        c->cap = cap;
    }
    ssize_t n = recv(c->fd, c->in + c->len, c->cap - c->len, 0);
    if (n < 0 && errno == EINTR)
        return 0;
    if (n <= 0) {
        *why = n == 0 ? "the client closed the connection" : strerror(errno);
        return -1;
    }
    c->len += (size_t)n;
    return 0;
}

static int handshake(server *s, conn *c, const char **why)
{
    while (c->len < 20)
        if (read_more(s, c, why) != 0)
            return -1;
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
    memmove(c->in, c->in + 20, c->len - 20);
    c->len -= 20;
    log_line("conn %llu %s: Bolt %d.%d negotiated", (unsigned long long)c->bolt.id,
             c->bolt.peer, c->bolt.major, c->bolt.minor);
    return 0;
}

static void serve_conn(server *s, conn *c)
{
    const char *why = "GOODBYE";
    pack_buf msg = {0};
    if (handshake(s, c, &why) != 0)
        goto done;
    for (;;) {
        size_t used = 0;
        int got = next_message(c->in, c->len, s->o.max_message, &msg, &used);
        if (got == 2) {
            memmove(c->in, c->in + used, c->len - used);
            c->len -= used;
            c->scanned = c->scanned > used ? c->scanned - used : 0;
            continue;
        }
        if (got < 0) {
            why = "a message larger than --max-message";
            break;
        }
        if (got == 0) {
            if (c->bolt.out.len && flush_conn(&c->bolt) != 0) {
                why = "the client stopped reading";
                break;
            }
            if (read_more(s, c, &why) != 0)
                break;
            scan_resets(s, c);
            continue;
        }
        memmove(c->in, c->in + used, c->len - used);
        c->len -= used;
        c->scanned = c->scanned > used ? c->scanned - used : 0;
        sem_wait(&s->slots);
        int rc = bolt_message(&c->bolt, msg.data, msg.len);
        sem_post(&s->slots);
        if (rc != 0) {
            flush_conn(&c->bolt);
            why = c->bolt.out.failed ? "a reply larger than the buffer limit" : "closed";
            break;
        }
    }
done:
    pack_free(&msg);
    log_line("conn %llu %s: closed (%s)", (unsigned long long)c->bolt.id, c->bolt.peer, why);
}

typedef struct conn_start {
    server *s;
    conn *c;
} conn_start;

static void registry_remove(server *s, conn *c)
{
    pthread_mutex_lock(&s->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nconns--;
    pthread_cond_broadcast(&s->drained);
    pthread_mutex_unlock(&s->lock);
}

static void *conn_thread(void *arg)
{
    conn_start *st = arg;
    server *s = st->s;
    conn *c = st->c;
    free(st);
    serve_conn(s, c);
    registry_remove(s, c);
    bolt_conn_close(&c->bolt);
    close(c->fd);
    free(c->in);
    free(c);
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

static void *watchdog(void *arg)
{
    server *s = arg;
    while (!atomic_load(&stopping)) {
        struct timespec t = {0, 20 * 1000000L};
        nanosleep(&t, NULL);
        pthread_mutex_lock(&s->lock);
        for (conn *c = s->conns; c; c = c->next) {
            pthread_mutex_lock(&c->bolt.lock);
            bool busy = c->bolt.busy;
            pthread_mutex_unlock(&c->bolt.lock);
            if (busy && reset_waiting(c->fd))
                bolt_interrupt(&c->bolt);
        }
        pthread_mutex_unlock(&s->lock);
    }
    return NULL;
}

/* ---- accepting ---- */

static void accept_one(server *s)
{
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    int fd = accept4(s->listen_fd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    char name[64];
    describe((struct sockaddr *)&peer, name, sizeof name);
    pthread_mutex_lock(&s->lock);
    bool full = s->nconns >= s->o.max_connections;
    pthread_mutex_unlock(&s->lock);
    if (full) {
        log_line("refused %s: %u connections already (--max-connections)", name,
                 s->o.max_connections);
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval snd = {.tv_sec = s->o.idle_s};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof snd);
    conn *c = calloc(1, sizeof *c);
    conn_start *st = malloc(sizeof *st);
    if (!c || !st) {
        log_line("refused %s: out of memory", name);
        free(c);
        free(st);
        close(fd);
        return;
    }
    c->fd = fd;
    bolt_conn_init(&c->bolt, &s->env, name);
    c->bolt.flush = flush_conn;
    c->bolt.transport = c;
    c->bolt.out.limit = s->env.max_result_buffer;
    *st = (conn_start){s, c};
    pthread_mutex_lock(&s->lock);
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    pthread_mutex_unlock(&s->lock);
    log_line("conn %llu %s: connected", (unsigned long long)c->bolt.id, name);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    if (pthread_create(&t, &attr, conn_thread, st) != 0) {
        log_line("conn %llu %s: closed (no thread)", (unsigned long long)c->bolt.id, name);
        registry_remove(s, c);
        bolt_conn_close(&c->bolt);
        close(fd);
        free(c);
        free(st);
    }
    pthread_attr_destroy(&attr);
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

int server_main(int argc, char **argv)
{
    server s = {.listen_fd = -1};
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
    sem_init(&s.slots, 0, s.o.threads);
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.drained, NULL);
    s.env = (bolt_env){.g = g, .auth = auth, .tx_timeout_ms = s.o.tx_timeout_s * 1000,
                       .max_result_buffer = 64u << 20, .address = s.address,
                       .slots = &s.slots};
    pthread_mutex_init(&s.env.writer, NULL);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    printf("strata: Bolt server listening on %s\n", s.address);
    fflush(stdout);
    log_line("listening on %s (%s, %u threads%s)", s.address,
             s.o.path ? s.o.path : "empty in-memory graph", s.o.threads,
             auth ? ", authentication on" : "");
    pthread_t dog;
    pthread_create(&dog, NULL, watchdog, &s);
    while (!atomic_load(&stopping)) {
        if (wait_readable(s.listen_fd, 200) == 1)
            accept_one(&s);
    }
    pthread_mutex_lock(&s.lock);
    log_line("stopping: closing %u connections", s.nconns);
    for (conn *c = s.conns; c; c = c->next)
        shutdown(c->fd, SHUT_RDWR);
    while (s.nconns > 0)
        pthread_cond_wait(&s.drained, &s.lock);
    pthread_mutex_unlock(&s.lock);
    pthread_join(dog, NULL);
    pthread_mutex_destroy(&s.env.writer);
    sem_destroy(&s.slots);
    rc = 0;
cleanup:
    if (s.listen_fd >= 0)
        close(s.listen_fd);
    strata_graph_free(&g);
    auth_free(&auth);
    if (logf)
        fclose(logf);
    return rc;
}
