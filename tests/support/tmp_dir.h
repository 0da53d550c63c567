/*
 * A directory of its own for a test program that writes files: made
 * before the group runs (under $TMPDIR, else /tmp) and removed with
 * everything in it afterwards.  Include after <cmocka.h>; the group's
 * fixture calls tmp_dir_make("strata-NAME") and tmp_dir_remove.
 */
#ifndef STRATA_TESTS_SUPPORT_TMP_DIR_H
#define STRATA_TESTS_SUPPORT_TMP_DIR_H

#include <stdio.h>
#include <stdlib.h>

static char tmp_dir[256];

/* tmp_dir/name; four calls' results are valid at once. */
static inline const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int turn;
    char *p = buf[turn++ % 4];
    snprintf(p, 512, "%s/%s", tmp_dir, name);
    return p;
}

static inline int tmp_dir_make(const char *prefix)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmp_dir, sizeof tmp_dir, "%s/%s-XXXXXX", base, prefix);
    return mkdtemp(tmp_dir) ? 0 : -1;
}

static inline int tmp_dir_remove(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
