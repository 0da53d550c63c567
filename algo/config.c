/*
 * config — the configuration map of an algorithm run.
 *
 * The same map comes from Cypher (CALL algo.pagerank({damping: 0.9})) and
 * from the C API (a strata_value map).  Each algorithm accepts a set of
 * keys (algo_spec.keys); any other key, and any value of the wrong type or
 * out of range, is an ArgumentError naming the key.  Names of labels,
 * types and the weight property that the graph never interned are not
 * errors: they select nothing (no node, no relationship, weight 1), as
 * every read of strata answers for a token nothing carries.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "algo/algo.h"

typedef struct key_desc {
    const char *name;
    unsigned bit;
} key_desc;

static const key_desc keys[] = {
    {"labels", CFG_LABELS},       {"types", CFG_TYPES},     {"direction", CFG_DIRECTION},
    {"weight", CFG_WEIGHT},       {"iterations", CFG_ITERATIONS},
    {"tolerance", CFG_TOLERANCE}, {"damping", CFG_DAMPING}, {"seed", CFG_SEED},
    {"sample", CFG_SAMPLE},       {"threads", CFG_THREADS}, {"source", CFG_SOURCE},
    {"target", CFG_TARGET},       {"property", CFG_PROPERTY},
};

static unsigned key_bit(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strlen(keys[i].name) == len && memcmp(keys[i].name, name, len) == 0)
            return keys[i].bit;
    return 0;
}

/* A string or a list of strings, as tokens of kind; names the graph never
   interned are dropped. */
static algo_status read_names(algo_ctx *c, const char *key, const value *v, strata_token_kind kind,
                              strata_token *out, size_t *n)
{
    const value *items = v;
    size_t count = 1;
    if (value_kind(v) == VAL_LIST) {
        items = value_list_items(v);
        count = value_list_len(v);
    }
    if (count > ALGO_MAX_LIST)
        return algo_fail(c, ALGO_ARGUMENT, "%s: at most %d names", key, ALGO_MAX_LIST);
    *n = 0;
    for (size_t i = 0; i < count; i++) {
        if (value_kind(&items[i]) != VAL_STRING)
            return algo_fail(c, ALGO_ARGUMENT, "%s must be a string or a list of strings, not %s",
                             key, value_type_name(&items[i]));
        strata_token tok;
        if (strata_token_lookup(c->view, kind, value_str(&items[i], NULL), &tok) == STRATA_OK)
            out[(*n)++] = tok;
    }
    return ALGO_OK;
}

static algo_status read_node(algo_ctx *c, const char *key, const value *v, strata_id *out)
{
    if (value_kind(v) == VAL_NODE) {
        *out = v->u.id;
        return ALGO_OK;
    }
    if (value_kind(v) == VAL_INT && v->u.i >= 0) {
        *out = (strata_id)v->u.i;
        return ALGO_OK;
    }
    return algo_fail(c, ALGO_ARGUMENT, "%s must be a node or a node id, not %s", key,
                     value_kind(v) == VAL_INT ? "a negative integer" : value_type_name(v));
}

static algo_status read_int(algo_ctx *c, const char *key, const value *v, int64_t lo, int64_t hi,
                            int64_t *out)
{
    if (value_kind(v) != VAL_INT)
        return algo_fail(c, ALGO_ARGUMENT, "%s must be an integer, not %s", key,
                         value_type_name(v));
    if (v->u.i < lo || v->u.i > hi)
        return algo_fail(c, ALGO_ARGUMENT, "%s must be between %lld and %lld, not %lld", key,
                         (long long)lo, (long long)hi, (long long)v->u.i);
    *out = v->u.i;
    return ALGO_OK;
}

static algo_status read_number(algo_ctx *c, const char *key, const value *v, double lo,
                               double hi, bool hi_open, double *out)
{
    if (value_kind(v) != VAL_INT && value_kind(v) != VAL_FLOAT)
        return algo_fail(c, ALGO_ARGUMENT, "%s must be a number, not %s", key,
                         value_type_name(v));
    double d = value_kind(v) == VAL_INT ? (double)v->u.i : v->u.f;
    if (!(d >= lo && (hi_open ? d < hi : d <= hi)))
        return algo_fail(c, ALGO_ARGUMENT, "%s must be in [%g, %g%c, not %g", key, lo, hi,
                         hi_open ? ')' : ']', d);
    *out = d;
    return ALGO_OK;
}

static algo_status read_direction(algo_ctx *c, const value *v, strata_direction *out)
{
    const char *s = value_kind(v) == VAL_STRING ? value_str(v, NULL) : NULL;
    if (s && strcasecmp(s, "OUT") == 0)
        *out = STRATA_OUT;
    else if (s && strcasecmp(s, "IN") == 0)
        *out = STRATA_IN;
    else if (s && (strcasecmp(s, "BOTH") == 0 || strcasecmp(s, "UNDIRECTED") == 0))
        *out = STRATA_BOTH;
    else
        return algo_fail(c, ALGO_ARGUMENT, "direction must be 'OUT', 'IN' or 'BOTH'");
    return ALGO_OK;
}

