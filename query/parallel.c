/* parallel — a pipeline's first scan read on several threads, partial
   states merged in morsel order (parallel.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "query/parallel.h"
#include "query/plan_start.h"
#include "query/profile.h"
#include "query/project.h"
#include "query/regex.h"
#include "query/walk_stack.h"

unsigned parallel_threads(exec *x)
{
    if (x->parallel_worker)
        return 1;
    unsigned n = atomic_load(&exec_view(x)->ver->cat->query_threads);
    if (n == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus > 0 ? (unsigned)cpus : 1;
    }
    return n > 64 ? 64 : n;
}

void parallel_exec_init(exec *w, exec *x)
{
    *w = *x;
    w->g = NULL;                            /* reads the fixed version below */
    w->view.ver = exec_view(x)->ver;
    memset(&w->err, 0, sizeof w->err);
    w->used_rels = NULL;
    w->nused = w->capused = w->used_base = 0;
    w->prof = NULL;
    w->regexes = NULL;
    w->ticks = 0;
    w->arena = NULL;                        /* the statement's is one thread's */
    w->no_arena = 0;
    w->parallel_worker = true;
}

void parallel_exec_fini(exec *w)
{
    regex_cache_free(w);
    if (w->used_rels)
        mem_free(w->m, w->used_rels);
    w->used_rels = NULL;
}

/* ---- deciding ---- */

struct parallel_plan {
    const cypher_ast_node *const *clauses;
    size_t n;
    size_t upto;                /* workers open clauses [0, upto] */
    partial_kind kind;          /* what clause upto's holding step keeps */
    stage *step;                /* the statement's own holding step */
    bool unordered;             /* an aggregation each worker keeps across
                                   its morsels (aggregate_partial_gather) */
    parallel_before b;          /* the scope and width to open them from */
};

bool parallel_may_apply(const exec *x, const cypher_ast_node *const *clauses, size_t n,
                        const rowset *in)
{
    return x->reads_only && !x->nested && !x->parallel_worker && n >= 2 &&
           clauses[0]->kind == CYPHER_AST_MATCH && !clauses[0]->u.match.optional &&
           (in->nrows == 1 || x->no_input);
}

int parallel_before_take(exec *x, const scope *sc, parallel_before *b)
{
    b->width = x->width;
    b->run_next = x->run_next;
    b->sc = (scope){0};
    if (scope_copy(x, sc, &b->sc) != 0)
        return -1;
    b->taken = true;
    return 0;
}

void parallel_before_free(parallel_before *b)
{
    if (b->taken)
        scope_free(&b->sc);
    b->taken = false;
}

/* EXPLAIN / PROFILE: the plan on the first clause's row. */
static void note_plan(exec *x, size_t first_step, unsigned threads)
{
    if (!x->prof || first_step >= x->prof->n)
        return;
    char *plan = x->prof->steps[first_step].plan;
    size_t len = strlen(plan);
    snprintf(plan + len, sizeof x->prof->steps[first_step].plan - len,
             "%sParallel (%u worker%s, morsels of %d)", len ? ", " : "", threads,
             threads == 1 ? "" : "s", PARALLEL_MORSEL);
}

/* Whether a LIMIT after DISTINCT (clause upto) can end the input before
   its last row: the ordered merge then stops at the first morsels, where
   states kept per worker would have read them all.  A LIMIT behind an
   ORDER BY waits for every row anyway. */
static bool may_stop_early(const cypher_ast_node *const *clauses, size_t upto, size_t n)
{
    if (clauses[upto]->u.projection.limit && !clauses[upto]->u.projection.order.count)
        return true;
    for (size_t i = upto + 1; i < n; i++)
        if ((clauses[i]->kind == CYPHER_AST_WITH || clauses[i]->kind == CYPHER_AST_RETURN) &&
            clauses[i]->u.projection.limit)
            return true;
    return false;
}

