#!/bin/sh
# Fails when a file includes a layer to its right: the layers are
# storage <- index <- journal <- core <- query <- cli (SPEC section 2); each
# may include itself and the ones to its left, and include/ from anywhere.
root=${1:-.}
layers="storage index journal core query cli"
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
# The server is a client of the public API: it includes strata.h, its own
# headers and system headers, never the engine's.
if [ -d "$root/server" ]; then
    for f in $(find "$root/server" -name '*.[ch]'); do
        checked=$((checked + 1))
        for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
            case "$inc" in
            strata.h | server/*) ;;
            *)
                echo "include order: ${f#$root/} includes \"$inc\": server/ may include only strata.h and server/"
                bad=1
                ;;
            esac
        done
    done
fi
[ $checked -gt 0 ] || { echo "include order: no sources found under $root"; exit 1; }
[ $bad -eq 0 ] && echo "include order: $checked files follow storage <- index <- journal <- core <- query <- cli; server/ uses strata.h only"
exit $bad
