/*
 * fuzz_loader — libFuzzer target for the saved-file loader (docs/FORMAT.md,
 * §11): every input must load or fail cleanly.
 *
 * Built and run by scripts/fuzz.sh (not by CMake), seeded from
 * tests/corpus/loader: small valid files, written by
 *
 *   STRATA_LOADER_CORPUS=tests/corpus/loader build/<dir>/tests/test_persist
 *
 * Besides what the sanitizers catch (leaks included), the target aborts
 * when a failed load hands out a graph or leaves no message, when a
 * success leaves no graph, and when a loaded graph fails
 * strata_integrity_check: whatever the loader accepts must be a sound
 * graph.
 */
#include <stdint.h>
#include <stdlib.h>

#include "strata.h"
#include "core/persist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    strata_graph *g = NULL;
    char err[512];
    strata_status s = persist_load_bytes(data, size, &g, err, sizeof err);
    if (s != STRATA_OK) {
        if (g || !err[0])
            abort();
        return 0;
    }
    if (!g)
        abort();
    strata_view *v = NULL;
    if (strata_snapshot(g, &v) != STRATA_OK || strata_integrity_check(v) != STRATA_OK)
        abort();
    strata_view_release(&v);
    strata_graph_free(&g);
    return 0;
}
