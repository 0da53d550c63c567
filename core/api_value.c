/* strata_value: an owned handle on one value, for the API's callers.
   Handles live in scratch memory; a value read from the graph shares its
   heap part with the graph by refcount. */
#include <string.h>

#include "core/graph_impl.h"
#include "storage/utf8.h"

_Static_assert(STRATA_VALUE_MAX_DEPTH == VALUE_MAX_DEPTH, "the API states the engine's limit");

strata_value *value_handle_new(value v)
{
    strata_value *r = mem_alloc(mem_scratch(), sizeof *r);
    if (!r) {
        value_release(&v);
        return NULL;
    }
    r->v = v;
    return r;
}

strata_value *strata_value_null(void) { return value_handle_new(value_null()); }
strata_value *strata_value_bool(bool b) { return value_handle_new(value_bool(b)); }
strata_value *strata_value_int(int64_t i) { return value_handle_new(value_int(i)); }
strata_value *strata_value_float(double f) { return value_handle_new(value_float(f)); }

strata_value *strata_value_string(const char *s, size_t len)
{
    value v;
    /* the one way a caller's bytes become a string value: text only */
    if ((!s && len) || (s && !utf8_check(s, len, NULL)) ||
        value_string(mem_scratch(), s ? s : "", len, &v) != 0)
        return NULL;
    return value_handle_new(v);
}

strata_value *strata_value_list(const strata_value *const *items, size_t n)
{
    if (n && !items)
        return NULL;
    size_t bytes = mem_array_size(n, sizeof(value));
    value *copy = mem_alloc(mem_scratch(), bytes);
    if (!copy)
        return NULL;
    for (size_t i = 0; i < n; i++)
        copy[i] = items[i] ? value_retain(items[i]->v) : value_null();
    value v;
    int rc = value_list_from(mem_scratch(), copy, n, &v);
    mem_free(mem_scratch(), copy);
    return rc == 0 ? value_handle_new(v) : NULL;
}

void strata_value_free(strata_value **vp)
{
    if (!vp || !*vp)
        return;
    value_release(&(*vp)->v);
    mem_free(mem_scratch(), *vp);
    *vp = NULL;
}

strata_type strata_value_type(const strata_value *v)
{
    return v ? (strata_type)value_kind(&v->v) : STRATA_NULL;
}

strata_status strata_value_get_bool(const strata_value *v, bool *out)
{
    if (!v || !out)
        return STRATA_EINVAL;
    if (value_kind(&v->v) != VAL_BOOL)
        return STRATA_ETYPE;
    *out = v->v.u.b;
    return STRATA_OK;
}

strata_status strata_value_get_int(const strata_value *v, int64_t *out)
{
    if (!v || !out)
        return STRATA_EINVAL;
    if (value_kind(&v->v) != VAL_INT)
        return STRATA_ETYPE;
    *out = v->v.u.i;
    return STRATA_OK;
}

strata_status strata_value_get_float(const strata_value *v, double *out)
{
    if (!v || !out)
        return STRATA_EINVAL;
    if (value_kind(&v->v) != VAL_FLOAT)
        return STRATA_ETYPE;
    *out = v->v.u.f;
    return STRATA_OK;
}

strata_status strata_value_get_string(const strata_value *v, const char **s, size_t *len)
{
    if (!v || !s)
        return STRATA_EINVAL;
    if (value_kind(&v->v) != VAL_STRING)
        return STRATA_ETYPE;
    size_t n;
    *s = value_str(&v->v, &n);
    if (len)
        *len = n;
    return STRATA_OK;
}

size_t strata_value_list_len(const strata_value *v)
{
    if (!v || (value_kind(&v->v) != VAL_LIST && value_kind(&v->v) != VAL_PATH))
        return 0;
    return value_list_len(&v->v);
}

strata_status strata_value_list_get(const strata_value *v, size_t i, strata_value **out)
{
    if (!v || !out)
        return STRATA_EINVAL;
    if (value_kind(&v->v) != VAL_LIST && value_kind(&v->v) != VAL_PATH)
        return STRATA_ETYPE;
    if (i >= value_list_len(&v->v))
        return STRATA_ENOTFOUND;
    *out = value_handle_new(value_retain(value_list_items(&v->v)[i]));
    return *out ? STRATA_OK : STRATA_ENOMEM;
}

int strata_value_equals(const strata_value *a, const strata_value *b)
{
    if (!a || !b)
        return -1;
    tri t = value_equals(&a->v, &b->v);
    return t == TRI_NULL ? -1 : (int)t;
}

strata_value *strata_value_map(const char *const *keys, const strata_value *const *vals, size_t n)
{
    if (n && (!keys || !vals))
        return NULL;
    size_t bytes = mem_array_size(n, 2 * sizeof(value));
    value *kv = mem_calloc(mem_scratch(), bytes);
    if (!kv)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t klen = keys[i] ? strlen(keys[i]) : 0;
        if (!keys[i] || !utf8_check(keys[i], klen, NULL) ||
            value_string(mem_scratch(), keys[i], klen, &kv[i]) != 0) {
            for (size_t j = 0; j < n; j++) {
                value_release(&kv[j]);
                value_release(&kv[n + j]);
            }
            mem_free(mem_scratch(), kv);
            return NULL;
        }
        kv[n + i] = vals[i] ? value_retain(vals[i]->v) : value_null();
    }
    value v;
    int rc = value_map_from(mem_scratch(), kv, kv + n, n, &v);
    mem_free(mem_scratch(), kv);
    return rc == 0 ? value_handle_new(v) : NULL;
}

size_t strata_value_map_len(const strata_value *v)
{
    return v && value_kind(&v->v) == VAL_MAP ? value_map_len(&v->v) : 0;
}

const strata_value *strata_value_list_at(const strata_value *v, size_t i)
{
    if (!v || value_kind(&v->v) != VAL_LIST || i >= value_list_len(&v->v))
        return NULL;
    return value_borrow_handle(&value_list_items(&v->v)[i]);
}

const strata_value *strata_value_map_at(const strata_value *v, size_t i, const char **key)
{
    if (!v || value_kind(&v->v) != VAL_MAP || i >= value_map_len(&v->v))
        return NULL;
    if (key)
        *key = value_str(&value_map_keys(&v->v)[i], NULL);
    return value_borrow_handle(&value_map_vals(&v->v)[i]);
}

strata_status strata_value_map_entry(const strata_value *v, size_t i, const char **key,
                                     strata_value **val)
{
    if (!v)
        return STRATA_EINVAL;
    if (value_kind(&v->v) != VAL_MAP)
        return STRATA_ETYPE;
    if (i >= value_map_len(&v->v))
        return STRATA_ENOTFOUND;
    if (key)
        *key = value_str(&value_map_keys(&v->v)[i], NULL);
    if (val) {
        *val = value_handle_new(value_retain(value_map_vals(&v->v)[i]));
        if (!*val)
            return STRATA_ENOMEM;
    }
    return STRATA_OK;
}

strata_status strata_value_get_id(const strata_value *v, strata_id *out)
{
    if (!v || !out)
        return STRATA_EINVAL;
    if (value_kind(&v->v) != VAL_NODE && value_kind(&v->v) != VAL_REL)
        return STRATA_ETYPE;
    *out = v->v.u.id;
    return STRATA_OK;
}
