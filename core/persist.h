/*
 * persist — the engine side of strata_save / strata_load (persist.c has
 * the design; docs/FORMAT.md the bytes).
 */
#ifndef STRATA_CORE_PERSIST_H
#define STRATA_CORE_PERSIST_H

#include <stddef.h>

#include "strata.h"

/* strata_load_ex on a file's bytes already in memory (borrowed): the
   loader's whole checking and building, without the file system — what
   the fuzz target drives.  The message names section and offset but no
   path. */
strata_status persist_load_bytes(const unsigned char *bytes, size_t size, strata_graph **out,
                                 char *err, size_t errlen);

/* fsyncs the directory dir, so that a rename or a file created in it is
   durable: 0 or an errno. */
int persist_sync_dir(const char *dir);

#endif