int parallel_plan_make(exec *x, const cypher_ast_node *const *clauses, size_t n, stage *st,
                       parallel_before *b, size_t first_step, parallel_plan **out)
{
    *out = NULL;
    const start_plan *scan = st[0].scan ? st[0].scan(&st[0]) : NULL;
    size_t upto = 1;
    partial_kind kind = PARTIAL_NONE;
    stage *step = NULL;
    /* the stages after the first: MATCH (absorbed into a join or not),
       UNWIND and projections that hold nothing run row by row, up to the
       first projection that holds rows */
    if (scan && scan->estimate >= PARALLEL_MIN)
        for (; upto < n; upto++) {
            if (st[upto].absorbed || st[upto].clause->kind == CYPHER_AST_MATCH ||
                st[upto].clause->kind == CYPHER_AST_UNWIND)
                continue;
            if (!project_partial_step(&st[upto], &kind, &step))
                break;
            if (kind != PARTIAL_NONE)
                break;
        }
    if (kind == PARTIAL_NONE || upto == n) {
        parallel_before_free(b);
        return 0;
    }
    parallel_plan *pp = exec_calloc(x, sizeof *pp);
    if (!pp) {
        parallel_before_free(b);
        return exec_oom(x);
    }
    *pp = (parallel_plan){.clauses = clauses, .n = n, .upto = upto, .kind = kind, .step = step,
                          .unordered = kind == PARTIAL_AGGREGATE
                                           ? aggregate_partial_unordered_ok(step)
                                           : kind == PARTIAL_DISTINCT &&
                                                 !may_stop_early(clauses, upto, n),
                          .b = *b};
    b->taken = false;
    note_plan(x, first_step, parallel_threads(x));
    *out = pp;
    return 0;
}

void parallel_plan_free(exec *x, parallel_plan **pp)
{
    if (!*pp)
        return;
    parallel_before_free(&(*pp)->b);
    exec_free(x, *pp);
    *pp = NULL;
}

/* ---- running ---- */

/* A morsel's outcome, in the ring of slots. */
typedef struct morsel_slot {
    void *partial;              /* the holding step's state, or NULL */
    bool done;
    bool failed;                /* the morsel ended in an error: */
    qerror *err;                /* the worker's (NULL: no room to keep it) */
} morsel_slot;

typedef struct prun prun;

typedef struct pworker {
    prun *run;
    exec x;
    scope sc;
    pipeline *pipe;             /* clauses [0, upto] */
    stage *first, *step;
    value *row;                 /* the input row widened (borrowed cells) */
    uint64_t ids[PARALLEL_MORSEL];   /* the morsel's candidates */
    pthread_t thread;
} pworker;

/* Shared by the workers, every field under lock. */
struct prun {
    pthread_mutex_t lock;
    pthread_cond_t merged_more; /* merged grew, or the run halted */
    exec *x;                    /* the statement's: merging only */
    parallel_plan *pp;
    strata_node_iter *it;       /* the start candidates, read a morsel at a time */
    size_t taken;               /* morsels handed out */
    size_t merged;              /* morsels merged */
    size_t stop_at;             /* morsels from here on are not merged */
    morsel_slot *ring;          /* nring slots: morsel m in m % nring */
    size_t nring;
    int rc;                     /* the merge's outcome: 0, EXEC_STOP, -1 */
    bool unordered;             /* no partials per morsel: each worker keeps
                                   one state, gathered at the end */
    bool failed, oom;           /* unordered: a morsel failed (out of memory) */
};

/* Opens a worker's copy of the pipeline up to the holding step, and
   begins the input row on it: *it gets its start candidates. */
static int worker_open(pworker *w, prun *r, const value *in, size_t in_width,
                       strata_node_iter **it)
{
    parallel_plan *pp = r->pp;
    exec *x = &w->x;
    parallel_exec_init(x, r->x);
    x->width = pp->b.width;
    /* the clause after the holding one consumes its rows, as in the
       statement's pipeline */
    x->run_next = pp->upto + 1 < pp->n ? pp->clauses[pp->upto + 1] : pp->b.run_next;
    if (scope_copy(x, &pp->b.sc, &w->sc) != 0)
        return -1;
    rowset none;
    rowset_init(&none, in_width);
    w->pipe = pipeline_open(x, pp->clauses, pp->upto + 1, &w->sc, &none, NULL);
    if (!w->pipe)
        return -1;
    w->first = pipeline_stage(w->pipe, 0);
    partial_kind k;
    if (!project_partial_step(pipeline_stage(w->pipe, pp->upto), &k, &w->step) || k != pp->kind)
        return exec_fail(x, NULL, "InternalError", NULL, "a worker planned differently");
    step_partial_collect(w->step, k);
    if (r->unordered)
        step_partial_unordered(w->step, k);
    w->row = mem_calloc(x->m, (x->width ? x->width : 1) * sizeof *w->row);
    if (!w->row)
        return exec_oom(x);
    for (size_t i = 0; i < in_width && i < x->width; i++)
        w->row[i] = in[i];   /* borrowed */
    return w->first->begin_scan(x, w->first, w->row, it);
}

