/*
 * bolt_lookup — point-lookup queries per second over Bolt (strata serve)
 * at 1, 4 and 16 connections, against the same lookup in-process:
 *   MATCH (n:Item {key: $k}) RETURN n.v
 * over N nodes with a unique constraint on key.  In-process it runs the
 * server's own path for an auto-commit read: strata_snapshot, then
 * strata_view_query, read the row, free.  Over Bolt each connection sends
 * RUN (mode r) and PULL pipelined and waits for the PULL's summary, so a
 * query costs a round trip.  The sequential measures alternate batch by
 * batch with a bare TCP echo (the machine's floor; see main), and the
 * server's CPU time is read from /proc.
 *
 *   bolt_lookup path/to/strata [--nodes N] [--seconds S] [--quick]
 *               [--threads N]   the server's --threads (default: its own)
 *               [--port P]      use a server already listening on
 *                               127.0.0.1:P (under a profiler, say)
 *                               instead of starting one
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <strata.h>

#include "server/packstream.h"

#define BENCH_NAME "bolt_lookup"
#include "bench_util.h"

#define QUERY "MATCH (n:Item {key: $k}) RETURN n.v"

typedef struct client {
    int fd;
    uint8_t buf[1 << 16];
    size_t len;
    pack_buf out;
} client;

/* Frames m as one chunk into the client's pending output (sent by
   flush_out, so that RUN and PULL leave in one segment, as drivers do). */
static void send_message(client *c, pack_buf *m)
{
    uint8_t head[2] = {(uint8_t)(m->len >> 8), (uint8_t)m->len};
    pack_bytes(&c->out, head, 2);
    pack_bytes(&c->out, m->data, m->len);
    pack_bytes(&c->out, "\0\0", 2);
}

static void flush_out(client *c)
{
    if (send(c->fd, c->out.data, c->out.len, 0) != (ssize_t)c->out.len)
        fail("send failed");
    pack_reset(&c->out);
}

/* Reads one reply; returns its tag. */
static uint8_t read_reply(client *c)
{
    for (;;) {
        /* a whole message: chunks up to a 0x0000 marker */
        size_t at = 0;
        uint8_t tag = 0;
        bool first = true;
        while (at + 2 <= c->len) {
            size_t n = (size_t)c->buf[at] << 8 | c->buf[at + 1];
            if (n == 0) {
                if (!first) {
                    memmove(c->buf, c->buf + at + 2, c->len - at - 2);
                    c->len -= at + 2;
                    return tag;
                }
                at += 2;
                continue;
            }
            if (at + 2 + n > c->len)
                break;
            if (first)
                tag = c->buf[at + 3];
            first = false;
            at += 2 + n;
        }
        if (c->len == sizeof c->buf)
            fail("reply too large");
        ssize_t r = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
        if (r <= 0)
            fail("the server closed the connection");
        c->len += (size_t)r;
    }
}

static void client_open(client *c, int port)
{
    c->len = 0;
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0)
        fail("cannot connect to port %d", port);
    uint8_t hs[20] = {0x60, 0x60, 0xB0, 0x17, 0, 0, 4, 5}, reply[4];
    if (send(c->fd, hs, 20, 0) != 20 || recv(c->fd, reply, 4, MSG_WAITALL) != 4 || reply[3] != 5)
        fail("handshake failed");
    pack_buf m = {0};
    pack_struct_header(&m, 1, 0x01);
    pack_map_header(&m, 1);
    pack_cstr(&m, "user_agent");
    pack_cstr(&m, "bolt_lookup/1");
    send_message(c, &m);
    pack_reset(&m);
    pack_struct_header(&m, 1, 0x6A);
    pack_map_header(&m, 1);
    pack_cstr(&m, "scheme");
    pack_cstr(&m, "none");
    send_message(c, &m);
    pack_free(&m);
    flush_out(c);
    if (read_reply(c) != 0x70 || read_reply(c) != 0x70)
        fail("HELLO/LOGON refused");
}

