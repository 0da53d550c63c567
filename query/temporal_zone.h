/*
 * temporal_zone — a temporal placed in a time zone: zone strings ("+01:00",
 * "UTC", "Europe/Stockholm") read into a temporal's offset and zone, local
 * fields resolved to the offset a named zone has there, and an instant
 * re-expressed in a zone's local time.  The zone database itself is
 * zoneinfo.h's.
 *
 * Errors as storage/temporal.h's: 0, or -1 with e filled.
 */
#ifndef STRATA_QUERY_TEMPORAL_ZONE_H
#define STRATA_QUERY_TEMPORAL_ZONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/temporal.h"

/* Reads an offset "Z", "+01", "+0100", "+01:00", "+01:00:30" (s of n
   bytes) into *off, seconds east; false when s is not one or lies
   beyond 18 hours. */
bool temporal_parse_offset(const char *s, size_t n, int32_t *off);

/* Sets t->offset and t->zone from a zone string of n bytes: an offset or
   UTC/GMT gives a fixed offset and no name; any other string must name a
   zone of the database, whose name is kept and whose offset is left for
   temporal_resolve_zone or temporal_rezone to set. */
int temporal_set_zone(temporal *t, const char *s, size_t n, temporal_err *e);

/* Fixed offset of a datetime built from local fields: resolves t->zone
   (named) for t->days/t->nanos and sets t->offset.  Gaps move forward,
   overlaps take the earlier offset (java.time's rule).  Nothing to do
   when t has no named zone. */
int temporal_resolve_zone(temporal *t, temporal_err *e);

/* Sets t's local fields (days, nanos; and offset, when t has a named
   zone) to the instant utc_secs + sub nanoseconds as seen in t's zone;
   an instant beyond the years is an error. */
int temporal_rezone(temporal *t, int64_t utc_secs, int64_t sub, temporal_err *e);

/* In a named zone an offset still valid at t's local time is kept: an
   overlap has two, and an explicit offset or java.time's ZonedDateTime.plus
   picks one.  Nothing changes when off is not valid there. */
void temporal_prefer_offset(temporal *t, int32_t off);

#endif
