/*
 * The Bolt protocol on one connection (bolt.h has the state machine).
 *
 * Where statements run:
 *   - auto-commit RUN, and RUN in a read transaction: on a view
 *     (strata_snapshot, strata_view_query), in parallel with every other
 *     connection.  An auto-commit statement sent in write mode that
 *     writes (strata_query_writes, from the plan cache) goes to the
 *     writer instead.
 *   - statements that write, and everything in a write transaction: on the
 *     graph handle, by the connection holding the writer (env->writer_owner).
 *     A write transaction holds it from BEGIN to COMMIT/ROLLBACK (at most
 *     tx_timeout_ms idle).  A message that needs the writer while another
 *     connection holds it is not answered: bolt_message returns BOLT_WAIT
 *     and the transport offers it again later, so no thread blocks on it.
 * Results are read lazily: PULL n takes n rows, fetching one more ahead to
 * answer has_more.
 */
#include "server/bolt.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/log.h"

#define SERVER_AGENT "Neo4j/5.20.0 strata/0.1"
#define FLUSH_AT 65536     /* reply bytes gathered before they are sent */
#define MSG_SUCCESS 0x70
#define MSG_RECORD 0x71
#define MSG_IGNORED 0x7E
#define MSG_FAILURE 0x7F

enum {
    REQ_HELLO = 0x01, REQ_GOODBYE = 0x02, REQ_RESET = 0x0F, REQ_RUN = 0x10,
    REQ_BEGIN = 0x11, REQ_COMMIT = 0x12, REQ_ROLLBACK = 0x13, REQ_DISCARD = 0x2F,
    REQ_PULL = 0x3F, REQ_TELEMETRY = 0x54, REQ_ROUTE = 0x66, REQ_LOGON = 0x6A,
    REQ_LOGOFF = 0x6B,
};

/* ---- replies ---- */

/* Appends the message in m to c->out as chunks, then the end marker. */
static int emit(bolt_conn *c, pack_buf *m)
{
    if (m->failed) {
        c->out.failed = true;
        return -1;
    }
    for (size_t at = 0; at < m->len;) {
        size_t n = m->len - at < 0xFFFF ? m->len - at : 0xFFFF;
        uint8_t head[2] = {(uint8_t)(n >> 8), (uint8_t)n};
        pack_bytes(&c->out, head, 2);
        pack_bytes(&c->out, m->data + at, n);
        at += n;
    }
    pack_bytes(&c->out, "\0\0", 2);
    if (c->out.failed)
        return -1;
    if (c->out.len >= FLUSH_AT && c->flush)
        return c->flush(c);
    return 0;
}

static int reply_ignored(bolt_conn *c)
{
    pack_buf m = {0};
    pack_struct_header(&m, 0, MSG_IGNORED);
    int rc = emit(c, &m);
    pack_free(&m);
    return rc;
}

