#!/bin/sh
# Installs what strata needs to build, test and benchmark, from Debian's
# packages.  Idempotent: does nothing when everything is already there.
set -eu
packages="build-essential cmake pkg-config libjemalloc-dev uthash-dev libcmocka-dev
libedit-dev libcrypt-dev libsqlite3-dev libutf8proc-dev libpcre2-dev hyperfine python3 tzdata clang libclang-rt-14-dev
python3-dev python3-pytest python3-numpy python3-pandas python3-networkx python3-igraph python3-setuptools"
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    if [ "$(id -u)" -ne 0 ]; then
        SUDO=sudo
    else
        SUDO=
    fi
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
# The Bolt server's tests drive it with the Neo4j JavaScript driver (npm).
sh "$(dirname "$0")/install-bolt-driver.sh"
