#!/bin/sh
# Reader fanout (docs/BENCHMARKS.md, W2): runs an already built `readers --json`,
# writes readers_fanout.dat and draws readers_fanout.png with readers_fanout.gp
# (lookups per second at the median wave against reader count 1/4/8, strata
# and SQLite WAL in the same run).  Builds nothing.
#
#   bench/plots/readers_fanout.sh [path/to/readers]
#
# Default binary: build-bench/bench/readers under the repository root.
# Environment:
#   WAVES=W       waves per case (readers' default, 100, if unset)
#   REV=text      what the binary was built from, for the .dat header (default:
#                 this tree's git HEAD, marked if it has uncommitted changes)
#   OUT=dir       where the .dat and .png go (default: this directory)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-$root/build-bench/bench/readers}
out=${OUT:-$here}

if [ ! -x "$bin" ]; then
    echo "readers_fanout.sh: no readers binary at $bin (build with cmake first)" >&2
    exit 2
fi
command -v gnuplot >/dev/null || { echo "readers_fanout.sh: gnuplot not found" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM HUP

day=$(date -u +%Y-%m-%d)
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)
machine="$(nproc)-core ${cpu:-unknown CPU}, shared"
load=$(cut -d' ' -f1-3 /proc/loadavg)
# What the binary was built from: REV if given, else this tree's HEAD (and
# whether it had uncommitted changes when the script ran).
if [ -z "${REV:-}" ]; then
    rev="git $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
    [ -z "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] ||
        rev="$rev + uncommitted changes"
fi
rev=${REV:-$rev}

echo "readers --json${WAVES:+ --waves $WAVES}" >&2
"$bin" --json ${WAVES:+--waves "$WAVES"} > "$tmp/json"

dat="$out/readers_fanout.dat"
{
    echo "# strata W2 reader fanout: bench/plots/readers_fanout.sh"
    echo "# date: $day"
    echo "# machine: $machine; $(uname -sr); load average at start: $load"
    echo "# binary: $bin, built $(date -u -r "$bin" '+%Y-%m-%d %H:%M UTC'), source: $rev"
    echo "# a wave: R threads, each takes a view (SQLite: opens a connection, BEGIN), 128 point"
    echo "# lookups, releases; times in ms per wave; lookups/s = R*128 / median wave time;"
    echo "# floor = median wave of threads that do nothing; seed 001 figures converted the same way"
    echo "# columns:"
    echo "# 1 readers  2 lookups  3 waves"
    echo "# 4 strata_median_ms  5 strata_mean_ms  6 strata_lookups_per_s"
    echo "# 7 sqlite_median_ms  8 sqlite_mean_ms  9 sqlite_lookups_per_s  10 speedup_median"
    echo "# 11 floor_median_ms  12 seed_tosumu_lookups_per_s  13 seed_sqlite_lookups_per_s"
    # readers' JSON lines have a fixed layout: "key":number or "key":"string".
    awk '
        function field(line, key,    s) {
            s = line
            sub(".*\"" key "\":", "", s)
            if (substr(s, 1, 1) == "\"") {
                s = substr(s, 2)
                sub("\".*", "", s)
            } else
                sub("[,}].*", "", s)
            return s
        }
        { c = field($0, "case") }
        c ~ /^thread_floor_/ { floor[field($0, "readers")] = field($0, "median_ms") }
        c ~ /^fanout_/ {
            r = field($0, "readers"); l = field($0, "lookups")
            n++
            row[n] = r " " l " " field($0, "rounds") " " \
                field($0, "strata_median_ms") " " field($0, "strata_mean_ms") " " \
                field($0, "strata_lookups_per_s") " " \
                field($0, "sqlite_median_ms") " " field($0, "sqlite_mean_ms") " " \
                field($0, "sqlite_lookups_per_s") " " field($0, "speedup_median")
            rr[n] = r
            tos[n] = sprintf("%.0f", l / (field($0, "seed_tosumu_ms") / 1e3))
            sq[n] = sprintf("%.0f", l / (field($0, "seed_sqlite_ms") / 1e3))
        }
        END {
            if (n == 0) { print "readers_fanout.sh: no fanout rows" > "/dev/stderr"; exit 1 }
            for (i = 1; i <= n; i++)
                print row[i], (rr[i] in floor ? floor[rr[i]] : "NaN"), tos[i], sq[i]
        }' "$tmp/json"
    echo "# raw:"
    sed 's/^/# /' "$tmp/json"
} > "$tmp/dat"
cp "$tmp/dat" "$dat"

gnuplot -e "dat='$dat'; png='$out/readers_fanout.png'; when='$day'; machine='$machine'" \
    "$here/readers_fanout.gp"
echo "wrote $dat and $out/readers_fanout.png" >&2