/* FAILURE {code, message}; the connection enters FAILED. */
static int reply_failure(bolt_conn *c, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int reply_failure(bolt_conn *c, const char *code, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pack_buf m = {0};
    pack_struct_header(&m, 1, MSG_FAILURE);
    pack_map_header(&m, 2);
    pack_cstr(&m, "code");
    pack_cstr(&m, code);
    pack_cstr(&m, "message");
    /* a message cut by vsnprintf may end inside a UTF-8 sequence */
    size_t n = strlen(text);
    if (n == sizeof text - 1) {
        while (n > 0 && ((unsigned char)text[n - 1] & 0xC0) == 0x80)
            n--;
        if (n > 0 && (unsigned char)text[n - 1] >= 0xC0)
            n--;
    }
    pack_string(&m, text, n);
    int rc = emit(c, &m);
    pack_free(&m);
    if (c->state != BOLT_DEFUNCT)
        c->state = BOLT_FAILED;
    log_line("conn %llu %s: failure %s: %s", (unsigned long long)c->id, c->peer, code, text);
    return rc;
}

/* SUCCESS with metadata written by the caller into m after the header:
   start with success_begin, add n entries, then emit. */
static void success_begin(pack_buf *m, size_t nentries)
{
    pack_struct_header(m, 1, MSG_SUCCESS);
    pack_map_header(m, nentries);
}

static int reply_success_empty(bolt_conn *c)
{
    pack_buf m = {0};
    success_begin(&m, 0);
    int rc = emit(c, &m);
    pack_free(&m);
    return rc;
}

/* ---- request fields ---- */

/* The value under key in map (a new value), or NULL when absent. */
static strata_value *map_get(const strata_value *map, const char *key)
{
    if (strata_value_type(map) != STRATA_MAP)
        return NULL;
    size_t n = strata_value_map_len(map);
    for (size_t i = 0; i < n; i++) {
        const char *k;
        strata_value *v = NULL;
        if (strata_value_map_entry(map, i, &k, NULL) == STRATA_OK && strcmp(k, key) == 0) {
            strata_value_map_entry(map, i, NULL, &v);
            return v;
        }
    }
    return NULL;
}

/* A string entry copied into buf ("" when absent or not a string). */
static void map_string(const strata_value *map, const char *key, char *buf, size_t cap)
{
    strata_value *v = map_get(map, key);
    const char *s;
    size_t n;
    buf[0] = '\0';
    if (v && strata_value_get_string(v, &s, &n) == STRATA_OK && n < cap && !memchr(s, 0, n))
        memcpy(buf, s, n + 1);
    strata_value_free(&v);
}

static int64_t map_int(const strata_value *map, const char *key, int64_t dflt)
{
    strata_value *v = map_get(map, key);
    int64_t i = dflt;
    if (v && strata_value_get_int(v, &i) != STRATA_OK)
        i = dflt;
    strata_value_free(&v);
    return i;
}

typedef struct request {
    uint8_t tag;
    uint8_t nfields;
    strata_value *f[3];
} request;

static void request_free(request *r)
{
    for (int i = 0; i < 3; i++)
        strata_value_free(&r->f[i]);
}

/* Fields each request takes: {tag, least, most} */
static const struct {
    uint8_t tag, least, most;
    const char *name;
} shapes[] = {
    {REQ_HELLO, 1, 1, "HELLO"},       {REQ_GOODBYE, 0, 0, "GOODBYE"},
    {REQ_RESET, 0, 0, "RESET"},       {REQ_RUN, 2, 3, "RUN"},
    {REQ_BEGIN, 0, 1, "BEGIN"},       {REQ_COMMIT, 0, 0, "COMMIT"},
    {REQ_ROLLBACK, 0, 0, "ROLLBACK"}, {REQ_DISCARD, 0, 1, "DISCARD"},
    {REQ_PULL, 0, 1, "PULL"},         {REQ_TELEMETRY, 1, 1, "TELEMETRY"},
    {REQ_ROUTE, 3, 3, "ROUTE"},       {REQ_LOGON, 1, 1, "LOGON"},
    {REQ_LOGOFF, 0, 0, "LOGOFF"},
};

static const char *request_name(uint8_t tag)
{
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (shapes[i].tag == tag)
            return shapes[i].name;
    return "unknown";
}

/* Decodes a whole message; -1 with why set when it is not a request. */
static int request_parse(bolt_conn *c, const uint8_t *msg, size_t len, request *r,
                         char *why, size_t whylen)
{
    unpacker u = {.p = msg, .end = msg + len};
    *r = (request){0};
    if (unpack_struct_header(&u, &r->nfields, &r->tag) != 0) {
        snprintf(why, whylen, "not a message: %s", u.err);
        return -1;
    }
    size_t k = 0;
    while (k < sizeof shapes / sizeof shapes[0] && shapes[k].tag != r->tag)
        k++;
    if (k == sizeof shapes / sizeof shapes[0]) {
        snprintf(why, whylen, "unknown message 0x%02X", r->tag);
        return -1;
    }
    if (r->nfields < shapes[k].least || r->nfields > shapes[k].most) {
        snprintf(why, whylen, "%s with %u fields", shapes[k].name, r->nfields);
        return -1;
    }
    for (int i = 0; i < r->nfields; i++) {
        if (!(r->f[i] = unpack_value(&u, &c->opts))) {
            snprintf(why, whylen, "%s field %d: %s", shapes[k].name, i + 1, u.err);
            request_free(r);
            return -1;
        }
    }
    if (u.p != u.end) {
        snprintf(why, whylen, "%s: %zu bytes after the message", shapes[k].name,
                 (size_t)(u.end - u.p));
        request_free(r);
        return -1;
    }
    return 0;
}

/* ---- the writer ---- */

/* Takes the writer: 0 when this connection has it, BOLT_WAIT when another
   holds it, -1 when this connection has waited long enough (the transport
   said so). */
static int writer_take(bolt_conn *c)
{
    bolt_env *env = c->env;
    pthread_mutex_lock(&env->writer_lock);
    bool available = env->writer_owner == NULL || env->writer_owner == c;
    if (available)
        env->writer_owner = c;
    pthread_mutex_unlock(&env->writer_lock);
    if (available) {
        c->writer_wait_over = false;
        return 0;
    }
    if (c->writer_wait_over) {
        c->writer_wait_over = false;
        return -1;
    }
    return BOLT_WAIT;
}

static void writer_give_back(bolt_conn *c)
{
    bolt_env *env = c->env;
    pthread_mutex_lock(&env->writer_lock);
    if (env->writer_owner == c)
        env->writer_owner = NULL;
    pthread_mutex_unlock(&env->writer_lock);
    if (env->writer_freed)
        env->writer_freed(env->writer_freed_arg);
}

/* ---- results ---- */

static void canned_free(canned **cp)
{
    canned *cn = *cp;
    if (!cn)
        return;
    for (size_t i = 0; i < cn->ncols * cn->nrows; i++)
        strata_value_free(&cn->cells[i]);
    free(cn->cells);
    free(cn);
    *cp = NULL;
}

static void result_free(bolt_result *br)
{
    strata_result_free(&br->r);
    canned_free(&br->c);
    *br = (bolt_result){0};
}

static void results_clear(bolt_conn *c)
{
    for (size_t i = 0; i < c->nresults; i++)
        result_free(&c->results[i]);
    c->nresults = 0;
}

static void result_remove(bolt_conn *c, size_t i)
{
    result_free(&c->results[i]);
    memmove(&c->results[i], &c->results[i + 1], (c->nresults - i - 1) * sizeof c->results[0]);
    c->nresults--;
}

/* ---- errors ---- */

/* strata's error categories as Neo4j status codes. */
static const struct {
    const char *category, *code;
} status_codes[] = {
    {"SyntaxError", "Neo.ClientError.Statement.SyntaxError"},
    {"SemanticError", "Neo.ClientError.Statement.SemanticError"},
    {"TypeError", "Neo.ClientError.Statement.TypeError"},
    {"ArgumentError", "Neo.ClientError.Statement.ArgumentError"},
    {"EntityNotFound", "Neo.ClientError.Statement.EntityNotFound"},
    {"ParameterMissing", "Neo.ClientError.Statement.ParameterMissing"},
    {"ConstraintVerificationFailed", "Neo.ClientError.Schema.ConstraintValidationFailed"},
    {"ConstraintValidationFailed", "Neo.ClientError.Schema.ConstraintValidationFailed"},
    {"ProcedureError", "Neo.ClientError.Procedure.ProcedureCallFailed"},
    {"IOError", "Neo.ClientError.Statement.ExternalResourceFailed"},
    {"SecurityError", "Neo.ClientError.Security.Forbidden"},
    {"Interrupted", "Neo.TransientError.Transaction.Terminated"},
    {"OutOfMemory", "Neo.TransientError.General.OutOfMemoryError"},
};

static const char *status_code(const strata_query_error *e)
{
    if (e->detail && strcmp(e->detail, "MissingParameter") == 0)
        return "Neo.ClientError.Statement.ParameterMissing";
    for (size_t i = 0; i < sizeof status_codes / sizeof status_codes[0]; i++)
        if (strcmp(e->code, status_codes[i].category) == 0)
            return status_codes[i].code;
    return "Neo.DatabaseError.Statement.ExecutionFailed";
}

static int reply_query_error(bolt_conn *c, const strata_query_error *e, const char *text)
{
    (void)text;
    return reply_failure(c, status_code(e), "%s (line %u, column %u)", e->message, e->line,
                         e->column);
}

/* ---- probing queries ---- */

/* Whether text, less leading blanks, starts with word (any case, blanks
   inside word matching any run of blanks). */
static bool starts_with(const char *text, const char *word)
{
    while (isspace((unsigned char)*text))
        text++;
    while (*word) {
        if (*word == ' ') {
            if (!isspace((unsigned char)*text))
                return false;
            while (isspace((unsigned char)*text))
                text++;
            word++;
            continue;
        }
        if (tolower((unsigned char)*text) != tolower((unsigned char)*word))
            return false;
        text++;
        word++;
    }
    return true;
}

static canned *canned_new(size_t ncols, const char **names, size_t nrows)
{
    canned *cn = calloc(1, sizeof *cn);
    if (!cn)
        return NULL;
    cn->ncols = ncols;
    cn->nrows = nrows;
    cn->names = names;
    cn->cells = calloc(ncols * nrows > 0 ? ncols * nrows : 1, sizeof *cn->cells);
    if (!cn->cells) {
        free(cn);
        return NULL;
    }
    return cn;
}

static strata_value *str_value(const char *s)
{
    return strata_value_string(s, strlen(s));
}

static strata_value *str_list(const char *s)
{
    strata_value *one = s ? str_value(s) : NULL;
    const strata_value *items[1] = {one};
    strata_value *l = strata_value_list(items, s ? 1 : 0);
    strata_value_free(&one);
    return l;
}

static bool canned_complete(canned *cn)
{
    for (size_t i = 0; i < cn->ncols * cn->nrows; i++)
        if (!cn->cells[i])
            return false;
    return true;
}

static strata_value *routing_servers(bolt_conn *c)
{
    static const char *roles[] = {"WRITE", "READ", "ROUTE"};
    strata_value *servers[3] = {0};
    strata_value *out = NULL;
    for (int i = 0; i < 3; i++) {
        strata_value *addrs = str_list(c->env->address);
        strata_value *role = str_value(roles[i]);
        const char *keys[] = {"addresses", "role"};
        const strata_value *vals[] = {addrs, role};
        servers[i] = addrs && role ? strata_value_map(keys, vals, 2) : NULL;
        strata_value_free(&addrs);
        strata_value_free(&role);
    }
    if (servers[0] && servers[1] && servers[2])
        out = strata_value_list((const strata_value *const *)servers, 3);
    for (int i = 0; i < 3; i++)
        strata_value_free(&servers[i]);
    return out;
}

/* The answer to a query GUI clients and drivers send to learn about the
   server, or NULL (*matched false) when text is not one. */
static canned *probe_answer(bolt_conn *c, const char *text, bool *matched)
{
    static const char *components[] = {"name", "versions", "edition"};
    static const char *databases[] = {"name", "type", "aliases", "access", "address",
                                      "role", "writer", "requestedStatus", "currentStatus",
                                      "statusMessage", "default", "home", "constituents"};
    static const char *user[] = {"username", "roles", "flags"};
    static const char *routing[] = {"ttl", "servers"};
    canned *cn = NULL;
    *matched = true;
    if (starts_with(text, "CALL dbms.components()")) {
        if ((cn = canned_new(3, components, 1))) {
            cn->cells[0] = str_value("Neo4j Kernel");
            cn->cells[1] = str_list("5.20.0");
            cn->cells[2] = str_value("community");
        }
    } else if (starts_with(text, "SHOW DATABASES") || starts_with(text, "SHOW DATABASE") ||
               starts_with(text, "SHOW DEFAULT DATABASE") ||
               starts_with(text, "SHOW HOME DATABASE")) {
        if ((cn = canned_new(13, databases, 1))) {
            const char *texts[] = {"neo4j", "standard", NULL, "read-write", c->env->address,
                                   "primary", NULL, "online", "online", ""};
            for (int i = 0; i < 10; i++)
                cn->cells[i] = i == 2 ? str_list(NULL)
                               : i == 6 ? strata_value_bool(true)
                                        : str_value(texts[i]);
            cn->cells[10] = strata_value_bool(true);
            cn->cells[11] = strata_value_bool(true);
            cn->cells[12] = str_list(NULL);
        }
    } else if (starts_with(text, "CALL dbms.showCurrentUser()")) {
        if ((cn = canned_new(3, user, 1))) {
            cn->cells[0] = str_value(c->user);
            cn->cells[1] = str_list("admin");
            cn->cells[2] = str_list(NULL);
        }
    } else if (starts_with(text, "CALL dbms.routing.getRoutingTable") ||
               starts_with(text, "CALL dbms.cluster.routing.getRoutingTable")) {
        if ((cn = canned_new(2, routing, 1))) {
            cn->cells[0] = strata_value_int(300);
            cn->cells[1] = routing_servers(c);
        }
    } else {
        *matched = false;
        return NULL;
    }
    if (cn && !canned_complete(cn))
        canned_free(&cn);
    return cn;
}

/* ---- LOAD CSV ---- */

/* Whether text holds the clause LOAD CSV: words outside string literals,
   backquoted names and comments, any blanks or comments between. */
static bool has_load_csv(const char *text)
{
    const char *p = text;
    bool after_load = false;
    while (*p) {
        if (*p == '\'' || *p == '"' || *p == '`') {
            char q = *p++;
            while (*p && *p != q)
                p += (*p == '\\' && p[1] && q != '`') ? 2 : 1;
            if (*p)
                p++;
            after_load = false;
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
        } else if (isalpha((unsigned char)*p) || *p == '_') {
            const char *w = p;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            size_t n = (size_t)(p - w);
            if (after_load && n == 3 && strncasecmp(w, "CSV", 3) == 0)
                return true;
            after_load = n == 4 && strncasecmp(w, "LOAD", 4) == 0;
        } else {
            if (!isspace((unsigned char)*p))
                after_load = false;
            p++;
        }
    }
    return false;
}

/* ---- interruption ---- */

static void busy_begin(bolt_conn *c, strata_view *v, bool on_writer)
{
    pthread_mutex_lock(&c->lock);
    c->busy = true;
    c->busy_view = v;
    c->busy_on_writer = on_writer;
    pthread_mutex_unlock(&c->lock);
}

static void busy_result(bolt_conn *c, strata_result *r)
{
    pthread_mutex_lock(&c->lock);
    c->busy = true;
    c->busy_result = r;
    pthread_mutex_unlock(&c->lock);
}

static void busy_end(bolt_conn *c)
{
    pthread_mutex_lock(&c->lock);
    c->busy = false;
    c->busy_view = NULL;
    c->busy_result = NULL;
    c->busy_on_writer = false;
    pthread_mutex_unlock(&c->lock);
}

void bolt_interrupt(bolt_conn *c)
{
    pthread_mutex_lock(&c->lock);
    atomic_store(&c->cancel, true);
    if (c->busy_view && c->stop)
        strata_cancel_request(c->stop);
    if (c->busy_result)
        strata_result_interrupt(c->busy_result);
    if (c->busy_on_writer)
        strata_interrupt(c->env->g);
    pthread_mutex_unlock(&c->lock);
}

/* ---- the transaction ---- */

static void tx_end(bolt_conn *c, bool commit)
{
    results_clear(c);
    if (c->tx_view)
        strata_view_release(&c->tx_view);
    if (c->holds_writer) {
        if (commit)
            strata_commit(c->env->g);
        else
            strata_rollback(c->env->g);
        c->holds_writer = false;
        writer_give_back(c);
    }
    c->in_tx = false;
    c->tx_write = false;
}

void bolt_expire_tx(bolt_conn *c)
{
    if (!c->in_tx || !c->holds_writer)
        return;
    log_line("conn %llu %s: transaction held the writer past %u ms: rolled back",
             (unsigned long long)c->id, c->peer, c->env->tx_timeout_ms);
    tx_end(c, false);
    c->tx_timed_out = true;
}

/* ---- life cycle ---- */

void bolt_conn_init(bolt_conn *c, bolt_env *env, const char *peer)
{
    *c = (bolt_conn){.env = env, .state = BOLT_NEGOTIATION};
    c->id = atomic_fetch_add(&env->next_id, 1) + 1;
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    pthread_mutex_init(&c->lock, NULL);
    atomic_init(&c->cancel, false);
}

void bolt_conn_close(bolt_conn *c)
{
    if (c->in_tx)
        tx_end(c, false);
    results_clear(c);
    strata_cancel_free(&c->stop);
    pack_free(&c->out);
    pthread_mutex_destroy(&c->lock);
}

/* Versions served, best first. */
static const struct {
    int major, minor;
} versions[] = {{5, 4}, {5, 3}, {5, 2}, {5, 1}, {5, 0}, {4, 4}};

int bolt_handshake(bolt_conn *c, const uint8_t in[20], uint8_t out[4])
{
    static const uint8_t magic[4] = {0x60, 0x60, 0xB0, 0x17};
    memset(out, 0, 4);
    if (memcmp(in, magic, 4) != 0)
        return -1;
    /* each proposal: reserved, range, minor, major; the range counts the
       minor versions below minor that are also accepted */
    for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
        for (int p = 0; p < 4; p++) {
            const uint8_t *q = in + 4 + 4 * p;
            int major = q[3], minor = q[2], range = q[1];
            if (major == versions[v].major && versions[v].minor <= minor &&
                versions[v].minor >= minor - range) {
                c->major = major;
                c->minor = versions[v].minor;
                out[2] = (uint8_t)c->minor;
                out[3] = (uint8_t)c->major;
                c->state = BOLT_CONNECTED;
                c->opts.element_ids = major >= 5;
                c->opts.utc_datetime = major >= 5;
                return 0;
            }
        }
    }
    return 0;
}

