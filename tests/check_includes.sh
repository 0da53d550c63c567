#!/bin/sh
# Fails when a file includes a layer to its right: the layers are
# storage <- index <- journal <- core <- algo <- query <- cli (docs/ARCHITECTURE.md);
# each may include itself and the ones to its left, and include/ from
# anywhere; python/src, server/ and cli/ are clients and include strata.h
# alone (cli/ also the server's headers, for strata serve).  Outside core/
# and tests/, nothing includes core/graph_impl.h: the layers above core read
# its read side, core/version.h and core/graph_handle.h.
root=${1:-.}
layers="storage index journal core algo query cli"
rank() {
    i=0
    for l in $layers; do
        [ "$l" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    echo -1
}
bad=0
checked=0
for dir in $layers; do
    [ -d "$root/$dir" ] || continue
    mine=$(rank "$dir")
    for f in $(find "$root/$dir" -name '*.[ch]'); do
        checked=$((checked + 1))
        for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\)\/.*".*/\1/p' "$f"); do
            theirs=$(rank "$inc")
            [ "$theirs" -lt 0 ] && continue
            if [ "$theirs" -gt "$mine" ]; then
                echo "include order: ${f#$root/} includes $inc/, a layer to the right of $dir/"
                bad=1
            fi
        done
    done
done
# Clients of the library (the Python package, the server) see strata.h
# only: a quoted include there names a file of their own folder
# ("server/bolt.h" or "strata_py.h").
for dir in python/src server; do
    [ -d "$root/$dir" ] || continue
    for f in $(find "$root/$dir" -name '*.[ch]'); do
        checked=$((checked + 1))
        for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
            case $inc in
            "$dir"/*) ;;
            */*) echo "include order: ${f#$root/} includes $inc; $dir/ may use strata.h only"
                 bad=1 ;;
            esac
        done
    done
done
# The program is a client of the library too: cli/ includes strata.h,
# its own headers and the server's (strata serve), nothing of the engine.
for f in $(find "$root/cli" -name '*.[ch]' 2>/dev/null); do
    checked=$((checked + 1))
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        case $inc in
        strata.h|cli/*|server/*) ;;
        *) echo "include order: ${f#$root/} includes $inc; the program is a client of strata.h"
           bad=1 ;;
        esac
    done
done
# The graph handle's internals (its lock, versions, journal and statement
# state) are private to core/: the layers above read core/version.h and
# core/graph_handle.h.  Tests of core's internals may include them too.
private=0
for f in $(find "$root" \( -path "$root/core" -o -path "$root/tests" -o -path "$root/build*" \
                           -o -path "$root/.*" \) -prune -o -name '*.[ch]' -print); do
    private=$((private + 1))
    if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]([^">]*/)?graph_impl\.h[">]' "$f"; then
        echo "include order: ${f#$root/} includes core/graph_impl.h, private to core/ (use core/version.h or core/graph_handle.h)"
        bad=1
    fi
done
[ $checked -gt 0 ] && [ $private -gt 0 ] || { echo "include order: no sources found under $root"; exit 1; }
[ $bad -eq 0 ] && echo "include order: $checked files follow storage <- index <- journal <- core <- algo <- query <- cli; $private outside core/ leave core/graph_impl.h alone"
exit $bad
