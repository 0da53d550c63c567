/*
 * zoneinfo — the system's time zone database, read for Cypher's named
 * zones (datetime('2020-01-01T12:00[Europe/Stockholm]')).
 *
 * A zone is read once, from the TZif file under $TZDIR or
 * /usr/share/zoneinfo, and kept for the life of the process; its answer is
 * the UTC offset in force at an instant, taken from the file's transitions
 * and, past the last of them, from the POSIX rule in the file's footer.
 * Nothing below the query engine reads zones: a stored datetime keeps the
 * offset it was made with (storage/temporal.h).
 */
#ifndef STRATA_QUERY_ZONEINFO_H
#define STRATA_QUERY_ZONEINFO_H

#include <stdint.h>

typedef struct tz_zone tz_zone;

/* The zone named name ("Europe/Stockholm"), read on first use; NULL when
   there is no such zone (no readable TZif file, a name with "..", a path
   or TM_ZONE_MAX bytes or more) or memory ran out.  The zone is shared and
   immutable, valid until the process ends; safe from any thread. */
const tz_zone *tz_find(const char *name);

/* The offset (seconds east of UTC) in force in z at utc (seconds since
   the epoch). */
int32_t tz_offset_at(const tz_zone *z, int64_t utc);

#endif
