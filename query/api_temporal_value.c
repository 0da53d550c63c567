/* strata_value_temporal: the public constructor of a temporal value from
   its decoded fields (strata_temporal).

   It lives in query/ rather than beside the other strata_value handles
   (core/api_temporal.c) because a datetime in a named zone takes its
   offset from the zone database at its local time, and the zone database
   is read in query/ only (query/zoneinfo.c): storage/ and core/ keep and
   compare the offset a value was made with and never open a zone file.
   What is built here passes the engine's one definition of a valid value
   (temporal_check) before and after the zone is resolved, so it can be
   saved and loaded again. */
#include <string.h>

#include "core/version.h"
#include "query/temporal_zone.h"
#include "storage/temporal.h"

static bool is_temporal_type(strata_type t)
{
    return t >= STRATA_DATE && t <= STRATA_DATETIME;
}

/* The fields a type uses must be in range; the others are cleared. */
static bool temporal_fields_valid(const strata_temporal *in, temporal *t)
{
    memset(t, 0, sizeof *t);
    t->kind = (value_type)in->type;
    bool has_date = in->type != STRATA_LOCALTIME && in->type != STRATA_TIME;
    bool has_time = in->type != STRATA_DATE;
    bool has_offset = in->type == STRATA_TIME || in->type == STRATA_DATETIME;
    if (has_time && (in->nanos < 0 || in->nanos >= TM_NANOS_PER_DAY))
        return false;
    if (has_offset && (in->offset < -18 * 3600 || in->offset > 18 * 3600))
        return false;
    if (in->type == STRATA_DATETIME && !memchr(in->zone, '\0', sizeof in->zone))
        return false;
    t->days = has_date ? in->days : 0;
    t->nanos = has_time ? in->nanos : 0;
    t->offset = has_offset ? in->offset : 0;
    if (in->type == STRATA_DATETIME)
        memcpy(t->zone, in->zone, sizeof t->zone);
    return true;
}

strata_status strata_value_temporal(const strata_temporal *in, strata_value **out)
{
    if (!in || !out || !is_temporal_type(in->type))
        return STRATA_EINVAL;
    temporal t;
    if (!temporal_fields_valid(in, &t))
        return STRATA_EINVAL;
    temporal_err e;
    if (temporal_check(&t, &e) != 0 || temporal_resolve_zone(&t, &e) != 0 ||
        temporal_check(&t, &e) != 0)
        return STRATA_EINVAL;
    value v;
    if (temporal_to_value(mem_scratch(), &t, &v) != 0)
        return STRATA_ENOMEM;
    *out = value_handle_new(v);
    return *out ? STRATA_OK : STRATA_ENOMEM;
}
