/*
 * csv — a streaming reader of RFC 4180 CSV, shared by LOAD CSV
 * (query/op_load_csv.c) and the bulk importer (query/import.c).
 *
 * What it accepts:
 *   - fields separated by a configurable single byte (',' by default);
 *   - records ended by LF, CRLF or a lone CR; the last record may lack one;
 *   - quoted fields ("...") holding delimiters, line ends and doubled
 *     quotes ("" stands for one ");
 *   - a UTF-8 byte order mark at the very start, which is skipped;
 *   - blank lines, which are skipped (they hold no record).
 * It refuses, with a message naming the file and the line: a quote that is
 * never closed (the line where it opened), a quote inside an unquoted
 * field, anything but a delimiter or a line end after a closing quote, and
 * read errors.  Bytes are passed through as they are; csv_record_utf8
 * checks that a record is UTF-8, and LOAD CSV and the importer refuse a
 * record that is not, naming its line, field and byte.
 *
 * An empty field and an empty quoted field ("") are told apart by
 * csv_field's `quoted` flag: LOAD CSV and the importer read the first as
 * null and the second as the empty string.
 *
 * Invariants:
 *   1. After csv_next returns CSV_RECORD, fields 0 .. csv_nfields()-1 are
 *      valid NUL-terminated byte strings (they may hold NUL bytes: use
 *      their length) until the next call; csv_record_line() is the line
 *      the record starts on, counting from 1 and counting every line end,
 *      including those inside quoted fields.
 *   2. After CSV_BAD or CSV_NOMEM the reader stays failed: every later call
 *      returns the same status and csv_error() keeps the message.
 *   3. Memory: one input buffer (CSV_BUFFER bytes) plus the longest record
 *      so far that did not lie whole in the buffer; the file is never read
 *      whole.  Everything is allocated from mem_scratch(), so test builds
 *      can fail any allocation.
 */
#ifndef STRATA_QUERY_CSV_H
#define STRATA_QUERY_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct csv_reader csv_reader;

typedef enum csv_status {
    CSV_NOMEM = -2,   /* out of memory */
    CSV_BAD = -1,     /* malformed input or a read error: see csv_error */
    CSV_END = 0,      /* no more records */
    CSV_RECORD = 1,   /* a record was read */
} csv_status;

typedef struct csv_field {
    const char *ptr;  /* NUL-terminated; borrowed from the reader */
    size_t len;
    bool quoted;      /* written as "..." (so "" is an empty string, not null) */
} csv_field;

/* The longest field a reader accepts unless told otherwise: a longer one
   is CSV_BAD naming file, line and field, so that a file without
   delimiters or with an unclosed quote cannot take all memory. */
#define CSV_FIELD_MAX ((size_t)16 << 20)

/* A reader of f (borrowed: the caller closes it after csv_free).  name is
   copied and used in messages.  NULL when out of memory. */
csv_reader *csv_new(FILE *f, const char *name, char delimiter);
/* Sets the byte that quotes a field ('"' by default; not the delimiter,
   CR or LF): a quote inside a quoted field is then that byte doubled. */
void csv_set_quote(csv_reader *r, char quote);
/* Sets the longest field accepted, in bytes (at least 1). */
void csv_set_field_max(csv_reader *r, size_t max);
void csv_free(csv_reader **r);

/* Reads the next record. */
csv_status csv_next(csv_reader *r);
size_t csv_nfields(const csv_reader *r);
/* Field i < csv_nfields() of the record just read. */
csv_field csv_get(const csv_reader *r, size_t i);
/* Whether every field of the record just read is well-formed UTF-8;
   when not, *field (from 0) and *offset (the byte within that field, from
   0) name the first bad byte. */
bool csv_record_utf8(const csv_reader *r, size_t *field, size_t *offset);
/* The line the record just read starts on. */
uint64_t csv_record_line(const csv_reader *r);
/* After CSV_BAD / CSV_NOMEM: "NAME:LINE: what went wrong", and the line
   alone. */
const char *csv_error(const csv_reader *r);
uint64_t csv_error_line(const csv_reader *r);
const char *csv_name(const csv_reader *r);

#ifdef STRATA_TESTING
/* Test builds: the input buffer of readers made from now on (a few bytes
   unless a test sets it, so that every state meets a refill). */
extern size_t csv_buffer_for_tests;
/* Test builds: when cleared, every record goes through the reader's state
   machine, none is read in place (csv.c), so tests compare the two. */
extern bool csv_in_place_for_tests;
#endif

#endif
