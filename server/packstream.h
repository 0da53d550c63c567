/*
 * PackStream: the binary value encoding of the Bolt protocol.
 *
 * A value is a marker byte, maybe followed by a size and a payload, all
 * big-endian.  The encoder writes into a growing byte buffer (pack_buf);
 * the decoder reads a strata_value from a bounded slice and refuses, with
 * a reason, anything truncated, nested too deep, larger than the slice, or
 * not representable as a strata value (bytes, points).  Nodes,
 * relationships and paths are written from the view that produced them.
 */
#ifndef SERVER_PACKSTREAM_H
#define SERVER_PACKSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strata.h"

typedef struct pack_buf {
    uint8_t *data;
    size_t len, cap;
    bool failed;        /* an allocation failed: the contents are incomplete */
    size_t limit;       /* 0, or the most bytes the buffer may hold */
} pack_buf;

void pack_reset(pack_buf *b);
void pack_free(pack_buf *b);
void pack_bytes(pack_buf *b, const void *p, size_t n);
void pack_null(pack_buf *b);
void pack_bool(pack_buf *b, bool v);
void pack_int(pack_buf *b, int64_t v);
void pack_float(pack_buf *b, double v);
void pack_string(pack_buf *b, const char *s, size_t n);
void pack_cstr(pack_buf *b, const char *s);
void pack_list_header(pack_buf *b, size_t n);
void pack_map_header(pack_buf *b, size_t n);
void pack_struct_header(pack_buf *b, uint8_t nfields, uint8_t tag);

/* How values are written for the negotiated protocol version. */
typedef struct pack_opts {
    bool element_ids;   /* Bolt 5: nodes and relationships carry element ids */
    bool utc_datetime;  /* Bolt 5 (or 4.4 with the "utc" patch): UTC DateTime */
} pack_opts;

/* Writes v; nodes and relationships are read through view (may be NULL
   when v holds none).  0, or -1 when the view no longer has an entity. */
int pack_value(pack_buf *b, const strata_value *v, strata_view *view, const pack_opts *o);

/* ---- decoding ---- */

typedef struct unpacker {
    const uint8_t *p, *end;
    char err[160];
    int depth;
} unpacker;

/* Structure headers of messages: the field count and the tag. */
int unpack_struct_header(unpacker *u, uint8_t *nfields, uint8_t *tag);
/* A new strata value (strata_value_free), or NULL with u->err set. */
strata_value *unpack_value(unpacker *u, const pack_opts *o);
/* Skips one value; -1 with u->err when malformed. */
int unpack_skip(unpacker *u);

#endif