static algo_status read_sources(algo_ctx *c, const value *v, algo_config *cfg)
{
    if (value_kind(v) != VAL_LIST) {
        cfg->nsources = 1;
        return read_node(c, "source", v, &cfg->sources[0]);
    }
    size_t n = value_list_len(v);
    if (n == 0 || n > ALGO_MAX_LIST)
        return algo_fail(c, ALGO_ARGUMENT, "source: a list of 1 to %d nodes", ALGO_MAX_LIST);
    for (size_t i = 0; i < n; i++)
        if (read_node(c, "source", &value_list_items(v)[i], &cfg->sources[i]) != ALGO_OK)
            return c->status;
    cfg->nsources = n;
    return ALGO_OK;
}

static algo_status read_key(algo_ctx *c, unsigned bit, const char *name, const value *v,
                            algo_config *cfg)
{
    int64_t i = 0;
    switch (bit) {
    case CFG_LABELS:
        cfg->labels_given = true;
        return read_names(c, name, v, STRATA_LABEL, cfg->labels, &cfg->nlabels);
    case CFG_TYPES:
        cfg->types_given = true;
        return read_names(c, name, v, STRATA_RELTYPE, cfg->types, &cfg->ntypes);
    case CFG_DIRECTION: return read_direction(c, v, &cfg->direction);
    case CFG_WEIGHT:
        if (value_kind(v) != VAL_STRING)
            return algo_fail(c, ALGO_ARGUMENT, "weight must be a property name, not %s",
                             value_type_name(v));
        cfg->has_weight = true;
        cfg->weight_known = strata_token_lookup(c->view, STRATA_KEY, value_str(v, NULL),
                                                &cfg->weight) == STRATA_OK;
        return ALGO_OK;
    case CFG_ITERATIONS: return read_int(c, name, v, 1, INT32_MAX, &cfg->iterations);
    case CFG_TOLERANCE: return read_number(c, name, v, 0, INFINITY, false, &cfg->tolerance);
    case CFG_DAMPING: return read_number(c, name, v, 0, 1, true, &cfg->damping);
    case CFG_SEED:
        if (read_int(c, name, v, INT64_MIN, INT64_MAX, &i) != ALGO_OK)
            return c->status;
        cfg->seed = (uint64_t)i;
        return ALGO_OK;
    case CFG_SAMPLE: return read_int(c, name, v, 1, INT64_MAX, &cfg->sample);
    case CFG_THREADS:
        if (read_int(c, name, v, 1, 256, &i) != ALGO_OK)
            return c->status;
        cfg->threads = (int)i;
        return ALGO_OK;
    case CFG_SOURCE: return read_sources(c, v, cfg);
    case CFG_TARGET:
        cfg->has_target = true;
        return read_node(c, name, v, &cfg->target);
    case CFG_PROPERTY:
        if (value_kind(v) != VAL_STRING)
            return algo_fail(c, ALGO_ARGUMENT, "property must be a string, not %s",
                             value_type_name(v));
        cfg->property = value_str(v, &cfg->property_len);
        if (cfg->property_len == 0)
            return algo_fail(c, ALGO_ARGUMENT, "property must not be empty");
        return ALGO_OK;
    }
    return algo_fail(c, ALGO_ARGUMENT, "unknown configuration key %s", name);
}

algo_status algo_config_read(algo_ctx *c, const value *map, unsigned allowed, algo_config *cfg)
{
    *cfg = (algo_config){.direction = STRATA_OUT, .tolerance = -1, .damping = 0.85};
    if (!map || value_is_null(map))
        return ALGO_OK;
    if (value_kind(map) != VAL_MAP)
        return algo_fail(c, ALGO_ARGUMENT, "the configuration must be a map, not %s",
                         value_type_name(map));
    const value *ks = value_map_keys(map), *vs = value_map_vals(map);
    for (size_t k = 0; k < value_map_len(map); k++) {
        size_t len;
        const char *name = value_str(&ks[k], &len);
        unsigned bit = key_bit(name, len);
        if (!bit || !(bit & allowed))
            return algo_fail(c, ALGO_ARGUMENT, "%s key %.*s in the configuration",
                             bit ? "this algorithm takes no" : "unknown", (int)len, name);
        if (value_is_null(&vs[k]))
            continue;   /* null: the default, as for a key not written */
        if (read_key(c, bit, name, &vs[k], cfg) != ALGO_OK)
            return c->status;
    }
    return ALGO_OK;
}
