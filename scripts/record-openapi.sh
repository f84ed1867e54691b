#!/usr/bin/env bash
# record-openapi.sh: record the OpenAPI documents of a real kube-apiserver for fakeapi to serve.
#
# fakeapi serves /openapi/v2 and /openapi/v3 so that kubectl explain, kubectl's client-side
# validation and server-side apply have the type information they need. Writing those schemas
# by hand would be a second, wrong copy of Kubernetes; generating them needs the whole
# kubernetes build. So we record them from the real server the integration tests already build
# (scripts/real-apiserver.sh), once per Kubernetes version, and commit them gzip-compressed
# (fakeapi/internal/openapi/*.gz, embedded into the package).
#
# Usage:
#   scripts/record-openapi.sh            start a real server, record, stop it
#
# What is recorded (the real server's bytes, unchanged):
#   v2.json.gz          GET /openapi/v2 (Accept: application/json)
#   v2.pb.gz            GET /openapi/v2 in the protobuf form client-go's discovery asks for
#   v3/<gv>.json.gz     GET /openapi/v3/<gv> for every group version fakeapi can serve
set -euo pipefail

readonly ROOT=$(cd "$(dirname "$0")/.." && pwd)
readonly OUT=$ROOT/fakeapi/internal/openapi
# The group versions fakeapi serves (fakeapi/resources.go) or reads (CRDs).
readonly GROUP_VERSIONS=(api/v1 apis/apps/v1 apis/apiextensions.k8s.io/v1)

die() { echo "record-openapi: error: $*" >&2; exit 1; }
log() { echo "record-openapi: $*" >&2; }

work=$(mktemp -d)
cleanup() { "$ROOT/scripts/real-apiserver.sh" stop "$work" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

REALAPI_PARENT_PID=$$ "$ROOT/scripts/real-apiserver.sh" start "$work" >/dev/null
# shellcheck disable=SC1091
. "$work/env"

get() { # get <path> <accept> <out>
	curl -fsS --max-time 60 --cacert "$REALAPI_CA_FILE" -H "Authorization: Bearer $REALAPI_TOKEN" \
		-H "Accept: $2" -o "$3" "$REALAPI_URL$1" || die "GET $1 failed"
}

mkdir -p "$OUT/v3"
get /openapi/v2 application/json "$work/v2.json"
get /openapi/v2 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' "$work/v2.pb"
get /openapi/v3 application/json "$work/v3-index.json"
for gv in "${GROUP_VERSIONS[@]}"; do
	# The index names each document with its hash; the path without it serves the same bytes.
	grep -q "\"$gv\":" "$work/v3-index.json" || die "the real server has no OpenAPI v3 document for $gv"
	get "/openapi/v3/$gv" application/json "$work/v3-doc.json"
	gzip -9 -n -c "$work/v3-doc.json" >"$OUT/v3/${gv//\//_}.json.gz"
done
gzip -9 -n -c "$work/v2.json" >"$OUT/v2.json.gz"
gzip -9 -n -c "$work/v2.pb" >"$OUT/v2.pb.gz"
version=$(curl -fsS --cacert "$REALAPI_CA_FILE" -H "Authorization: Bearer $REALAPI_TOKEN" "$REALAPI_URL/version" |
	sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p')
echo "$version" >"$OUT/VERSION"
log "recorded the OpenAPI documents of kube-apiserver $version into $OUT:"
ls -l "$OUT" "$OUT/v3" >&2
