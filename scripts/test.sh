#!/usr/bin/env bash
# Runs every test of the project, with the race detector: the main module
# (including the conformance suite against a real kube-apiserver), the
# bench/ module (interop with client-go) and the metrics/prometheus module
# (the client_golang adapter). README's test command and .ci/run
# both call this script, so they cannot drift apart.
#
# The real kube-apiserver and etcd are built from the Go module proxy once
# and cached outside the repository (scripts/real-apiserver.sh). A cold build
# takes about ten minutes on two cores; later runs find the cache at once.
# If the build fails, this script fails: the suite never skips silently.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== real kube-apiserver and etcd (cached build)"
start=$(date +%s)
bash scripts/real-apiserver.sh build
echo "   ready in $(( $(date +%s) - start ))s"

echo "== main module"
go test -race -count=1 -timeout 20m ./...

echo "== bench module"
(cd bench && go test -race -count=1 -timeout 10m ./...)

echo "== metrics/prometheus module"
(cd metrics/prometheus && go test -race -count=1 -timeout 5m ./...)
