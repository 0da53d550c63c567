/*
 * id_map — the importer's table from (id space, id string) to node id.
 *
 * Open addressing with linear probing over 32-byte slots {hash, key,
 * node, space, length}.  Keys of up to 8 bytes (numeric ids, mostly) are
 * kept in the slot; longer ones in one growable byte arena, so a million
 * ids cost about 64 bytes of table each (at most 70% full) plus the long
 * keys' bytes, not an allocation per id.
 *
 * A space whose ids are all small decimal numbers written the one way
 * ("0", "42"; no sign, no leading zero) mapping to nodes below 2^32 - 1
 * keeps them in an array indexed by the number instead (4 bytes an id, one
 * read a lookup); its first other id moves them into the table for good.
 *
 * Invariants: every (space, key) is in the map once, in its space's array
 * or in the table, never both; a slot is empty iff its space is UINT32_MAX
 * (no id space has that number); the capacity is a power of two.
 */
#ifndef STRATA_QUERY_ID_MAP_H
#define STRATA_QUERY_ID_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct id_map id_map;

/* A new empty map, or NULL when out of memory. */
id_map *id_map_new(void);
void id_map_free(id_map **m);

/* Adds key in id space `space` for node: 1 when added, 0 when the key was
   already there (*node_out gets the node it maps to), -1 when out of
   memory (the map is unchanged). */
int id_map_add(id_map *m, uint32_t space, const char *key, size_t len, uint64_t node,
               uint64_t *node_out);
/* Whether key is in space; *node gets its node. */
bool id_map_find(const id_map *m, uint32_t space, const char *key, size_t len, uint64_t *node);

/* Where id_map_find(m, space, key, len) looks, worked out once. */
typedef struct id_map_hint {
    uint64_t v;
    int kind;
} id_map_hint;

/* Starts loading where the lookup of key will look, and notes where in
   *hint, so a batch of lookups into a large map waits for memory once,
   not once per key (the importer's relationship rows: their ends are
   anywhere), and reads each key once. */
void id_map_prefetch(const id_map *m, uint32_t space, const char *key, size_t len,
                     id_map_hint *hint);
/* id_map_find, with the hint id_map_prefetch gave for the same space and
   key (the map may have changed since). */
bool id_map_find_at(const id_map *m, uint32_t space, const char *key, size_t len,
                    const id_map_hint *hint, uint64_t *node);
size_t id_map_count(const id_map *m);
/* Bytes the map holds (table and arena). */
size_t id_map_bytes(const id_map *m);

#endif
