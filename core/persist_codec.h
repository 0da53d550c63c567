/*
 * persist_codec — the byte level of the saved-file format: CRC32C, a
 * buffered section writer and a bounds-checked reader, and the encoding of
 * one value.  core/persist.c lays the sections out with these;
 * docs/FORMAT.md describes the bytes.
 *
 * Writer (pwriter): appends to a large buffer and writes it out when full.
 * A section is opened with pw_section_begin, which leaves room for its
 * 24-byte header; pw_section_end writes the payload out and then fills the
 * header in place (pwrite), with the payload's length and checksum, which
 * are only known then.  The first failed write is kept in err (an errno)
 * and every later call does nothing, so callers check once at the end.
 *
 * Reader (preader): a cursor over bytes already in memory.  Every read
 * checks the bytes remain; a failure records the first error — status
 * STRATA_ECORRUPT or STRATA_ENOMEM, the section and the file offset — and
 * makes every later read fail too, so parsers may check once per record.
 *
 * Values: a tag byte, then the kind's payload (FORMAT.md, "Values").
 * Decoding bounds nesting at PCODEC_MAX_DEPTH (the engine's VALUE_MAX_DEPTH:
 * one limit for what Cypher builds and what a file may hold), every count by the bytes
 * left, and checks each kind's ranges (booleans 0/1, nanoseconds within a
 * second or a day, offsets within ±18 h, zone names, map keys in order),
 * so a decoded value is one the engine could have made.
 */
#ifndef STRATA_CORE_PERSIST_CODEC_H
#define STRATA_CORE_PERSIST_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strata.h"
#include "storage/mem.h"
#include "storage/value.h"

#define PCODEC_MAX_DEPTH VALUE_MAX_DEPTH
#define PCODEC_SECTION_HEADER 24
#define PCODEC_ERR_MAX 256

/* CRC32C (Castagnoli), zlib-style: start from 0, feed the running value.
   By the processor's CRC32 instruction where it has one (SSE 4.2). */
uint32_t crc32c(uint32_t crc, const void *bytes, size_t n);
/* The same by tables alone: crc32c's answer on every processor, kept
   callable so the tests compare the two. */
uint32_t crc32c_portable(uint32_t crc, const void *bytes, size_t n);

typedef struct pwriter {
    int fd;
    unsigned char *buf;
    size_t len, cap;
    uint64_t off;        /* file offset of buf[0] */
    uint64_t sec_off;    /* file offset of the open section's header */
    uint32_t sec_tag;
    uint32_t crc;        /* of the open section's payload written out so far */
    size_t crc_from;     /* where in buf the payload starts */
    uint32_t nsections;
    int err;             /* errno of the first failure, 0 while none */
} pwriter;

void pw_init(pwriter *w, int fd, unsigned char *buf, size_t cap);
void pw_bytes(pwriter *w, const void *p, size_t n);
void pw_u8(pwriter *w, uint8_t x);
void pw_u32(pwriter *w, uint32_t x);
void pw_u64(pwriter *w, uint64_t x);
/* LEB128, 1 to 10 bytes. */
void pw_varint(pwriter *w, uint64_t x);
/* Zigzag then LEB128: small magnitudes of either sign are short. */
void pw_svarint(pwriter *w, int64_t x);
void pw_string(pwriter *w, const char *s, size_t len);
/* Any value the engine makes. */
void pw_value(pwriter *w, const value *v);
void pw_section_begin(pwriter *w, uint32_t tag);
void pw_section_end(pwriter *w);
/* Writes out what the buffer holds. */
void pw_flush(pwriter *w);

typedef struct preader {
    const unsigned char *p, *end;
    const unsigned char *base;  /* the file's first byte, for offsets */
    mem_ctx *m;                 /* where decoded values live */
    const char *section;        /* for messages */
    strata_status status;       /* STRATA_OK until the first failure */
    char err[PCODEC_ERR_MAX];
} preader;

void pr_init(preader *r, const unsigned char *base, size_t off, size_t len, mem_ctx *m,
             const char *section);
/* Records "section S at byte N: <message>" (first failure only); -1. */
int pr_fail(preader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int pr_nomem(preader *r, const char *what);
static inline bool pr_ok(const preader *r) { return r->status == STRATA_OK; }
static inline size_t pr_left(const preader *r) { return (size_t)(r->end - r->p); }
static inline uint64_t pr_offset(const preader *r) { return (uint64_t)(r->p - r->base); }

/* Each returns 0, or -1 (the reader failed; *out is zero). */
int pr_u8(preader *r, uint8_t *out);
int pr_u32(preader *r, uint32_t *out);
int pr_u64(preader *r, uint64_t *out);
int pr_varint_long(preader *r, uint64_t *out);
/* Numbers of one to three bytes (counts, tokens, ids below 2^21) without a
   call or a bounds check per byte; a failed reader has p == end, so it
   always takes the checked path. */
static inline int pr_varint(preader *r, uint64_t *out)
{
    const unsigned char *p = r->p;
    if (r->end - p >= 3) {
        if (p[0] < 0x80) {
            *out = p[0];
            r->p = p + 1;
            return 0;
        }
        if (p[1] < 0x80) {
            *out = (uint64_t)(p[0] & 0x7F) | (uint64_t)p[1] << 7;
            r->p = p + 2;
            return 0;
        }
        if (p[2] < 0x80) {
            *out = (uint64_t)(p[0] & 0x7F) | (uint64_t)(p[1] & 0x7F) << 7 | (uint64_t)p[2] << 14;
            r->p = p + 3;
            return 0;
        }
    }
    return pr_varint_long(r, out);
}
int pr_svarint(preader *r, int64_t *out);
int pr_count_fail(preader *r, uint64_t max, const char *what, uint64_t *out);
/* A varint that must be at most max; what names it in the message. */
static inline int pr_count(preader *r, uint64_t max, const char *what, uint64_t *out)
{
    if (pr_varint(r, out))
        return -1;
    return *out > max ? pr_count_fail(r, max, what, out) : 0;
}
/* n bytes, borrowed from the reader's memory. */
int pr_bytes(preader *r, size_t n, const unsigned char **out);
/* A length-prefixed string, borrowed; at most max bytes, and well-formed
   UTF-8 (else the message names the bad byte's offset in the file). */
int pr_string(preader *r, size_t max, const char *what, const char **s, size_t *len);
/* A value (owned by the caller on success, in r->m). */
int pr_value(preader *r, value *out);

#endif
