/* pipeline — running a run of streaming clauses as one pass, at once or in
   steps (pipeline.h). */
#include "query/pipeline.h"
#include "query/join.h"
#include "query/parallel.h"
#include "query/profile.h"

struct pipeline {
    size_t n, opened;
    rowset in;              /* the first stage's input, owned */
    size_t next_in;         /* the next input row to take */
    value *wide;            /* an input row widened to x->width (borrowed
                               cells), valid until the next row is taken */
    size_t width;           /* x->width once every stage is open */
    bool row_open;          /* a stepping first stage is inside an input row */
    bool finished;          /* no more input will be taken */
    size_t flushed;         /* then: stages [0, flushed) have finished */
    size_t first_step;      /* PROFILE: this pipeline's first step */
    double started;
    parallel_plan *par;     /* read on several threads (parallel.h), or NULL */
    stage st[];             /* n stages */
};

static size_t pipeline_size(size_t n) { return sizeof(pipeline) + n * sizeof(stage); }

int stage_emit(exec *x, stage *s, const value *row)
{
    s->rows++;
    if (s->next)
        return s->next->row(x, s->next, row);
    if (s->parent)
        return stage_emit(x, s->parent, row);
    /* the last stage keeps its rows: copies of the cells it may own */
    size_t w = s->out->width;
    value copy[w ? w : 1];
    for (size_t i = 0; i < w; i++)
        copy[i] = value_retain(row[i]);
    return rowset_push(x, s->out, copy);
}

int stage_emit_times(exec *x, stage *s, const value *row, uint64_t n)
{
    if (s->next && s->next->row_times) {
        s->rows++;          /* one row passed on, standing for n */
        return s->next->row_times(x, s->next, row, n);
    }
    for (uint64_t i = 0; i < n; i++) {
        int rc = stage_emit(x, s, row);
        if (rc == 0 && i % EXEC_TICK_EVERY == EXEC_TICK_EVERY - 1)
            rc = exec_check_interrupt(x);
        if (rc != 0)
            return rc;
    }
    return 0;
}

bool stage_streams(const cypher_ast_node *clause)
{
    switch (clause->kind) {
    case CYPHER_AST_MATCH: case CYPHER_AST_UNWIND:
    case CYPHER_AST_WITH: case CYPHER_AST_RETURN: return true;
    default: return false;
    }
}

/* A MATCH: the run of MATCH clauses from it as one join where the join
   takes it (join.h; *absorbed the clauses taken, the stages after the
   first marked), else the walker for this one. */
static int open_match(exec *x, const cypher_ast_node *const *clauses, size_t n, scope *sc,
                      stage *s, const cypher_ast_node *after, size_t *absorbed)
{
    size_t run = 1;
    while (run < n && clauses[run]->kind == CYPHER_AST_MATCH)
        run++;
    join_plan *plan = NULL;
    *absorbed = 1;
    size_t took = 0;
    const cypher_ast_node *next = run < n ? clauses[run] : after;
    bool refused = join_shape_refuses(clauses, run, next);
    if (!x->nested && !refused &&
        join_plan_build(x, clauses, run, next, sc, &plan, &took) != 0)
        return -1;
    if (!took) {
        int rc = match_open(x, clauses[0], sc, s);
        /* run again only where the join refuses the clause on any data:
           the join's choice depends on the state read, the walker's on
           nothing its resume does not redo */
        if (!refused)
            s->park = NULL;
        return rc;
    }
    *absorbed = took;
    for (size_t i = 1; i < took; i++)
        s[i] = (stage){.clause = clauses[i], .absorbed = true};
    return join_open(x, plan, sc, s);
}

static int stage_open(exec *x, const cypher_ast_node *cl, scope *sc, stage *s, scope *cols)
{
    s->clause = cl;
    switch (cl->kind) {
    case CYPHER_AST_UNWIND: return unwind_open(x, cl, sc, s);
    default: return project_open(x, cl, sc, s, cols);
    }
}

void pipeline_close(exec *x, pipeline **pp)
{
    pipeline *p = *pp;
    if (!p)
        return;
    *pp = NULL;
    for (size_t i = 0; i < p->opened; i++)
        if (p->st[i].close)
            p->st[i].close(x, &p->st[i]);
    parallel_plan_free(x, &p->par);
    exec_free(x, p->wide);
    rowset_free(&p->in);
    exec_free(x, p);
}