static void worker_close(pworker *w)
{
    exec *x = &w->x;
    pipeline_close(x, &w->pipe);
    if (w->row)
        mem_free(x->m, w->row);
    scope_free(&w->sc);
    parallel_exec_fini(x);
}

/* Ends the run: nothing more is merged, and waiting workers leave. */
static void halt(prun *r, int rc)
{
    r->rc = rc;
    r->stop_at = r->merged;
    pthread_cond_broadcast(&r->merged_more);
}

/* Merges the morsels that are done, in order (under lock). */
static void merge_ready(prun *r)
{
    exec *x = r->x;
    size_t before = r->merged;
    while (r->rc == 0 && r->merged < r->stop_at) {
        morsel_slot *s = &r->ring[r->merged % r->nring];
        if (!s->done)
            break;
        int rc = s->partial ? step_partial_merge(x, r->pp->step, r->pp->kind, s->partial) : 0;
        step_partial_free(x, r->pp->kind, s->partial);
        s->partial = NULL;
        s->done = false;
        if (rc == 0 && s->failed) {
            if (s->err)
                x->err = *s->err;
            rc = s->err ? -1 : exec_oom(x);   /* no room was left to keep it */
        }
        if (s->err)
            mem_free(x->m, s->err);
        s->err = NULL;
        if (rc != 0) {
            halt(r, rc);
            return;
        }
        r->merged++;
    }
    if (r->merged != before)
        pthread_cond_broadcast(&r->merged_more);
}

/* Takes the next morsel's candidates into w->ids (under lock): its
   number, or SIZE_MAX when there is none to run. */
static size_t take_morsel(pworker *w, size_t *n)
{
    prun *r = w->run;
    *n = 0;
    if (r->taken >= r->stop_at)
        return SIZE_MAX;
    strata_id id;
    while (*n < PARALLEL_MORSEL && r->it && strata_node_iter_next(r->it, &id))
        w->ids[(*n)++] = id;
    if (*n == 0)
        return SIZE_MAX;
    size_t m = r->taken++;
    while (!r->unordered && m >= r->merged + r->nring && m < r->stop_at)
        pthread_cond_wait(&r->merged_more, &r->lock);
    return m < r->stop_at ? m : SIZE_MAX;
}

/* Unordered: one morsel through the worker's pipeline into its own
   state; a failure stops every worker (the run is then taken again in
   order, or fails out of memory).  Returns holding the lock; 0 or -1. */
static int run_morsel_unordered(pworker *w, size_t m, size_t n)
{
    prun *r = w->run;
    exec *x = &w->x;
    int rc = 0;
    step_partial_morsel(w->step, r->pp->kind, m);
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = exec_tick(x);
        if (rc == 0)
            rc = w->first->from(x, w->first, w->ids[i]);
    }
    pthread_mutex_lock(&r->lock);
    if (rc != 0) {
        r->failed = true;
        r->oom |= x->err.category && strcmp(x->err.category, "OutOfMemory") == 0;
        r->stop_at = 0;
        return -1;
    }
    return 0;
}

/* One morsel through the worker's pipeline, its outcome into its slot
   (written under lock, which is held on return); 0 or -1. */
static int run_morsel(pworker *w, size_t m, size_t n)
{
    prun *r = w->run;
    if (r->unordered)
        return run_morsel_unordered(w, m, n);
    exec *x = &w->x;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = exec_tick(x);
        if (rc == 0)
            rc = w->first->from(x, w->first, w->ids[i]);
    }
    void *partial = step_partial_take(x, w->step, r->pp->kind);
    if (!partial && rc == 0)
        rc = exec_oom(x);
    qerror *err = NULL;
    if (rc != 0 && (err = mem_alloc(x->m, sizeof *err)) != NULL)
        *err = x->err;
    pthread_mutex_lock(&r->lock);
    morsel_slot *s = &r->ring[m % r->nring];
    *s = (morsel_slot){.partial = partial, .done = true, .failed = rc != 0, .err = err};
    if (rc != 0 && m + 1 < r->stop_at)
        r->stop_at = m + 1;     /* later morsels cannot matter */
    merge_ready(r);
    return rc != 0 ? -1 : 0;
}