/* ---- HELLO, LOGON, LOGOFF ---- */

static int authenticate(bolt_conn *c, const strata_value *auth)
{
    char scheme[32], principal[130], credentials[512];
    map_string(auth, "scheme", scheme, sizeof scheme);
    map_string(auth, "principal", principal, sizeof principal);
    map_string(auth, "credentials", credentials, sizeof credentials);
    if (!c->env->auth) {
        snprintf(c->user, sizeof c->user, "%s", principal[0] ? principal : "neo4j");
        return 0;
    }
    bool ok = strcmp(scheme, "basic") == 0 &&
              auth_check(c->env->auth, principal, credentials);
    memset(credentials, 0, sizeof credentials);
    if (!ok) {
        reply_failure(c, "Neo.ClientError.Security.Unauthorized",
                      "The client is unauthorized due to authentication failure.");
        log_line("conn %llu %s: authentication failed for user '%s'",
                 (unsigned long long)c->id, c->peer, principal);
        c->state = BOLT_DEFUNCT;
        return -1;
    }
    snprintf(c->user, sizeof c->user, "%s", principal);
    log_line("conn %llu %s: authenticated as '%s'", (unsigned long long)c->id, c->peer,
             principal);
    return 0;
}

static int on_hello(bolt_conn *c, request *r)
{
    if (c->state != BOLT_CONNECTED)
        return -1;
    bool logon_later = c->major > 5 || (c->major == 5 && c->minor >= 1);
    if (!logon_later && authenticate(c, r->f[0]) != 0)
        return -1;
    if (c->major == 4) {
        strata_value *patches = map_get(r->f[0], "patch_bolt");
        for (size_t i = 0; patches && i < strata_value_list_len(patches); i++) {
            strata_value *p = NULL;
            const char *s;
            size_t n;
            if (strata_value_list_get(patches, i, &p) == STRATA_OK &&
                strata_value_get_string(p, &s, &n) == STRATA_OK && strcmp(s, "utc") == 0)
                c->utc_patch = c->opts.utc_datetime = true;
            strata_value_free(&p);
        }
        strata_value_free(&patches);
    }
    char agent[128];
    map_string(r->f[0], "user_agent", agent, sizeof agent);
    log_line("conn %llu %s: HELLO, Bolt %d.%d, agent '%s'", (unsigned long long)c->id, c->peer,
             c->major, c->minor, agent);
    char conn_id[32];
    snprintf(conn_id, sizeof conn_id, "bolt-%llu", (unsigned long long)c->id);
    pack_buf m = {0};
    success_begin(&m, c->utc_patch ? 4 : 3);
    pack_cstr(&m, "server");
    pack_cstr(&m, SERVER_AGENT);
    pack_cstr(&m, "connection_id");
    pack_cstr(&m, conn_id);
    pack_cstr(&m, "hints");
    pack_map_header(&m, 0);
    if (c->utc_patch) {
        pack_cstr(&m, "patch_bolt");
        pack_list_header(&m, 1);
        pack_cstr(&m, "utc");
    }
    int rc = emit(c, &m);
    pack_free(&m);
    c->state = logon_later ? BOLT_AUTHENTICATION : BOLT_READY;
    return rc;
}

