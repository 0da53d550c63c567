#!/bin/sh
# strata_diff's cost against the number of changes and the graph's size
# (docs/BRANCHES.md): runs an already built bench/branch --grid, writes
# branch_diff.dat and draws branch_diff.png with branch_diff.gp.
#
#   bench/plots/branch_diff.sh [path/to/branch]
#
# Default binary: build-bench/bench/branch under the repository root.
# Environment: NODES (largest graph, default 1000000), OUT (where the .dat
# and .png go, default this directory).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-$root/build-bench/bench/branch}
out=${OUT:-$here}
[ -x "$bin" ] || { echo "branch_diff.sh: no branch binary at $bin" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "branch_diff.sh: gnuplot not found" >&2; exit 2; }
day=$(date -u +%Y-%m-%d)
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)
machine="$(nproc)-core ${cpu:-unknown CPU}, shared"
dat="$out/branch_diff.dat"
{
    echo "# strata_diff against changes and graph size: bench/plots/branch_diff.sh"
    echo "# date: $day; machine: $machine; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# source: git $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "# indexed shape (5 indices); k SETs on random nodes of a branch, then"
    echo "# strata_diff(view of the source, view of the branch); median of 200 runs (20 at k >= 1000)"
    "$bin" --grid --nodes "${NODES:-1000000}"
} > "$dat.tmp"
mv "$dat.tmp" "$dat"
gnuplot -e "dat='$dat'; png='$out/branch_diff.png'; when='$day'; machine='$machine'" \
    "$here/branch_diff.gp"
echo "wrote $dat and $out/branch_diff.png" >&2
