/*
 * Where a preallocated log segment (version 2 or 3) ends (docs/FORMAT.md,
 * "Where the log ends").  Such a segment's file is longer than
 * its records and reads as zeros past them, so the end of the file says
 * nothing about the end of the log.  Recovery reads whole records while
 * they check; at the first offset X where none does (expected sequence
 * number N), this file decides what the bytes from X on are:
 *
 *   clean    nothing but zeros: the log's end.
 *   corrupt  some later record is whole and says, in its header, that
 *            record N had reached the disk before it was written (its
 *            synced field is at least N): then the damage lies on synced
 *            data, and cutting there would lose acknowledged commits.
 *   torn     otherwise, if the record at X looks like an interrupted write:
 *            it runs past the end of the file, or its header is all zero,
 *            or some 512-byte sector's share of it is all zero (a sector
 *            the disk never got: the space around it was zeros before the
 *            write).  Whole records after it that do not name N synced are
 *            unsynced writes of sync normal/off that reached the disk out of
 *            order, and go with it.
 *   corrupt  otherwise: a record whose every sector holds some of its
 *            bytes yet fails its checksum was damaged after it was written.
 *
 * The rule assumes what disks give: a sector is written whole or not at
 * all, and the bytes past the last record are zeros (a segment is
 * preallocated with zeros, and a failed append cuts what it left).
 */
#include <stdio.h>
#include <string.h>

#include "core/persist_codec.h"
#include "core/wal.h"

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t x = 0;
    for (int i = 0; i < n; i++)
        x |= (uint64_t)p[i] << (8 * i);
    return x;
}

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

bool walrec_header_checks(const unsigned char *h)
{
    return get_le(h + 16, 4) == crc32c(0, h, 16);
}

wal_rec_check walrec_check(const unsigned char *buf, size_t len, size_t off, uint64_t seq)
{
    if (len - off < WAL_REC_HEADER)
        return WAL_REC_SHORT;
    const unsigned char *h = buf + off;
    if (!walrec_header_checks(h))
        return WAL_REC_BAD_HEADER;
    uint64_t body = get_le(h, 4);
    if (get_le(h + 4, 8) != seq || body > WAL_REC_MAX_BODY)
        return WAL_REC_BAD_HEADER;
    if (body > len - off - WAL_REC_HEADER)
        return WAL_REC_SHORT;
    if (get_le(h + 20, 4) != crc32c(0, h + WAL_REC_HEADER, (size_t)body))
        return WAL_REC_BAD_BODY;
    return WAL_REC_WHOLE;
}

/* Whether some 512-byte sector's share of buf[from, to) is all zero. */
static bool has_zero_sector_share(const unsigned char *buf, size_t from, size_t to)
{
    size_t at = from;
    while (at < to) {
        size_t sector_end = (at / WAL_SECTOR + 1) * WAL_SECTOR;
        size_t end = sector_end < to ? sector_end : to;
        if (all_zero(buf + at, end - at))
            return true;
        at = end;
    }
    return false;
}

/* A whole record after off that names record seq synced: its offset, or 0. */
static size_t synced_record_after(const unsigned char *buf, size_t len, size_t off, uint64_t seq)
{
    for (size_t at = off + 1; at + WAL_REC_HEADER <= len; at++) {
        const unsigned char *h = buf + at;
        uint64_t rseq = get_le(h + 4, 8), lag = get_le(h + 12, 4);
        /* Cheap filters first: a later number, a synced point at or past seq. */
        if (rseq <= seq || rseq - seq > WAL_REC_MAX_BODY || lag > rseq || rseq - lag < seq)
            continue;
        if (walrec_check(buf, len, at, rseq) == WAL_REC_WHOLE)
            return at;
    }
    return 0;
}

/* One past the last non-zero byte of buf[off, len), or off.  By words:
   the zero tail is most of a preallocated segment (a byte loop over it
   was 9% of the time opening a log of a million records, by perf). */
static size_t nonzero_end(const unsigned char *buf, size_t len, size_t off)
{
    size_t end = len;
    while (end > off && end % sizeof(uint64_t) && buf[end - 1] == 0)
        end--;
    while (end >= off + sizeof(uint64_t)) {
        uint64_t word;
        memcpy(&word, buf + end - sizeof word, sizeof word);
        if (word)
            break;
        end -= sizeof word;
    }
    while (end > off && buf[end - 1] == 0)
        end--;
    return end;
}

void waltail_classify(const unsigned char *buf, size_t len, size_t off, uint64_t seq,
                      wal_end *out)
{
    memset(out, 0, sizeof *out);
    size_t data_end = nonzero_end(buf, len, off);
    if (data_end == off) {
        out->kind = WAL_END_CLEAN;
        out->tail_end = off;
        return;
    }
    size_t later = synced_record_after(buf, len, off, seq);
    if (later) {
        out->kind = WAL_END_CORRUPT;
        snprintf(out->why, sizeof out->why, "record %llu is damaged, and record %llu at byte "
                 "%zu, written after it reached the disk, follows",
                 (unsigned long long)seq, (unsigned long long)get_le(buf + later + 4, 8), later);
        return;
    }
    out->kind = WAL_END_TORN;
    out->tail_end = data_end;
    wal_rec_check c = walrec_check(buf, len, off, seq);
    if (c == WAL_REC_SHORT) {
        out->tail_end = len;   /* what is there is a prefix of the record */
        snprintf(out->why, sizeof out->why, "record %llu runs past the end of the file",
                 (unsigned long long)seq);
        return;
    }
    const unsigned char *h = buf + off;
    if (c == WAL_REC_BAD_HEADER && walrec_header_checks(h)) {
        /* A header that checks was written whole, yet names another
           record or an impossible length: not an interrupted write. */
        out->kind = WAL_END_CORRUPT;
        out->tail_end = 0;
        snprintf(out->why, sizeof out->why, "record %llu where %llu was due, or of a wrong "
                 "length", (unsigned long long)get_le(h + 4, 8), (unsigned long long)seq);
        return;
    }
    if (all_zero(h, WAL_REC_HEADER)) {
        snprintf(out->why, sizeof out->why, "record %llu's header never reached the disk",
                 (unsigned long long)seq);
        return;
    }
    size_t extent_end = off + WAL_REC_HEADER;
    if (c == WAL_REC_BAD_BODY)
        extent_end += (size_t)get_le(h, 4);
    if (has_zero_sector_share(buf, off, extent_end)) {
        snprintf(out->why, sizeof out->why, "record %llu was only partly written",
                 (unsigned long long)seq);
        return;
    }
    out->kind = WAL_END_CORRUPT;
    out->tail_end = 0;
    snprintf(out->why, sizeof out->why, "record %llu %s", (unsigned long long)seq,
             c == WAL_REC_BAD_BODY ? "fails its checksum" : "has a header that fails its checksum");
}