static int on_logon(bolt_conn *c, request *r)
{
    if (c->state != BOLT_AUTHENTICATION)
        return -1;
    if (authenticate(c, r->f[0]) != 0)
        return -1;
    c->state = BOLT_READY;
    return reply_success_empty(c);
}

/* ---- RUN ---- */

static int send_run_success(bolt_conn *c, bolt_result *br, bool with_qid)
{
    const char *const *names;
    size_t n = br->r ? strata_result_columns(br->r, &names) : br->c->ncols;
    if (!br->r)
        names = br->c->names;
    pack_buf m = {0};
    success_begin(&m, with_qid ? 3 : 2);
    pack_cstr(&m, "fields");
    pack_list_header(&m, n);
    for (size_t i = 0; i < n; i++)
        pack_cstr(&m, names[i]);
    pack_cstr(&m, "t_first");
    pack_int(&m, 0);
    if (with_qid) {
        pack_cstr(&m, "qid");
        pack_int(&m, br->qid);
    }
    int rc = emit(c, &m);
    pack_free(&m);
    return rc;
}

/* Runs text on a new view of the committed state (auto-commit) or on the
   read transaction's view. */
static strata_result *run_on_view(bolt_conn *c, const char *text, const strata_value *params)
{
    strata_view *v = NULL;
    strata_result *r = NULL;
    if (c->tx_view) {
        if (strata_view_clone(c->tx_view, &v) != STRATA_OK)
            return NULL;
    } else if (strata_snapshot(c->env->g, &v) != STRATA_OK) {
        return NULL;
    }
    /* A view query is stopped through the connection's cancel handle
       (made once; without it, the query runs to its end). */
    pthread_mutex_lock(&c->lock);
    if (!c->stop && strata_cancel_new(&c->stop) != STRATA_OK)
        c->stop = NULL;
    pthread_mutex_unlock(&c->lock);
    busy_begin(c, v, false);
    if (!atomic_load(&c->cancel))
        strata_view_query_cancellable(v, text, params, c->stop, &r);
    busy_end(c);
    strata_view_release(&v);
    return r;
}