pipeline *pipeline_open(exec *x, const cypher_ast_node *const *clauses, size_t n, scope *sc,
                        rowset *in, scope *result_cols)
{
    pipeline *p = exec_calloc(x, pipeline_size(n));
    if (!p) {
        exec_oom(x);
        return NULL;
    }
    p->in = *in;            /* taken over */
    rowset_init(in, in->width);
    p->n = n;
    p->first_step = x->prof ? x->prof->n : 0;
    p->started = x->prof ? profile_now() : 0;   /* PROFILE's clock only */
    int rc = 0;
    /* Each stage opens knowing the clause that consumes its rows (the next
       stage, or what follows the run), so a MATCH can tell when only
       distinct rows matter (op_reach.c). */
    const cypher_ast_node *run_last = x->run_last, *run_next = x->run_next;
    parallel_before before = {0};
    if (parallel_may_apply(x, clauses, n, &p->in))
        rc = parallel_before_take(x, sc, &before);
    while (p->opened < n && rc == 0) {
        size_t i = p->opened, took = 1;
        bool last = i + 1 == n;
        x->run_last = clauses[i];
        x->run_next = last ? run_next : clauses[i + 1];
        if (x->prof)
            profile_clause_begin(x);
        if (clauses[i]->kind == CYPHER_AST_MATCH) {
            p->st[i].clause = clauses[i];
            rc = open_match(x, clauses + i, n - i, sc, &p->st[i], run_next, &took);
        } else {
            rc = stage_open(x, clauses[i], sc, &p->st[i], last ? result_cols : NULL);
        }
        if (x->prof && rc == 0)
            rc = profile_clause_end(x, clauses[i], 0);   /* rows once run */
        for (size_t k = 1; k < took && x->prof && rc == 0; k++) {
            profile_clause_begin(x);
            profile_note(x, "joined into the MATCH before");
            rc = profile_clause_end(x, clauses[i + k], 0);
        }
        p->opened += took;
    }
    x->run_last = run_last;
    x->run_next = run_next;
    for (size_t i = 0; i < n; i++) {
        size_t k = i + 1;
        while (k < n && p->st[k].absorbed)
            k++;
        p->st[i].next = k < n ? &p->st[k] : NULL;
        p->finished |= p->st[i].wants_none;   /* LIMIT 0 */
    }
    p->width = x->width;
    if (rc == 0 && before.taken)
        rc = parallel_plan_make(x, clauses, n, p->st, &before, p->first_step, &p->par);
    parallel_before_free(&before);
    if (rc != 0)
        pipeline_close(x, &p);
    return p;
}

stage *pipeline_stage(pipeline *p, size_t i) { return &p->st[i]; }

bool pipeline_parkable(const pipeline *p)
{
    if (p->par)
        return false;
    for (size_t i = 0; i < p->n; i++)
        if (!p->st[i].park)
            return false;
    return true;
}

void pipeline_park(exec *x, pipeline *p)
{
    for (size_t i = 0; i < p->n; i++) {
        p->st[i].park(x, &p->st[i]);
        p->st[i].rows = 0;
    }
    p->next_in = 0;
    p->row_open = false;
    p->flushed = 0;
    p->finished = false;
    for (size_t i = 0; i < p->n; i++)
        p->finished |= p->st[i].wants_none;   /* LIMIT 0 */
}

int pipeline_resume(exec *x, pipeline *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->st[i].resume && p->st[i].resume(x, &p->st[i]) != 0)
            return -1;
    return 0;
}

/* One unit of work: an input row, or a step of one; a parallel read takes
   the whole input row at once. */
static int pipeline_unit(exec *x, pipeline *p)
{
    stage *first = &p->st[0];
    if (p->par && p->next_in == 0 && p->in.nrows == 1 && !p->row_open) {
        p->next_in = 1;
        p->finished = true;
        return parallel_run(x, p->par, p->st, rowset_row(&p->in, 0), p->in.width);
    }
    if (first->step && p->row_open) {
        bool done = false;
        int rc = first->step(x, first, &done);
        p->row_open = !done;
        return rc;
    }
    if (p->next_in == p->in.nrows) {
        p->finished = true;
        return 0;
    }
    /* every stage's rows are x->width wide: the width once all are open */
    const value *src = rowset_row(&p->in, p->next_in++);
    if (!p->wide && !(p->wide = exec_calloc(x, (p->width ? p->width : 1) * sizeof *p->wide)))
        return exec_oom(x);
    for (size_t i = 0; i < p->width; i++)
        p->wide[i] = i < p->in.width ? src[i] : value_null();   /* borrowed */
    if (!first->step)
        return first->row(x, first, p->wide);
    int rc = first->begin(x, first, p->wide);
    p->row_open = rc == 0;
    return rc;
}

/* The input has ended: each stage in order produces what it holds, into
   the stages after it, a batch at a time until out has reached goal.  A
   stop from a later stage only ends that stage's output. */
static int pipeline_finish(exec *x, pipeline *p, rowset *out, size_t goal)
{
    while (p->flushed < p->n && out->nrows < goal) {
        stage *s = &p->st[p->flushed];
        int rc = s->finish ? s->finish(x, s) : 0;
        if (rc < 0)
            return -1;
        p->flushed += rc != EXEC_MORE;
    }
    return 0;
}

int pipeline_pull(exec *x, pipeline *p, rowset *out, size_t want)
{
    for (size_t i = 0; i < p->n; i++)
        p->st[i].out = out;
    size_t goal = out->nrows + want < out->nrows ? SIZE_MAX : out->nrows + want;
    int rc = exec_check_interrupt(x);
    for (size_t units = 1; rc == 0 && !p->finished && out->nrows < goal; units++)
        rc = units % 1024 == 0 && exec_check_interrupt(x) != 0 ? -1 : pipeline_unit(x, p);
    if (rc == EXEC_STOP) {
        p->finished = true;
        rc = 0;
    }
    if (rc == 0 && p->finished)
        rc = pipeline_finish(x, p, out, goal);
    bool done = p->finished && p->flushed == p->n;
    if (rc == 0 && done && x->prof)
        for (size_t i = 0; i < p->n; i++)
            profile_pipelined(x, p->first_step + i, p->st[i].rows, i == 0 ? p->started : -1);
    return rc != 0 ? -1 : done ? 1 : 0;
}

int pipeline_run(exec *x, const cypher_ast_node *const *clauses, size_t n, scope *sc,
                 rowset *in, rowset *out, scope *result_cols)
{
    rowset_init(out, x->width);   /* empty whatever happens below */
    pipeline *p = pipeline_open(x, clauses, n, sc, in, result_cols);
    if (!p)
        return -1;
    rowset_init(out, x->width);
    int rc = pipeline_pull(x, p, out, SIZE_MAX);
    pipeline_close(x, &p);
    return rc < 0 ? -1 : 0;
}
