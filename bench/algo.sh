#!/bin/sh
# The graph algorithms in strata (1 and 2 threads) and igraph, on the same
# generated graph, in one run.  usage: bench/algo.sh BUILD_DIR [NODES RELS]
#   bench/algo.sh build/release                     100,000 / 1,000,000
#   bench/algo.sh build/release 1000000 10000000    the target size (docs/ALGORITHMS.md)
# ALGO_ONLY=NAME,... runs only those algorithms (on both sides); ALGO_REPEAT=K
# runs each K times (strata's and igraph's); ALGO_LIMIT_S stops an igraph run
# (algo_igraph.py).  ALGO_SAMPLE=S: strata's betweenness from S sampled
# sources (16), 0 exact; igraph's betweenness is exact (python3-igraph 0.10.2
# has no sampled or source-subset form), and it and closeness (O(n m) on
# both sides) run only when ALGO_ONLY names them.
set -eu
build=${1:?usage: algo.sh BUILD_DIR [NODES RELS]}
nodes=${2:-100000}
rels=${3:-1000000}
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
only=${ALGO_ONLY:-}
repeat=${ALGO_REPEAT:-1}
sample=${ALGO_SAMPLE:-16}
"$build/bench/algo" --nodes "$nodes" --rels "$rels" --edges "$edges" --threads 1,2 \
    --repeat "$repeat" --sample "$sample" ${only:+--only "$only"}
# the python3 on PATH may be another installation than the one the Debian
# packages went into: the first of it and /usr/bin/python3 that has them
python=
for candidate in python3 /usr/bin/python3; do
    if "$candidate" -c "import igraph, numpy" 2>/dev/null; then
        python=$candidate
        break
    fi
done
if [ -n "$python" ]; then
    i=0
    while [ "$i" -lt "$repeat" ]; do
        "$python" "$(dirname "$0")/algo_igraph.py" "$nodes" "$edges" ${only:+"$only"}
        i=$((i + 1))
    done
else
    echo "algo.sh: python3-igraph or python3-numpy missing: igraph skipped" >&2
fi