static strata_result *run_on_writer(bolt_conn *c, const char *text, const strata_value *params)
{
    strata_result *r = NULL;
    busy_begin(c, NULL, true);
    if (!atomic_load(&c->cancel))
        strata_query(c->env->g, text, params, &r);
    busy_end(c);
    return r;
}

static int on_run(bolt_conn *c, request *r)
{
    bool in_tx = c->state == BOLT_TX_READY || c->state == BOLT_TX_STREAMING;
    if (c->state != BOLT_READY && !in_tx)
        return reply_failure(c, "Neo.ClientError.Request.Invalid",
                             "RUN is not allowed in this state");
    if (c->tx_timed_out)
        return reply_failure(c, "Neo.ClientError.Transaction.TransactionTimedOut",
                             "the transaction held the writer longer than %u ms and was "
                             "rolled back",
                             c->env->tx_timeout_ms);
    const char *text;
    size_t len;
    if (strata_value_get_string(r->f[0], &text, &len) != STRATA_OK ||
        strata_value_type(r->f[1]) != STRATA_MAP)
        return reply_failure(c, "Neo.ClientError.Request.Invalid",
                             "RUN takes a query string and a parameter map");
    if (in_tx && c->nresults == BOLT_MAX_OPEN_RESULTS)
        return reply_failure(c, "Neo.ClientError.Request.Invalid",
                             "more than %d results open in one transaction",
                             BOLT_MAX_OPEN_RESULTS);
    if (has_load_csv(text))
        return reply_failure(c, "Neo.ClientError.Security.Forbidden",
                             "LOAD CSV is disabled in the server: it would read the "
                             "server's files on a client's behalf");
    if (!in_tx)
        results_clear(c);
    bolt_result br = {.qid = in_tx ? c->next_qid++ : -1, .autocommit = !in_tx};
    bool matched;
    br.c = probe_answer(c, text, &matched);
    if (matched && !br.c)
        return reply_failure(c, "Neo.TransientError.General.OutOfMemoryError",
                             "out of memory answering a probe");
    if (!matched) {
        char mode[8] = "";
        if (r->nfields == 3)
            map_string(r->f[2], "mode", mode, sizeof mode);
        bool write_tx = in_tx && c->tx_write;
        /* An auto-commit statement that writes goes to the writer; one
           that reads, or any in a read transaction or read mode, to a view
           (which refuses a write with the engine's error). */
        bool writes = false;
        if (!in_tx && strcmp(mode, "r") != 0 &&
            strata_query_writes(c->env->g, text, &writes) != STRATA_OK)
            writes = false;   /* not a statement: the view reports why */
        if (write_tx) {
            br.r = run_on_writer(c, text, r->f[1]);
        } else if (writes) {
            int took = writer_take(c);
            if (took == BOLT_WAIT)
                return BOLT_WAIT;
            if (took != 0)
                return reply_failure(c, "Neo.TransientError.Transaction.LockClientStopped",
                                     "the writer stayed busy for %u ms", c->env->tx_timeout_ms);
            br.r = run_on_writer(c, text, r->f[1]);
            writer_give_back(c);
        } else {
            br.r = run_on_view(c, text, r->f[1]);
            br.on_view = true;
        }
        if (!br.r)
            return reply_failure(c, "Neo.TransientError.General.OutOfMemoryError",
                                 "out of memory starting the query");
        const strata_query_error *e = strata_result_error(br.r);
        if (e) {
            int rc = reply_query_error(c, e, text);
            strata_result_free(&br.r);
            return rc;
        }
    }
    c->results[c->nresults++] = br;
    c->state = in_tx ? BOLT_TX_STREAMING : BOLT_STREAMING;
    return send_run_success(c, &c->results[c->nresults - 1], in_tx);
}

