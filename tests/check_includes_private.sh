#!/bin/sh
# check_includes.sh must refuse core/graph_impl.h outside core/ and tests/:
# run it on a small tree, first clean, then with one file of each kind of
# offender (a layer above core, a client-side folder, another spelling of
# the include), and require each offender named and no other file.
check=$(dirname "$0")/check_includes.sh
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/core" "$tmp/algo" "$tmp/query" "$tmp/tests" "$tmp/bench"
echo '#include "core/graph_impl.h"' > "$tmp/core/graph.c"
echo '#include "core/graph_impl.h"' > "$tmp/tests/test_internals.c"
echo '#include "core/version.h"' > "$tmp/algo/reads_view.c"
echo '#include "core/graph_handle.h"' > "$tmp/query/reads_graph.c"
echo '#include "strata.h"' > "$tmp/bench/bench.c"
out=$(sh "$check" "$tmp") || { echo "clean tree refused:"; echo "$out"; exit 1; }

echo '#include "core/graph_impl.h"' >> "$tmp/query/reads_graph.c"
echo '#  include <core/graph_impl.h>' >> "$tmp/algo/reads_view.c"
echo '#include "core/graph_impl.h"' >> "$tmp/bench/bench.c"
out=$(sh "$check" "$tmp")
rc=$?
echo "$out"
[ $rc -ne 0 ] || { echo "offenders accepted"; exit 1; }
# (named from ./, as the tree's own paths, for tests/check_paths.py)
for f in ./query/reads_graph.c ./algo/reads_view.c ./bench/bench.c; do
    f=${f#./}
    echo "$out" | grep -q "^include order: $f includes core/graph_impl.h" ||
        { echo "$f not named"; exit 1; }
done
[ "$(echo "$out" | grep -c 'graph_impl')" -eq 3 ] || { echo "a file allowed it was named"; exit 1; }
echo "check_includes.sh keeps core/graph_impl.h private to core/"
