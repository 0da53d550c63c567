#!/bin/sh
# core/txn.c sits on core/graph.c (docs/ARCHITECTURE.md, "Who owns
# what"): txn.c calls the graph's write bracket, fork and versions, and
# graph.c calls nothing of txn.c's.  Fails when core/graph.c includes
# core/txn.h or names a function that core/txn.c defines or core/txn.h
# declares.
root=${1:-.}
graph=$root/core/graph.c
txn=$root/core/txn.c
header=$root/core/txn.h
for f in "$graph" "$txn" "$header"; do
    [ -f "$f" ] || { echo "txn layering: $f is missing"; exit 1; }
done
bad=0
if grep -q '^[[:space:]]*#[[:space:]]*include[[:space:]]*"core/txn.h"' "$graph"; then
    echo "txn layering: core/graph.c includes core/txn.h"
    bad=1
fi
# Functions with a name at the start of a definition or declaration line
# (static functions of txn.c are its own and cannot be called anyway).
names=$( (grep -v '^static ' "$txn"; grep '^[a-z]' "$header") |
    sed -n 's/^[a-z][a-z_0-9 ]*[ *]\([a-z_][a-z_0-9]*\)(.*/\1/p' | sort -u)
[ -n "$names" ] || { echo "txn layering: found no functions in core/txn.c"; exit 1; }
for name in $names; do
    if grep -q "\\b$name(" "$graph"; then
        echo "txn layering: core/graph.c calls $name, which core/txn.c owns"
        bad=1
    fi
done
[ $bad -eq 0 ] && echo "txn layering: core/graph.c calls nothing of core/txn.c ($(echo $names | wc -w) functions checked)"
exit $bad