/* ---- PULL and DISCARD ---- */

static int send_record(bolt_conn *c, bolt_result *br, const strata_value *const *row)
{
    pack_buf m = {0};
    size_t n = br->r ? strata_result_columns(br->r, &(const char *const *){0}) : br->c->ncols;
    strata_view *view = br->r ? strata_result_view(br->r) : NULL;
    pack_struct_header(&m, 1, MSG_RECORD);
    pack_list_header(&m, n);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = pack_value(&m, row[i], view, &c->opts);
    if (rc != 0) {
        pack_free(&m);
        return -2;
    }
    rc = emit(c, &m);
    pack_free(&m);
    return rc;
}

/* The next row of br, or NULL at its end. */
static const strata_value *const *next_row(bolt_conn *c, bolt_result *br)
{
    if (br->pending_row) {
        br->pending_row = false;
        return br->row;
    }
    if (br->c) {
        if (br->c->next == br->c->nrows)
            return NULL;
        return (const strata_value *const *)&br->c->cells[br->c->ncols * br->c->next++];
    }
    const strata_value *const *row = NULL;
    busy_result(c, br->r);
    bool more = !atomic_load(&c->cancel) && strata_result_next(br->r, &row);
    busy_end(c);
    return more ? row : NULL;
}

static void pack_stats(pack_buf *m, const strata_query_stats *s)
{
    const struct {
        const char *key;
        uint64_t n;
    } counts[] = {{"nodes-created", s->nodes_created},
                  {"nodes-deleted", s->nodes_deleted},
                  {"relationships-created", s->relationships_created},
                  {"relationships-deleted", s->relationships_deleted},
                  {"properties-set", s->properties_set},
                  {"labels-added", s->labels_added},
                  {"labels-removed", s->labels_removed}};
    size_t nonzero = 0;
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        nonzero += counts[i].n != 0;
    pack_map_header(m, nonzero ? nonzero + 1 : 0);
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (counts[i].n) {
            pack_cstr(m, counts[i].key);
            pack_int(m, (int64_t)counts[i].n);
        }
    if (nonzero) {
        pack_cstr(m, "contains-updates");
        pack_bool(m, true);
    }
}

