#!/bin/sh
# Installs what the Bolt server's conformance tests need: Debian's node and
# npm (only when node is missing), and the official Neo4j JavaScript driver
# at the version pinned in tests/bolt/package-lock.json, into
# tests/bolt/node_modules (ignored by git).  Without network access the
# install fails with a message and the tests skip themselves.
set -eu
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "installing: nodejs npm"
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm
fi
want=$(sed -n 's/.*"neo4j-driver": "\([0-9.]*\)".*/\1/p' tests/bolt/package.json)
have=$(sed -n 's/^ *"version": "\([0-9.]*\)".*/\1/p' tests/bolt/node_modules/neo4j-driver/package.json \
    2>/dev/null | head -1)
[ "$have" = "$want" ] && exit 0
(cd tests/bolt && npm ci --no-audit --no-fund --silent) ||
    echo "bolt tests: npm could not install neo4j-driver $want; those tests will be skipped"
