/* strata_value handles for temporal values, durations and paths: the
   public, decoded forms of storage/temporal.h's cells and of a path's
   alternating node/relationship items.  The constructor of a temporal,
   strata_value_temporal, is query/api_temporal_value.c's: a datetime in a
   named zone needs the zone database, which only query/ reads. */
#include <string.h>

#include "core/graph_impl.h"
#include "storage/temporal.h"

_Static_assert(sizeof(((strata_temporal *)0)->zone) == TM_ZONE_MAX,
               "the public zone buffer matches the engine's");

static bool is_temporal_type(strata_type t)
{
    return t >= STRATA_DATE && t <= STRATA_DATETIME;
}


strata_status strata_value_get_temporal(const strata_value *v, strata_temporal *out)
{
    if (!v || !out)
        return STRATA_EINVAL;
    if (!is_temporal_type((strata_type)value_kind(&v->v)))
        return STRATA_ETYPE;
    temporal t;
    if (temporal_from_value(&v->v, &t) != 0)
        return STRATA_ETYPE;
    memset(out, 0, sizeof *out);
    out->type = (strata_type)t.kind;
    out->days = t.days;
    out->nanos = t.nanos;
    out->offset = t.offset;
    memcpy(out->zone, t.zone, sizeof out->zone);
    return STRATA_OK;
}

strata_status strata_value_get_duration(const strata_value *v, strata_duration *out)
{
    if (!v || !out)
        return STRATA_EINVAL;
    duration d;
    if (value_kind(&v->v) != VAL_DURATION || duration_from_value(&v->v, &d) != 0)
        return STRATA_ETYPE;
    out->months = d.months;
    out->days = d.days;
    out->seconds = d.seconds;
    out->nanos = d.nanos;
    return STRATA_OK;
}

strata_status strata_value_duration(const strata_duration *in, strata_value **out)
{
    if (!in || !out || in->nanos < 0 || in->nanos >= TM_NANOS_PER_SEC)
        return STRATA_EINVAL;
    duration d = { in->months, in->days, in->seconds, in->nanos };
    value v;
    if (duration_to_value(mem_scratch(), &d, &v) != 0)
        return STRATA_ENOMEM;
    *out = value_handle_new(v);
    return *out ? STRATA_OK : STRATA_ENOMEM;
}

size_t strata_value_path_len(const strata_value *v)
{
    if (!v || value_kind(&v->v) != VAL_PATH)
        return 0;
    return value_list_len(&v->v) / 2;
}

static strata_status path_item(const strata_value *v, size_t at, strata_id *out)
{
    if (!v || !out)
        return STRATA_EINVAL;
    if (value_kind(&v->v) != VAL_PATH)
        return STRATA_ETYPE;
    if (at >= value_list_len(&v->v))
        return STRATA_ENOTFOUND;
    *out = value_list_items(&v->v)[at].u.id;
    return STRATA_OK;
}

strata_status strata_value_path_node(const strata_value *v, size_t i, strata_id *out)
{
    return i > SIZE_MAX / 2 ? STRATA_ENOTFOUND : path_item(v, 2 * i, out);
}

strata_status strata_value_path_rel(const strata_value *v, size_t i, strata_id *out)
{
    return i >= SIZE_MAX / 2 ? STRATA_ENOTFOUND : path_item(v, 2 * i + 1, out);
}

int strata_value_temporal_text(const strata_value *v, char *buf, size_t cap)
{
    if (!v || (!buf && cap))
        return -1;
    return temporal_format(&v->v, buf, cap);
}