/* The SUCCESS that ends a result. */
static int send_summary(bolt_conn *c, bolt_result *br)
{
    strata_query_stats s = {0};
    if (br->r)
        strata_result_stats(br->r, &s);
    bool wrote = s.nodes_created || s.nodes_deleted || s.relationships_created ||
                 s.relationships_deleted || s.properties_set || s.labels_added ||
                 s.labels_removed;
    pack_buf m = {0};
    success_begin(&m, br->autocommit ? 5 : 4);
    pack_cstr(&m, "type");
    pack_cstr(&m, wrote ? "rw" : br->on_view ? "r" : "w");
    pack_cstr(&m, "t_last");
    pack_int(&m, 0);
    pack_cstr(&m, "db");
    pack_cstr(&m, "neo4j");
    pack_cstr(&m, "stats");
    pack_stats(&m, &s);
    if (br->autocommit) {
        char bookmark[48];
        snprintf(bookmark, sizeof bookmark, "strata:%llu",
                 (unsigned long long)atomic_load(&c->env->commits));
        pack_cstr(&m, "bookmark");
        pack_cstr(&m, bookmark);
    }
    int rc = emit(c, &m);
    pack_free(&m);
    return rc;
}

static int on_pull(bolt_conn *c, request *r, bool discard)
{
    bool in_tx = c->state == BOLT_TX_STREAMING || c->state == BOLT_TX_READY;
    if (c->state != BOLT_STREAMING && !in_tx)
        return reply_failure(c, "Neo.ClientError.Request.Invalid",
                             "%s is not allowed in this state", discard ? "DISCARD" : "PULL");
    int64_t n = r->nfields ? map_int(r->f[0], "n", -1) : -1;
    int64_t qid = r->nfields ? map_int(r->f[0], "qid", -1) : -1;
    if (n == 0 || n < -1)
        return reply_failure(c, "Neo.ClientError.Request.Invalid",
                             "n should be -1 or positive, not %lld", (long long)n);
    size_t at = c->nresults;
    for (size_t i = 0; i < c->nresults; i++)
        if (qid == -1 ? i == c->nresults - 1 : c->results[i].qid == qid)
            at = i;
    if (at == c->nresults)
        return reply_failure(c, "Neo.ClientError.Request.Invalid",
                             "no open result with qid %lld", (long long)qid);
    bolt_result *br = &c->results[at];
    if (discard && n == -1) {
        /* the rest is dropped uncomputed: a lazy result stops here */
        int rc = send_summary(c, br);
        result_remove(c, at);
        if (!in_tx)
            c->state = BOLT_READY;
        else if (c->nresults == 0)
            c->state = BOLT_TX_READY;
        return rc;
    }
    bool more = true;
    for (int64_t sent = 0; n == -1 || sent < n; sent++) {
        const strata_value *const *row = next_row(c, br);
        if (!row) {
            more = false;
            break;
        }
        if (!discard) {
            int rc = send_record(c, br, row);
            if (rc == -2)
                return reply_failure(c, "Neo.DatabaseError.General.UnknownError",
                                     "a row could not be written");
            if (rc != 0)
                return -1;
        }
    }
    if (more) {
        /* look one row ahead: has_more only when there is one */
        const strata_value *const *row = next_row(c, br);
        if (row) {
            br->pending_row = true;
            br->row = row;
        } else {
            more = false;
        }
    }
    const strata_query_error *e = br->r ? strata_result_error(br->r) : NULL;
    if (!more && (e || atomic_load(&c->cancel))) {
        strata_query_error cancelled = {"Interrupted", NULL, "the query was interrupted", 1,
                                        1};
        int rc = reply_query_error(c, e ? e : &cancelled, "");
        result_remove(c, at);
        return rc;
    }
    if (more) {
        pack_buf m = {0};
        success_begin(&m, 1);
        pack_cstr(&m, "has_more");
        pack_bool(&m, true);
        int rc = emit(c, &m);
        pack_free(&m);
        return rc;
    }
    int rc = send_summary(c, br);
    result_remove(c, at);
    if (!in_tx)
        c->state = BOLT_READY;
    else if (c->nresults == 0)
        c->state = BOLT_TX_READY;
    return rc;
}

/* ---- transactions ---- */

static int on_begin(bolt_conn *c, request *r)
{
    if (c->state != BOLT_READY)
        return reply_failure(c, "Neo.ClientError.Request.Invalid",
                             "BEGIN is not allowed in this state");
    char mode[8] = "";
    if (r->nfields == 1)
        map_string(r->f[0], "mode", mode, sizeof mode);
    c->tx_timed_out = false;
    c->next_qid = 0;
    if (strcmp(mode, "r") == 0) {
        if (strata_snapshot(c->env->g, &c->tx_view) != STRATA_OK)
            return reply_failure(c, "Neo.TransientError.General.OutOfMemoryError",
                                 "out of memory taking a view");
        c->tx_write = false;
    } else {
        int took = writer_take(c);
        if (took == BOLT_WAIT)
            return BOLT_WAIT;
        if (took != 0)
            return reply_failure(c, "Neo.TransientError.Transaction.LockClientStopped",
                                 "the writer stayed busy for %u ms", c->env->tx_timeout_ms);
        if (strata_begin(c->env->g) != STRATA_OK) {
            writer_give_back(c);
            return reply_failure(c, "Neo.DatabaseError.Transaction.TransactionStartFailed",
                                 "%s", strata_errmsg(c->env->g));
        }
        c->holds_writer = true;
        c->tx_write = true;
    }
    c->in_tx = true;
    c->state = BOLT_TX_READY;
    return reply_success_empty(c);
}

