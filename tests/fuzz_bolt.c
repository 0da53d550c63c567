/*
 * fuzz_bolt — libFuzzer target for the Bolt server's PackStream decoder
 * and message state machine (docs/SERVING.md): whatever bytes a client sends, the
 * connection answers or ends cleanly, and the server's graph stays sound.
 *
 * Built and run by scripts/fuzz.sh (not by CMake), seeded from
 * tests/corpus/bolt.  Input: 16 bytes of version proposals (the magic is
 * added), then messages, each as a 2-byte big-endian length and that many
 * bytes — what the transport hands bolt_message after dechunking.  The
 * first half of the messages also go through the PackStream decoder alone.
 * Besides what the sanitizers catch, it aborts when the replies are not
 * whole chunked messages or the graph fails strata_integrity_check.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/bolt.h"
#include "server/log.h"
#include "server/packstream.h"
#include "strata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static strata_graph *graph;
static bolt_env env;

static int discard(bolt_conn *c)
{
    /* the replies must be whole chunks ending in a 0x0000 marker */
    size_t at = 0;
    while (at + 2 <= c->out.len) {
        size_t n = (size_t)c->out.data[at] << 8 | c->out.data[at + 1];
        at += 2 + n;
    }
    if (at != c->out.len || (c->out.len >= 2 && (c->out.data[c->out.len - 1] ||
                                                 c->out.data[c->out.len - 2])))
        abort();
    pack_reset(&c->out);
    return 0;
}

static void setup(void)
{
    if (graph && strata_memory_stats(graph, &(strata_memstats){0}) == STRATA_OK) {
        strata_view *v = NULL;
        strata_snapshot(graph, &v);
        uint64_t n = strata_node_count(v);
        strata_view_release(&v);
        if (n < 2000)
            return;
        strata_graph_free(&graph);
    }
    log_setup(NULL, true);
    if (strata_graph_new(&graph) != STRATA_OK)
        abort();
    strata_result *r = NULL;
    strata_query(graph, "CREATE (:P {name: 'a', t: date('2024-01-01')})-[:K {w: 1}]->(:Q)", NULL,
                 &r);
    strata_result_free(&r);
    if (!env.g)
        pthread_mutex_init(&env.writer_lock, NULL);
    env.g = graph;
    env.tx_timeout_ms = 1000;
    env.max_result_buffer = 1u << 20;
    env.address = "127.0.0.1:7687";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16)
        return 0;
    setup();
    bolt_conn c;
    bolt_conn_init(&c, &env, "fuzz");
    c.flush = discard;
    c.out.limit = env.max_result_buffer;
    uint8_t hs[20] = {0x60, 0x60, 0xB0, 0x17}, reply[4];
    memcpy(hs + 4, data, 16);
    bolt_handshake(&c, hs, reply);
    size_t at = 16, nmsg = 0;
    while (at + 2 <= size) {
        size_t n = (size_t)data[at] << 8 | data[at + 1];
        at += 2;
        if (n > size - at)
            n = size - at;
        if (nmsg++ % 2 == 0) {
            unpacker u = {.p = data + at, .end = data + at + n};
            strata_value *v = unpack_value(&u, &c.opts);
            if (!v && !u.err[0])
                abort();
            strata_value_free(&v);
        }
        int rc = bolt_message(&c, data + at, n);
        discard(&c);
        at += n;
        if (rc != 0)
            break;
    }
    bolt_conn_close(&c);
    strata_view *v = NULL;
    if (strata_snapshot(graph, &v) != STRATA_OK || strata_integrity_check(v) != STRATA_OK)
        abort();
    strata_view_release(&v);
    return 0;
}