/* RUN + PULL; the number of records. */
static int run(client *c, const char *query, int64_t k, bool read)
{
    pack_buf m = {0};
    pack_struct_header(&m, 3, 0x10);
    pack_cstr(&m, query);
    pack_map_header(&m, 1);
    pack_cstr(&m, "k");
    pack_int(&m, k);
    pack_map_header(&m, read ? 1 : 0);
    if (read) {
        pack_cstr(&m, "mode");
        pack_cstr(&m, "r");
    }
    send_message(c, &m);
    pack_reset(&m);
    pack_struct_header(&m, 1, 0x3F);
    pack_map_header(&m, 1);
    pack_cstr(&m, "n");
    pack_int(&m, -1);
    send_message(c, &m);
    pack_free(&m);
    flush_out(c);
    if (read_reply(c) != 0x70)
        fail("RUN failed: %s", query);
    int records = 0;
    uint8_t t;
    while ((t = read_reply(c)) == 0x71)
        records++;
    if (t != 0x70)
        fail("PULL failed");
    return records;
}

typedef struct worker {
    int port;
    long nodes;
    double seconds;
    long queries;
    uint64_t seed;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    client *c = calloc(1, sizeof *c);
    client_open(c, w->port);
    double end = now_us() + w->seconds * 1e6;
    while (now_us() < end) {
        for (int i = 0; i < 64; i++) {
            int64_t k = (int64_t)(xorshift(&w->seed) % (uint64_t)w->nodes);
            if (run(c, QUERY, k, true) != 1)
                fail("lookup of %lld found no row", (long long)k);
            w->queries++;
        }
    }
    close(c->fd);
    pack_free(&c->out);
    free(c);
    return NULL;
}

static pid_t start_server(const char *bin, const char *threads, int *port)
{
    int out[2];
    if (pipe(out) != 0)
        fail("pipe");
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        if (threads)
            execl(bin, bin, "serve", "--listen", "127.0.0.1:0", "--quiet", "--threads", threads,
                  (char *)NULL);
        else
            execl(bin, bin, "serve", "--listen", "127.0.0.1:0", "--quiet", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    char line[256] = "";
    FILE *f = fdopen(out[0], "r");
    if (!fgets(line, sizeof line, f) || sscanf(line, "strata: Bolt server listening on 127.0.0.1:%d",
                                               port) != 1)
        fail("%s serve did not start (%s)", bin, line);
    fclose(f);
    return pid;
}

/* CPU time the process pid has run, summed over its threads, in µs (the
   first field of each thread's schedstat, in ns); -1 when unreadable (a
   server started elsewhere, under another user). */
static double cpu_us(pid_t pid)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    double ns = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[64 + sizeof e->d_name + 16];
        snprintf(path, sizeof path, "%s/%s/schedstat", dir, e->d_name);
        FILE *f = fopen(path, "r");
        unsigned long long run = 0;
        if (f && fscanf(f, "%llu", &run) == 1)
            ns += (double)run;
        if (f)
            fclose(f);
    }
    closedir(d);
    return ns / 1e3;
}

/* One lookup on the server's path for an auto-commit read: a snapshot,
   the query on it, the row read, everything freed. */
static void lookup_in_process(strata_graph *g, int64_t key_value)
{
    strata_view *v;
    strata_result *r = NULL;
    strata_value *k = strata_value_int(key_value);
    const char *key = "k";
    strata_value *params = strata_value_map(&key, (const strata_value *const *)&k, 1);
    const strata_value *const *row;
    if (strata_snapshot(g, &v) != STRATA_OK || strata_view_query(v, QUERY, params, &r) != STRATA_OK ||
        !strata_result_next(r, &row))
        fail("in-process lookup failed");
    strata_result_free(&r);
    strata_view_release(&v);
    strata_value_free(&params);
    strata_value_free(&k);
}

