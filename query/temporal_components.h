/*
 * temporal_components — the components Cypher reads off a temporal or a
 * duration: date.year, t.timezone, dt.epochMillis, dur.minutesOfHour, ...
 */
#ifndef STRATA_QUERY_TEMPORAL_COMPONENTS_H
#define STRATA_QUERY_TEMPORAL_COMPONENTS_H

#include <stddef.h>

#include "storage/mem.h"
#include "storage/temporal.h"

/* Component by name (key of len bytes): 1 when key is not a component of
   this kind, -1 out of memory (a string component is made in m), -2 when
   the component does not fit a 64-bit integer (a datetime's epochMillis
   at the ends of the year range, a huge duration's nanoseconds), 0 ok
   with a new value in *out. */
int temporal_component(mem_ctx *m, const temporal *t, const char *key, size_t len, value *out);
int duration_component(const duration *d, const char *key, size_t len, value *out);

#endif
