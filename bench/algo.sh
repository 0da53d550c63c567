#!/bin/sh
# The graph algorithms in strata (1 and 2 threads) and igraph, on the same
# generated graph, in one run.  usage: bench/algo.sh BUILD_DIR [NODES RELS]
#   bench/algo.sh build/release                     100,000 / 1,000,000
#   bench/algo.sh build/release 1000000 10000000    the target size (docs/ALGORITHMS.md)
# ALGO_ONLY=NAME,... runs only those algorithms (on both sides); ALGO_REPEAT=K
# runs each K times (strata's and igraph's); ALGO_LIMIT_S stops an igraph run
# (algo_igraph.py).
set -eu
build=${1:?usage: algo.sh BUILD_DIR [NODES RELS]}
nodes=${2:-100000}
rels=${3:-1000000}
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
only=${ALGO_ONLY:-}
repeat=${ALGO_REPEAT:-1}
"$build/bench/algo" --nodes "$nodes" --rels "$rels" --edges "$edges" --threads 1,2 \
    --repeat "$repeat" ${only:+--only "$only"}
if /usr/bin/python3 -c "import igraph, numpy" 2>/dev/null; then
    i=0
    while [ "$i" -lt "$repeat" ]; do
        /usr/bin/python3 "$(dirname "$0")/algo_igraph.py" "$nodes" "$edges" ${only:+"$only"}
        i=$((i + 1))
    done
else
    echo "algo.sh: python3-igraph or python3-numpy missing: igraph skipped" >&2
fi