/* The graph for the in-process lookups: the same nodes and constraint as
   the server's. */
static strata_graph *in_process_graph(long nodes)
{
    strata_graph *g;
    strata_result *r = NULL;
    if (strata_graph_new(&g) != STRATA_OK)
        fail("out of memory");
    char text[160];
    snprintf(text, sizeof text, "UNWIND range(0, %ld) AS i CREATE (:Item {key: i, v: i})",
             nodes - 1);
    if (strata_query(g, "CREATE CONSTRAINT FOR (n:Item) REQUIRE n.key IS UNIQUE", NULL, &r) !=
        STRATA_OK)
        fail("constraint: %s", strata_errmsg(g));
    strata_result_free(&r);
    if (strata_query(g, text, NULL, &r) != STRATA_OK)
        fail("load: %s", strata_errmsg(g));
    strata_result_free(&r);
    return g;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The machine's floor: a bare TCP echo over loopback (a thread of this
   process blocking in recv, as a server's worker waits for its client),
   6 bytes each way, no protocol at all. */
static void *echo_thread(void *arg)
{
    int listener = *(int *)arg;
    int fd = accept(listener, NULL, NULL), one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char b[64];
    ssize_t n;
    while ((n = recv(fd, b, sizeof b, 0)) > 0)
        if (send(fd, b, (size_t)n, MSG_NOSIGNAL) != n)
            break;
    close(fd);
    return NULL;
}

/* Starts the echo thread; the client's socket, connected. */
static int echo_open(pthread_t *t, int *listener)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    *listener = socket(AF_INET, SOCK_STREAM, 0);
    if (bind(*listener, (struct sockaddr *)&a, sizeof a) != 0 || listen(*listener, 1) != 0 ||
        getsockname(*listener, (struct sockaddr *)&a, &len) != 0)
        fail("echo: cannot listen");
    pthread_create(t, NULL, echo_thread, listener);
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        fail("echo: cannot connect");
    return fd;
}

static void echo_once(int fd)
{
    char b[6] = "ping!";
    if (send(fd, b, sizeof b, 0) != (ssize_t)sizeof b ||
        recv(fd, b, sizeof b, MSG_WAITALL) != (ssize_t)sizeof b)
        fail("echo failed");
}

static void send_reset(client *c)
{
    pack_buf m = {0};
    pack_struct_header(&m, 0, 0x0F);
    send_message(c, &m);
    pack_free(&m);
    flush_out(c);
    if (read_reply(c) != 0x70)
        fail("RESET failed");
}