static void work(pworker *w)
{
    prun *r = w->run;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        size_t n, m = take_morsel(w, &n);
        if (m == SIZE_MAX)
            break;
        pthread_mutex_unlock(&r->lock);
        if (run_morsel(w, m, n) != 0)   /* returns holding the lock */
            break;                      /* this worker's state is spent */
    }
    pthread_mutex_unlock(&r->lock);
}

static void *worker_thread(void *arg)
{
    work(arg);
    return NULL;
}

/* PROFILE: the rows each stage before the holding one produced, over
   the workers. */
static void count_rows(pworker *ws, unsigned opened, stage *st, size_t upto)
{
    for (unsigned t = 0; t < opened; t++)
        for (size_t i = 0; ws[t].pipe && i < upto; i++)
            st[i].rows += pipeline_stage(ws[t].pipe, i)->rows;
}

/* Unordered: the workers' states into the statement's step; 0,
   EXEC_STOP or -1, with *again set when the run must be taken in order
   instead. */
static int gather(exec *x, prun *r, pworker *ws, unsigned opened, bool *again)
{
    if (r->failed) {
        *again = !r->oom;
        return r->oom ? exec_oom(x) : 0;
    }
    stage *parts[opened ? opened : 1];
    for (unsigned t = 0; t < opened; t++)
        parts[t] = ws[t].step;
    return step_partial_gather(x, r->pp->step, r->pp->kind, parts, opened, again);
}

/* One run of the pipeline's first scan over the threads; *again is set
   when an unordered run must be taken again in order. */
static int run_once(exec *x, parallel_plan *pp, stage *st, const value *row, size_t in_width,
                    bool unordered, bool *again)
{
    *again = false;
    unsigned threads = parallel_threads(x);
    prun r = {.x = x, .pp = pp, .stop_at = SIZE_MAX, .nring = (size_t)threads * PARALLEL_AHEAD,
              .unordered = unordered};
    pworker *ws = mem_calloc(x->m, threads * sizeof *ws);
    r.ring = ws ? mem_calloc(x->m, r.nring * sizeof *r.ring) : NULL;
    if (!r.ring) {
        if (ws)
            mem_free(x->m, ws);
        return exec_oom(x);
    }
    int rc = 0;
    unsigned opened = 0;
    /* every copy is opened here, one after another: planning is the
       statement's, and an allocation failure is met in one order */
    for (; opened < threads && rc == 0; opened++) {
        strata_node_iter *it = NULL;
        ws[opened].run = &r;
        rc = worker_open(&ws[opened], &r, row, in_width, &it);
        if (opened == 0)
            r.it = it;          /* the first copy's candidates are the ones read */
        else
            strata_node_iter_free(&it);
        if (rc != 0)
            x->err = ws[opened].x.err;
    }
    if (rc == 0) {
        pthread_mutex_init(&r.lock, NULL);
        pthread_cond_init(&r.merged_more, NULL);
        unsigned started = 1;
        for (; started < opened; started++)
            if (pthread_create(&ws[started].thread, NULL, worker_thread, &ws[started]) != 0)
                break;   /* fewer threads: the rest is shared by those running */
        work(&ws[0]);
        for (unsigned t = 1; t < started; t++)
            pthread_join(ws[t].thread, NULL);
        merge_ready(&r);   /* every morsel taken before stop_at is done now */
        rc = r.rc;
        pthread_cond_destroy(&r.merged_more);
        pthread_mutex_destroy(&r.lock);
        if (rc == 0 && unordered)
            rc = gather(x, &r, ws, opened, again);
    }
    for (size_t i = 0; i < r.nring; i++) {
        step_partial_free(x, pp->kind, r.ring[i].partial);
        if (r.ring[i].err)
            mem_free(x->m, r.ring[i].err);
    }
    strata_node_iter_free(&r.it);
    mem_free(x->m, r.ring);
    if (!*again)
        count_rows(ws, opened, st, pp->upto);
    for (unsigned t = 0; t < opened; t++)
        worker_close(&ws[t]);
    mem_free(x->m, ws);
    return rc;
}

int parallel_run(exec *x, parallel_plan *pp, stage *st, const value *row, size_t in_width)
{
    exec_read_clock(x);   /* once for every worker */
    bool again = false;
    int rc = run_once(x, pp, st, row, in_width, pp->unordered, &again);
    if (rc == 0 && again)
        rc = run_once(x, pp, st, row, in_width, false, &again);
    return rc;
}
