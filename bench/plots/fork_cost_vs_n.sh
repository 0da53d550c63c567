#!/bin/sh
# Fork cost (docs/BENCHMARKS.md, W1) against graph size: runs an already built
# fork_cost for N = 10^4 .. 10^7, writes fork_cost_vs_n.dat and draws
# fork_cost_vs_n.png with fork_cost_vs_n.gp.  Builds nothing.
#
#   bench/plots/fork_cost_vs_n.sh [path/to/fork_cost]
#
# Default binary: build-bench/bench/fork_cost under the repository root.
# Environment:
#   SIZES="10000 100000 1000000 10000000"   node counts to run
#   DEEP_COPY=1   also run fork_cost once per N in text mode (2 rounds) to read
#                 its "deep copy (rebuild through the API)" time, which --json
#                 does not print; DEEP_COPY=0 skips it (the line is left out)
#   REV=text      what the binary was built from, for the .dat header (default:
#                 this tree's git HEAD, marked if it has uncommitted changes)
#   OUT=dir       where the .dat and .png go (default: this directory)
#
# Rounds: 2000 up to 10^5, 1000 at 10^6, 200 at 10^7.  At 10^7 each shape's
# graph is built and freed in turn; the indexed one peaks near 6.4 GB resident
# (5.3 GiB of graph), measured on the run committed here.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-$root/build-bench/bench/fork_cost}
out=${OUT:-$here}
sizes=${SIZES:-"10000 100000 1000000 10000000"}
deep=${DEEP_COPY:-1}

if [ ! -x "$bin" ]; then
    echo "fork_cost_vs_n.sh: no fork_cost binary at $bin (build with cmake first)" >&2
    exit 2
fi
command -v gnuplot >/dev/null || { echo "fork_cost_vs_n.sh: gnuplot not found" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM HUP

rounds_for() {
    if [ "$1" -ge 10000000 ]; then echo 200
    elif [ "$1" -ge 1000000 ]; then echo 1000
    else echo 2000; fi
}

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

dat="$out/fork_cost_vs_n.dat"
{
    echo "# strata W1 fork cost against N: bench/plots/fork_cost_vs_n.sh"
    echo "# date: $day"
    echo "# machine: $machine; $(uname -sr); load average at start: $load"
    echo "# binary: $bin, built $(date -u -r "$bin" '+%Y-%m-%d %H:%M UTC'), source: $rev"
    echo "# times in microseconds per operation; held = SET, first write under a held view;"
    echo "# none = SET, nothing held; deep = build time of the same graph through the API"
    echo "# (fork_cost text mode, the cost of a fork that copied; NaN if not measured);"
    echo "# MiB = graph bytes of the shape after the run (NaN if not measured)"
    echo "# columns:"
    echo "# 1 N  2 rounds"
    echo "# plain:      3 held_median  4 held_mean  5 held_worst  6 none_median  7 deep_us  8 MiB"
    echo "# 12 columns: 9 held_median 10 held_mean 11 held_worst 12 none_median 13 deep_us 14 MiB"
    echo "# indexed:   15 held_median 16 held_mean 17 held_worst 18 none_median 19 deep_us 20 MiB"
} > "$tmp/dat"

for n in $sizes; do
    r=$(rounds_for "$n")
    echo "fork_cost: N=$n, $r rounds (json)" >&2
    "$bin" --json --nodes "$n" --rounds "$r" > "$tmp/json.$n"
    if [ "$deep" != 0 ]; then
        echo "fork_cost: N=$n, text mode for the deep-copy time" >&2
        "$bin" --nodes "$n" --rounds 2 > "$tmp/text.$n"
    else
        : > "$tmp/text.$n"
    fi
    # fork_cost's JSON lines have a fixed layout:
    # {"shape":"plain","case":"...","mean_us":1.0,"median_us":1.0,"worst_us":1.0}
    awk -v n="$n" -v r="$r" '
        function field(line, key,    s) {   # a number, or a string without quotes in it
            s = line
            sub(".*\"" key "\":", "", s)
            if (substr(s, 1, 1) == "\"") {
                s = substr(s, 2)
                sub("\".*", "", s)
            } else
                sub("[,}].*", "", s)
            return s
        }
        FNR == 1 { file++ }
        file == 1 && /"median_us"/ {
            sh = field($0, "shape"); c = field($0, "case")
            if (c == "SET, first write under a held view") {
                hmed[sh] = field($0, "median_us"); hmean[sh] = field($0, "mean_us")
                hworst[sh] = field($0, "worst_us")
            } else if (c == "SET, nothing held")
                none[sh] = field($0, "median_us")
        }
        file == 2 && /\(built in [0-9]+ ms\):$/ { sh = $0; sub(/ \(built in.*/, "", sh) }
        file == 2 && /deep copy \(rebuild through the API\)/ {
            s = $0; sub(/.*rebuild through the API\): /, "", s); sub(/ us.*/, "", s); deepus[sh] = s
            m = $0; sub(/.*graph bytes: /, "", m); sub(/ MiB.*/, "", m); mib[sh] = m
        }
        END {
            line = n " " r
            split("plain|12 columns|indexed", shapes, "|")
            for (i = 1; i <= 3; i++) {
                sh = shapes[i]
                if (!(sh in hmed) || !(sh in none)) {
                    print "fork_cost_vs_n.sh: no held/nothing-held rows for " sh > "/dev/stderr"
                    exit 1
                }
                line = line " " hmed[sh] " " hmean[sh] " " hworst[sh] " " none[sh] \
                       " " (sh in deepus ? deepus[sh] : "NaN") " " (sh in mib ? mib[sh] : "NaN")
            }
            print line
        }' "$tmp/json.$n" "$tmp/text.$n" >> "$tmp/dat"
done

# The raw JSON lines, as comments gnuplot skips.
for n in $sizes; do
    echo "# raw N=$n:"
    sed 's/^/# /' "$tmp/json.$n"
done >> "$tmp/dat"
cp "$tmp/dat" "$dat"

gnuplot -e "dat='$dat'; png='$out/fork_cost_vs_n.png'; when='$day'; machine='$machine'" \
    "$here/fork_cost_vs_n.gp"
echo "wrote $dat and $out/fork_cost_vs_n.png" >&2