int main(int argc, char **argv)
{
    long nodes = 100000;
    double seconds = 3;
    const char *threads = NULL;
    int port = 0;
    if (argc < 2)
        fail("usage: bolt_lookup path/to/strata [--nodes N] [--seconds S] [--quick] "
             "[--threads N] [--port P]");
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            nodes = atol(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = argv[++i];
        else if (!strcmp(argv[i], "--port") && i + 1 < argc)
            port = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            nodes = 10000, seconds = 1;
    }
    strata_graph *g = in_process_graph(nodes);
    pid_t pid = port ? 0 : start_server(argv[1], threads, &port);
    client *c = calloc(1, sizeof *c);
    client_open(c, port);
    char text[160];
    snprintf(text, sizeof text, "UNWIND range(0, %ld) AS i CREATE (:Item {key: i, v: i})",
             nodes - 1);
    run(c, "CREATE CONSTRAINT FOR (n:Item) REQUIRE n.key IS UNIQUE", 0, false);
    run(c, text, 0, false);
    /* Sequential latency, in BATCHES rounds of three batches of PER_BATCH
       each: in-process lookups, empty Bolt round trips (RESET, no engine
       work: the floor) and Bolt lookups on one connection.  Alternating
       them gives each the same load of the machine, so the per-round
       differences (medians below) hold even where the absolute figures
       drift; the server's CPU time over the Bolt batches tells its work
       apart from waiting for a CPU. */
    enum { BATCHES = 21, PER_BATCH = 1000 };
    double local[BATCHES], echo[BATCHES], floor_us[BATCHES], bolt[BATCHES], over[BATCHES],
        beyond[BATCHES], beyond_echo[BATCHES];
    pthread_t echo_t;
    int echo_listener, echo_fd = echo_open(&echo_t, &echo_listener);
    double reset_cpu = 0, lookup_cpu = 0;
    uint64_t seed = 7;
    for (int b = 0; b < BATCHES; b++) {
        double t0 = now_us();
        for (int i = 0; i < PER_BATCH; i++)
            lookup_in_process(g, (int64_t)(xorshift(&seed) % (uint64_t)nodes));
        double te = now_us();
        for (int i = 0; i < PER_BATCH; i++)
            echo_once(echo_fd);
        echo[b] = (now_us() - te) / PER_BATCH;
        double t1 = now_us(), cpu0 = pid ? cpu_us(pid) : -1;
        for (int i = 0; i < PER_BATCH; i++)
            send_reset(c);
        double t2 = now_us(), cpu1 = pid ? cpu_us(pid) : -1;
        for (int i = 0; i < PER_BATCH; i++)
            run(c, QUERY, (int64_t)(xorshift(&seed) % (uint64_t)nodes), true);
        double t3 = now_us(), cpu2 = pid ? cpu_us(pid) : -1;
        local[b] = (te - t0) / PER_BATCH;
        floor_us[b] = (t2 - t1) / PER_BATCH;
        bolt[b] = (t3 - t2) / PER_BATCH;
        over[b] = bolt[b] - local[b];
        beyond[b] = over[b] - floor_us[b];
        beyond_echo[b] = over[b] - echo[b];
        reset_cpu += (cpu1 - cpu0) / PER_BATCH / BATCHES;
        lookup_cpu += (cpu2 - cpu1) / PER_BATCH / BATCHES;
    }
    strata_graph_free(&g);
    close(echo_fd);
    pthread_join(echo_t, NULL);
    close(echo_listener);
    printf("medians of %d rounds of %d queries each:\n", BATCHES, PER_BATCH);
    printf("  in-process lookup (snapshot + strata_view_query): %.2f us\n",
           median(local, BATCHES));
    printf("  a bare TCP echo over loopback (no protocol): %.2f us\n", median(echo, BATCHES));
    printf("  over Bolt, an empty round trip (RESET): %.2f us\n", median(floor_us, BATCHES));
    printf("  over Bolt, a lookup on one connection: %.2f us\n", median(bolt, BATCHES));
    printf("  overhead per query over in-process: %.2f us (the bare echo aside: %.2f us; "
           "the empty Bolt round trip aside: %.2f us)\n", median(over, BATCHES),
           median(beyond_echo, BATCHES), median(beyond, BATCHES));
    if (pid)
        printf("  server CPU time (all its threads): %.2f us per lookup, %.2f us per RESET\n",
               lookup_cpu, reset_cpu);
    close(c->fd);
    pack_free(&c->out);
    free(c);
    const int conns[] = {1, 4, 16};
    for (size_t k = 0; k < 3; k++) {
        int n = conns[k];
        worker w[16];
        pthread_t t[16];
        for (int i = 0; i < n; i++) {
            w[i] = (worker){.port = port, .nodes = nodes, .seconds = seconds,
                            .seed = 1000 + (uint64_t)i};
            pthread_create(&t[i], NULL, work, &w[i]);
        }
        long total = 0;
        for (int i = 0; i < n; i++) {
            pthread_join(t[i], NULL);
            total += w[i].queries;
        }
        printf("over Bolt, %2d connections: %8.0f queries/s\n", n, (double)total / seconds);
    }
    if (pid) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
    return 0;
}