static int on_commit(bolt_conn *c, bool commit)
{
    if (c->state != BOLT_TX_READY && c->state != BOLT_TX_STREAMING)
        return reply_failure(c, "Neo.ClientError.Request.Invalid",
                             "%s is not allowed outside a transaction",
                             commit ? "COMMIT" : "ROLLBACK");
    if (c->tx_timed_out) {
        c->tx_timed_out = false;
        c->state = BOLT_READY;
        if (!commit)
            return reply_success_empty(c);
        return reply_failure(c, "Neo.ClientError.Transaction.TransactionTimedOut",
                             "the transaction held the writer longer than %u ms and was "
                             "rolled back",
                             c->env->tx_timeout_ms);
    }
    bool wrote = c->holds_writer;
    tx_end(c, commit);
    c->state = BOLT_READY;
    if (!commit)
        return reply_success_empty(c);
    uint64_t n = wrote ? atomic_fetch_add(&c->env->commits, 1) + 1
                       : atomic_load(&c->env->commits);
    char bookmark[48];
    snprintf(bookmark, sizeof bookmark, "strata:%llu", (unsigned long long)n);
    pack_buf m = {0};
    success_begin(&m, 1);
    pack_cstr(&m, "bookmark");
    pack_cstr(&m, bookmark);
    int rc = emit(c, &m);
    pack_free(&m);
    return rc;
}

/* ---- ROUTE, TELEMETRY, RESET ---- */

static int on_route(bolt_conn *c)
{
    if (c->state != BOLT_READY)
        return reply_failure(c, "Neo.ClientError.Request.Invalid",
                             "ROUTE is not allowed in this state");
    strata_value *servers = routing_servers(c);
    if (!servers)
        return reply_failure(c, "Neo.TransientError.General.OutOfMemoryError",
                             "out of memory");
    pack_buf m = {0};
    success_begin(&m, 1);
    pack_cstr(&m, "rt");
    pack_map_header(&m, 3);
    pack_cstr(&m, "ttl");
    pack_int(&m, 300);
    pack_cstr(&m, "db");
    pack_cstr(&m, "neo4j");
    pack_cstr(&m, "servers");
    pack_value(&m, servers, NULL, &c->opts);
    strata_value_free(&servers);
    int rc = emit(c, &m);
    pack_free(&m);
    return rc;
}

static int on_reset(bolt_conn *c)
{
    if (c->in_tx)
        tx_end(c, false);
    results_clear(c);
    c->tx_timed_out = false;
    atomic_store(&c->cancel, false);
    if (c->stop)
        strata_cancel_reset(c->stop);
    if (c->resets_pending)
        c->resets_pending--;
    bool authenticated = c->state != BOLT_AUTHENTICATION && c->state != BOLT_CONNECTED;
    if (authenticated)
        c->state = BOLT_READY;
    return reply_success_empty(c);
}

bool bolt_is_reset(const uint8_t *msg, size_t len)
{
    return len == 2 && msg[0] == 0xB0 && msg[1] == REQ_RESET;
}

/* ---- dispatch ---- */

/* Requests allowed before authentication completes. */
static bool allowed_unauthenticated(uint8_t tag)
{
    return tag == REQ_HELLO || tag == REQ_LOGON || tag == REQ_GOODBYE || tag == REQ_RESET;
}

int bolt_message(bolt_conn *c, const uint8_t *msg, size_t len)
{
    if (c->state == BOLT_NEGOTIATION || c->state == BOLT_DEFUNCT)
        return -1;
    request r;
    char why[256];
    if (request_parse(c, msg, len, &r, why, sizeof why) != 0) {
        log_line("conn %llu %s: closed: %s", (unsigned long long)c->id, c->peer, why);
        c->state = BOLT_DEFUNCT;
        return -1;
    }
    int rc = 0;
    bool authed = c->state != BOLT_CONNECTED && c->state != BOLT_AUTHENTICATION;
    if (!authed && !allowed_unauthenticated(r.tag)) {
        log_line("conn %llu %s: closed: %s before authentication", (unsigned long long)c->id,
                 c->peer, request_name(r.tag));
        rc = -1;
    } else if (r.tag == REQ_GOODBYE) {
        log_line("conn %llu %s: GOODBYE", (unsigned long long)c->id, c->peer);
        rc = -1;
    } else if (r.tag == REQ_RESET) {
        rc = on_reset(c);
    } else if (c->state == BOLT_FAILED || (c->resets_pending && authed)) {
        /* failed, or interrupted by a RESET already queued */
        rc = reply_ignored(c);
    } else {
        switch (r.tag) {
        case REQ_HELLO:
            rc = on_hello(c, &r);
            break;
        case REQ_LOGON:
            rc = on_logon(c, &r);
            break;
        case REQ_LOGOFF:
            if (c->state != BOLT_READY || (c->major == 5 && c->minor < 1) || c->major < 5) {
                rc = reply_failure(c, "Neo.ClientError.Request.Invalid",
                                   "LOGOFF is not allowed in this state");
            } else {
                c->state = BOLT_AUTHENTICATION;
                c->user[0] = '\0';
                rc = reply_success_empty(c);
            }
            break;
        case REQ_RUN:
            rc = on_run(c, &r);
            break;
        case REQ_PULL:
        case REQ_DISCARD:
            rc = on_pull(c, &r, r.tag == REQ_DISCARD);
            break;
        case REQ_BEGIN:
            rc = on_begin(c, &r);
            break;
        case REQ_COMMIT:
        case REQ_ROLLBACK:
            rc = on_commit(c, r.tag == REQ_COMMIT);
            break;
        case REQ_ROUTE:
            rc = on_route(c);
            break;
        case REQ_TELEMETRY:
            rc = reply_success_empty(c);
            break;
        default:
            rc = -1;
        }
        if (rc < 0 && c->state != BOLT_DEFUNCT)
            log_line("conn %llu %s: closed: %s out of place or not answerable",
                     (unsigned long long)c->id, c->peer, request_name(r.tag));
    }
    request_free(&r);
    if (rc < 0)
        c->state = BOLT_DEFUNCT;
    return rc;
}
