/*
 * import_header — the header line of a bulk import file (strata_import), after the
 * conventions of Neo4j's bulk importer, and the conversion of a field to
 * the value its column's type says.
 *
 *   name            a string property
 *   name:TYPE       a typed property: string, char, int, long, short, byte,
 *                   float, double, boolean; TYPE[] an array of them, whose
 *                   elements the array delimiter (';') separates
 *   name:ID(Space)  the node's id in an id space (Space omitted: the global
 *                   one); stored as string property `name` unless name is
 *                   empty (`:ID`)
 *   :LABEL          labels, separated by the array delimiter
 *   :START_ID(Space), :END_ID(Space), :TYPE   a relationship's ends and type
 *   name:IGNORE     a column that is read and dropped
 *
 * Keywords and types are case-insensitive.  Empty fields: an empty
 * unquoted field is no value (the property is not set); a quoted empty
 * field ("") is the empty string for string columns and no value for the
 * others.  Numbers may have spaces around them; booleans are true or false.
 */
#ifndef STRATA_QUERY_IMPORT_HEADER_H
#define STRATA_QUERY_IMPORT_HEADER_H

#include <stdbool.h>
#include <stddef.h>

#include "query/csv.h"
#include "storage/value.h"
#include "strata.h"

typedef enum column_kind {
    COL_PROPERTY,
    COL_ID,
    COL_LABEL,
    COL_START_ID,
    COL_END_ID,
    COL_TYPE,
    COL_IGNORE,
} column_kind;

typedef enum column_type { TYPE_STRING, TYPE_INT, TYPE_FLOAT, TYPE_BOOL } column_type;

typedef struct column {
    column_kind kind;
    column_type type;
    bool array;
    char *name;            /* the property name; "" for none */
    strata_token key;      /* its token, when name is not empty */
    uint32_t space;        /* ID, START_ID, END_ID: the id space */
} column;

/* Id space names; space 0 is the global one (""). */
typedef struct id_spaces {
    char **names;
    size_t n, cap;
} id_spaces;

typedef struct header {
    column *cols;
    size_t n;
    long id, label, start, end, type;   /* column indices, -1 when absent */
} header;

/* Parses the header record the reader has just read, for a node file or a
   relationship file, interning property keys in g.  -1 with a message
   (what and which column; the caller adds file and line) in err, the
   column (from 1; 0 for the header as a whole) in *bad_col and the status
   it stands for in *status (STRATA_EINVAL, or STRATA_ENOMEM). */
int header_parse(header *h, const csv_reader *r, bool relationships, id_spaces *spaces,
                 strata_graph *g, char *err, size_t errlen, size_t *bad_col,
                 strata_status *status);
void header_free(header *h);
void id_spaces_free(id_spaces *s);
/* The name of id space i, for messages ("global" for the global one). */
const char *id_space_name(const id_spaces *s, uint32_t i);

/* Field f of column c as a value in *out (owned by the caller), null when
   it holds none (see the top).  f must be UTF-8: the caller checks the
   record whole (csv_record_utf8).  0, or -1 with a message in err: a field
   that is not of its column's type (*status STRATA_ETYPE) or out of
   memory (STRATA_ENOMEM). */
int column_value(const column *c, csv_field f, char array_delim, value *out, char *err,
                 size_t errlen, strata_status *status);

#ifdef STRATA_TESTING
/* Test builds: when cleared, every float field goes through strtod (no
   fast path for plain decimals), the reference tests compare against. */
extern bool import_fast_float_for_tests;
#endif

#endif
