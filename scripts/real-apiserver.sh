#!/usr/bin/env bash
# real-apiserver.sh: build, start and stop a real kube-apiserver backed by a real etcd,
# on loopback only, for the integration tests in integration/.
#
# Why this exists: fakeapi can only prove that we agree with ourselves. The reflector and the
# informer must also be proved against the real server. No prebuilt binary can be downloaded
# on the machines this project runs on, but the Go module proxy serves the sources of both
# servers, so we build them here, once, and cache the binaries outside the repository.
#
# Usage:
#   scripts/real-apiserver.sh build            build both binaries (idempotent, cached by version)
#   scripts/real-apiserver.sh start <workdir>  start etcd + kube-apiserver; write kubeconfig and env
#   scripts/real-apiserver.sh stop  <workdir>  stop both by PID and wait for them to exit
#   scripts/real-apiserver.sh kill-apiserver  <workdir>  SIGKILL kube-apiserver only (etcd runs on)
#   scripts/real-apiserver.sh start-apiserver <workdir>  start it again: same port, etcd, certs, token
#   scripts/real-apiserver.sh paths            print where the cache and binaries live
#
# Environment:
#   REALAPI_CACHE_DIR   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/informer-realapi)
#   REALAPI_WATCH_CACHE "false" starts kube-apiserver with --watch-cache=false, so that a watch
#                       from a compacted resourceVersion reaches etcd and gets 410 Gone
#                       (default "true": the server's normal configuration)
#   REALAPI_READY_TIMEOUT seconds to wait for /readyz (default 120)
#
# Measured on this project's machine (2 cores shared with several compiling engineers):
#   etcd build 109s; kube-apiserver build 2473s wall (944s user + 326s sys CPU, ~10 min of two
#   idle cores) with a cold Go build cache; cached "build" 0.1s; start to /readyz 7-8s (etcd
#   ready after 0.6-1.5s); stop 5s. Cache: 140M of binaries and scratch modules, plus about 5G
#   in the shared Go build cache.
#
# Every failure exits non-zero with a message that says what is missing. Nothing is skipped
# silently: a caller that wants to skip (go test -short) decides that itself.
set -euo pipefail

readonly KUBE_VERSION=v1.37.2     # k8s.io/kubernetes module version == kube-apiserver version
readonly STAGING_VERSION=v0.37.2  # the staging modules (k8s.io/api, ...) released with it
readonly ETCD_VERSION=v3.6.16     # go.etcd.io/etcd/server/v3; kube-apiserver 1.37 wants etcd 3.6

readonly SELF=$(readlink -f "$0")
readonly CACHE_ROOT="${REALAPI_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/informer-realapi}"
# The cache key names both versions, so bumping either builds into a fresh directory and an
# old binary is never mistaken for a new one.
readonly CACHE_DIR="$CACHE_ROOT/kube-apiserver-${KUBE_VERSION}_etcd-${ETCD_VERSION}"
readonly BIN_DIR="$CACHE_DIR/bin"
readonly SRC_DIR="$CACHE_DIR/src"

die() { echo "real-apiserver: error: $*" >&2; exit 1; }
log() { echo "real-apiserver: $*" >&2; }

# need fails loudly when a tool is missing, naming the package that provides it.
need() {
	local tool=$1 pkg=$2
	command -v "$tool" >/dev/null 2>&1 ||
		die "'$tool' is not installed; install it (Debian: apt-get update && apt-get install -y $pkg)"
}

now_ms() { date +%s%3N; }

# ---------------------------------------------------------------- build

# write_kube_module creates the scratch module that builds kube-apiserver.
#
# k8s.io/kubernetes is not meant to be used as a library: its go.mod requires every staging
# module (k8s.io/api, k8s.io/apiserver, ...) at the placeholder version v0.0.0 and replaces it
# with ./staging/src/..., a directory that is not in the module zip. A replace only applies in
# the main module, so from outside we must repeat it, pointing each staging module at its real
# published release. The list is derived from kubernetes' own go.mod, not typed by hand, so a
# new staging module in a later release is picked up automatically.
write_kube_module() {
	local dir=$SRC_DIR/kube-apiserver kube_mod staging
	mkdir -p "$dir"
	kube_mod=$(cd "$dir" && go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" |
		sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
	[[ -f $kube_mod ]] || die "could not download k8s.io/kubernetes@$KUBE_VERSION from the module proxy"
	staging=$(go mod edit -json "$kube_mod" |
		tr -d '\n\t ' | grep -o '"Path":"[^"]*","Version":"v0.0.0"' |
		sed 's/"Path":"\([^"]*\)".*/\1/')
	[[ -n $staging ]] || die "found no v0.0.0 staging requirements in $kube_mod"

	cat >"$dir/go.mod" <<-EOF
		// Scratch module written by scripts/real-apiserver.sh; safe to delete.
		module informer.local/realapi/kube-apiserver

		go 1.26.0
	EOF
	local args=(-require "k8s.io/kubernetes@$KUBE_VERSION")
	local m
	for m in $staging; do
		args+=(-replace "$m=$m@$STAGING_VERSION")
	done
	(cd "$dir" && go mod edit "${args[@]}")
	log "kube-apiserver: $(echo "$staging" | wc -l) staging modules replaced at $STAGING_VERSION"
	# go get resolves and records every module and go.sum line the command's package graph needs.
	(cd "$dir" && go get "k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION") ||
		die "resolving k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION failed (see above)"
}

# kube_ldflags stamps the version that /version reports. Without it the server calls itself
# v0.0.0-master, which both misleads readers and changes its compatibility-version logic.
kube_ldflags() {
	local major minor date info
	major=${KUBE_VERSION#v}; major=${major%%.*}
	minor=${KUBE_VERSION#v*.}; minor=${minor%%.*}
	# The release time recorded by the module proxy keeps the build reproducible.
	info=$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$KUBE_VERSION.info
	date=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$info" 2>/dev/null || true)
	: "${date:=1970-01-01T00:00:00Z}"
	local pkg flags="-s -w"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
		# The module zip carries no git commit; say where it came from instead of faking a sha.
		flags+=" -X $pkg.gitCommit= -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
	done
	echo "$flags"
}

write_etcd_module() {
	local dir=$SRC_DIR/etcd
	mkdir -p "$dir"
	cat >"$dir/go.mod" <<-EOF
		// Scratch module written by scripts/real-apiserver.sh; safe to delete.
		module informer.local/realapi/etcd

		go 1.26.0
	EOF
	# The etcd server module's root package is the etcd binary's main (it calls etcdmain.Main).
	(cd "$dir" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION") ||
		die "resolving go.etcd.io/etcd/server/v3@$ETCD_VERSION failed (see above)"
}

# build_one builds a main package into BIN_DIR atomically: a half-written binary from an
# interrupted build must never look like a cached one.
build_one() {
	local name=$1 dir=$2 pkg=$3 ldflags=$4 t0 t1
	t0=$(now_ms)
	log "building $name from $pkg (this can take 10+ minutes for kube-apiserver on 2 cores)"
	(cd "$dir" && GOTOOLCHAIN=local CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" \
		-o "$BIN_DIR/.$name.tmp" "$pkg") || die "go build of $name failed (see above)"
	mv -f "$BIN_DIR/.$name.tmp" "$BIN_DIR/$name"
	t1=$(now_ms)
	log "built $name in $(((t1 - t0) / 1000))s"
	echo "$(date -u +%FT%TZ) built $name in $(((t1 - t0) / 1000))s" >>"$CACHE_DIR/build-times.log"
}

cmd_build() {
	need go golang-go
	need flock util-linux
	mkdir -p "$BIN_DIR"
	# One builder at a time: parallel test binaries may all call build; the others wait and then
	# find the binaries cached.
	exec 9>"$CACHE_DIR/.build.lock"
	flock 9
	if [[ ! -x $BIN_DIR/etcd ]]; then
		write_etcd_module
		build_one etcd "$SRC_DIR/etcd" "go.etcd.io/etcd/server/v3" \
			"-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$ETCD_VERSION"
	fi
	if [[ ! -x $BIN_DIR/kube-apiserver ]]; then
		write_kube_module
		build_one kube-apiserver "$SRC_DIR/kube-apiserver" \
			"k8s.io/kubernetes/cmd/kube-apiserver" "$(kube_ldflags)"
	fi
	flock -u 9
	log "binaries ready in $BIN_DIR"
}

# ---------------------------------------------------------------- start / stop

# port_in_use reports whether any TCP socket (v4 or v6) holds the port. /proc is read instead
# of calling ss or netstat so that no extra tool is needed.
port_in_use() {
	local hex
	hex=$(printf ':%04X ' "$1")
	grep -qs "$hex" /proc/net/tcp /proc/net/tcp6
}

# free_port picks a random unused loopback port that is not among its arguments (the ports
# already picked for this cluster). Another process can still take it before our server binds
# it; start notices that as an early exit and quotes the server's log.
free_port() {
	local p tries
	for tries in $(seq 1 200); do
		p=$((20000 + RANDOM % 12000))
		[[ " $* " == *" $p "* ]] && continue
		port_in_use "$p" || { echo "$p"; return; }
	done
	die "found no free loopback port"
}

# spawn starts a daemon in its own session so that it outlives this script and ignores the
# terminal's signals, and prints its PID. It is not a process-group leader here (job control is
# off in scripts), so setsid execs in place and $! is the server's own PID, which stop relies on.
spawn() {
	local log=$1; shift
	setsid "$@" >"$log" 2>&1 </dev/null &
	echo $!
}

# wait_ready polls an URL until it answers 200, failing early if the process died.
wait_ready() {
	local name=$1 pid=$2 log=$3 deadline=$4; shift 4
	until curl -fsS -o /dev/null --max-time 2 "$@" 2>/dev/null; do
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 30 "$log" >&2 || true
			die "$name exited during startup (log: $log)"
		fi
		(($(now_ms) < deadline)) || { tail -n 30 "$log" >&2 || true; die "$name not ready in time (log: $log)"; }
		sleep 0.2
	done
}

start_etcd() {
	local work=$1 client_port=$2 peer_port=$3
	ETCD_PID=$(spawn "$work/etcd.log" "$BIN_DIR/etcd" \
		--name=realapi \
		--data-dir="$work/etcd-data" \
		--listen-client-urls="http://127.0.0.1:$client_port" \
		--advertise-client-urls="http://127.0.0.1:$client_port" \
		--listen-peer-urls="http://127.0.0.1:$peer_port" \
		--initial-advertise-peer-urls="http://127.0.0.1:$peer_port" \
		--initial-cluster="realapi=http://127.0.0.1:$peer_port" \
		--unsafe-no-fsync \
		--log-level=warn)
	echo "$ETCD_PID" >"$work/etcd.pid"
}

# write_credentials makes the service-account key pair and the static token file. The token is
# the only credential the tests use; its group system:masters is bound to cluster-admin by RBAC.
write_credentials() {
	local work=$1
	openssl genrsa -out "$work/sa.key" 2048 2>/dev/null || die "openssl genrsa failed"
	openssl rsa -in "$work/sa.key" -pubout -out "$work/sa.pub" 2>/dev/null || die "openssl rsa -pubout failed"
	TOKEN=$(openssl rand -hex 24)
	(umask 077 && echo "$TOKEN,realapi-admin,realapi-admin-uid,\"system:masters\"" >"$work/tokens.csv")
}

start_kube_apiserver() {
	local work=$1 port=$2 etcd_port=$3
	local extra=()
	if [[ ${REALAPI_WATCH_CACHE:-true} == false ]]; then
		extra+=(--watch-cache=false)
	fi
	KUBE_PID=$(spawn "$work/kube-apiserver.log" "$BIN_DIR/kube-apiserver" \
		--etcd-servers="http://127.0.0.1:$etcd_port" \
		--cert-dir="$work/certs" \
		--bind-address=127.0.0.1 \
		--advertise-address=127.0.0.1 \
		--secure-port="$port" \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$work/sa.pub" \
		--service-account-signing-key-file="$work/sa.key" \
		--service-cluster-ip-range=10.0.0.0/24 \
		--token-auth-file="$work/tokens.csv" \
		--authorization-mode=RBAC \
		--endpoint-reconciler-type=none \
		--disable-admission-plugins=ServiceAccount \
		--profiling=false \
		"${extra[@]}")
	echo "$KUBE_PID" >"$work/kube-apiserver.pid"
}

# write_ca extracts the self-signed CA. With --cert-dir and no serving cert given, the server
# generates a throwaway CA and a serving cert signed by it, and writes both (cert first, CA
# last) to apiserver.crt. Clients must trust that CA, never skip verification.
write_ca() {
	local work=$1 crt=$1/certs/apiserver.crt
	awk '/BEGIN CERTIFICATE/{n++; buf=""} {buf=buf $0 "\n"} /END CERTIFICATE/{last=buf} END{printf "%s", last}' \
		"$crt" >"$work/ca.crt"
	[[ -s $work/ca.crt ]] || die "no certificate found in $crt"
}

write_kubeconfig() {
	local work=$1 url=$2
	(umask 077 && cat >"$work/kubeconfig" <<-EOF
		apiVersion: v1
		kind: Config
		clusters:
		- name: realapi
		  cluster:
		    server: $url
		    certificate-authority: $work/ca.crt
		users:
		- name: realapi-admin
		  user:
		    token: $TOKEN
		contexts:
		- name: realapi
		  context:
		    cluster: realapi
		    user: realapi-admin
		current-context: realapi
	EOF
	)
}

# start_watchdog stops the servers when REALAPI_PARENT_PID exits, so that a test binary that
# is killed (timeout, panic, ^C) cannot leave servers running on the machine.
start_watchdog() {
	local work=$1 parent=${REALAPI_PARENT_PID:-}
	[[ -n $parent ]] || return 0
	setsid bash -c 'while kill -0 "$1" 2>/dev/null && [[ -e "$2/kube-apiserver.pid" ]]; do sleep 1; done
		[[ -e "$2/kube-apiserver.pid" ]] && exec "$3" stop "$2"' watchdog "$parent" "$work" "$SELF" \
		>"$work/watchdog.log" 2>&1 </dev/null &
	echo $! >"$work/watchdog.pid"
}

cmd_start() {
	local work t0 etcd_port peer_port port url
	need curl curl
	need openssl openssl
	need setsid util-linux
	[[ -x $BIN_DIR/etcd && -x $BIN_DIR/kube-apiserver ]] ||
		die "binaries not built in $BIN_DIR; run: $0 build"
	mkdir -p "$1"
	work=$(cd "$1" && pwd)
	[[ ! -e $work/kube-apiserver.pid ]] || die "$work already holds a running cluster; stop it first"
	t0=$(now_ms)
	local deadline=$((t0 + ${REALAPI_READY_TIMEOUT:-120} * 1000))

	etcd_port=$(free_port); peer_port=$(free_port "$etcd_port"); port=$(free_port "$etcd_port" "$peer_port")
	start_etcd "$work" "$etcd_port" "$peer_port"
	write_credentials "$work"
	wait_ready etcd "$ETCD_PID" "$work/etcd.log" "$deadline" "http://127.0.0.1:$etcd_port/health"
	local t_etcd=$(now_ms)

	start_kube_apiserver "$work" "$port" "$etcd_port"
	url="https://127.0.0.1:$port"
	# The server writes apiserver.crt and then apiserver.key: once the key exists the cert is whole.
	until [[ -s $work/certs/apiserver.key ]]; do
		kill -0 "$KUBE_PID" 2>/dev/null || { tail -n 30 "$work/kube-apiserver.log" >&2; die "kube-apiserver exited during startup"; }
		(($(now_ms) < deadline)) || die "kube-apiserver wrote no certificate in time"
		sleep 0.1
	done
	write_ca "$work"
	wait_ready kube-apiserver "$KUBE_PID" "$work/kube-apiserver.log" "$deadline" \
		--cacert "$work/ca.crt" -H "Authorization: Bearer $TOKEN" "$url/readyz"
	local t1=$(now_ms)

	write_kubeconfig "$work" "$url"
	(umask 077 && cat >"$work/env" <<-EOF
		REALAPI_URL=$url
		REALAPI_PORT=$port
		REALAPI_TOKEN=$TOKEN
		REALAPI_CA_FILE=$work/ca.crt
		REALAPI_CERT_DIR=$work/certs
		REALAPI_KUBECONFIG=$work/kubeconfig
		REALAPI_ETCD_URL=http://127.0.0.1:$etcd_port
		REALAPI_ETCD_PID=$ETCD_PID
		REALAPI_KUBE_APISERVER_PID=$KUBE_PID
		REALAPI_WATCH_CACHE=${REALAPI_WATCH_CACHE:-true}
		REALAPI_ETCD_READY_MS=$((t_etcd - t0))
		REALAPI_READY_MS=$((t1 - t0))
	EOF
	)
	start_watchdog "$work"
	log "ready in $(((t1 - t0)))ms (etcd $((t_etcd - t0))ms): $url, kubeconfig $work/kubeconfig"
}

# stop_pid sends SIGTERM, waits up to 30s for a clean exit, then SIGKILLs.
stop_pid() {
	local name=$1 pid=$2 i
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for i in $(seq 1 150); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.2
	done
	log "$name ($pid) ignored SIGTERM for 30s; sending SIGKILL"
	kill -KILL "$pid" 2>/dev/null || true
}

cmd_stop() {
	local work=$1 f
	[[ -d $work ]] || die "no such directory: $work"
	# The API server goes first so that it does not log etcd connection errors while shutting down.
	for f in kube-apiserver etcd; do
		if [[ -s $work/$f.pid ]]; then
			stop_pid "$f" "$(cat "$work/$f.pid")"
			rm -f "$work/$f.pid"
		fi
	done
	if [[ -s $work/watchdog.pid ]]; then
		# When the watchdog itself runs this stop, it must not signal itself.
		f=$(cat "$work/watchdog.pid")
		[[ $f == "$$" ]] || kill "$f" 2>/dev/null || true
		rm -f "$work/watchdog.pid"
	fi
}

# alive reports whether pid is a live process: a killed one may linger as a zombie until its
# parent (init, for our daemons) reaps it, and kill -0 still succeeds on a zombie.
alive() {
	local pid=$1 state
	kill -0 "$pid" 2>/dev/null || return 1
	state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
	[[ $state != Z ]]
}

# cmd_kill_apiserver kills kube-apiserver with SIGKILL, as a crash or an OOM kill would, and
# waits until it is gone. etcd keeps running. The PID file stays, so that stop (and the
# watchdog) still stop the cluster; start-apiserver writes the new PID into it.
cmd_kill_apiserver() {
	local work=$1 pid i
	[[ -s $work/kube-apiserver.pid ]] || die "no kube-apiserver PID in $work"
	pid=$(cat "$work/kube-apiserver.pid")
	kill -KILL "$pid" 2>/dev/null || true
	for i in $(seq 1 150); do
		alive "$pid" || return 0
		sleep 0.2
	done
	die "kube-apiserver ($pid) still alive 30s after SIGKILL"
}

# cmd_start_apiserver starts kube-apiserver again in a cluster whose server was killed: on the
# same port, against the same etcd, with the same certificates (the server reuses the files in
# its cert dir) and token, so clients reconnect to what looks like the same server.
cmd_start_apiserver() {
	local work=$1 port etcd_port url t0
	[[ -s $work/env ]] || die "no env file in $work: start the cluster first"
	if [[ -s $work/kube-apiserver.pid ]] && alive "$(cat "$work/kube-apiserver.pid")"; then
		die "kube-apiserver is still running in $work"
	fi
	port=$(sed -n 's/^REALAPI_PORT=//p' "$work/env")
	etcd_port=$(sed -n 's|^REALAPI_ETCD_URL=http://127.0.0.1:||p' "$work/env")
	TOKEN=$(sed -n 's/^REALAPI_TOKEN=//p' "$work/env")
	REALAPI_WATCH_CACHE=$(sed -n 's/^REALAPI_WATCH_CACHE=//p' "$work/env")
	url="https://127.0.0.1:$port"
	t0=$(now_ms)
	start_kube_apiserver "$work" "$port" "$etcd_port"
	wait_ready kube-apiserver "$KUBE_PID" "$work/kube-apiserver.log" "$((t0 + ${REALAPI_READY_TIMEOUT:-120} * 1000))" \
		--cacert "$work/ca.crt" -H "Authorization: Bearer $TOKEN" "$url/readyz"
	sed -i "s/^REALAPI_KUBE_APISERVER_PID=.*/REALAPI_KUBE_APISERVER_PID=$KUBE_PID/" "$work/env"
	log "kube-apiserver restarted in $(($(now_ms) - t0))ms: $url"
}

cmd_paths() {
	echo "CACHE_DIR=$CACHE_DIR"
	echo "BIN_DIR=$BIN_DIR"
	echo "KUBE_APISERVER=$BIN_DIR/kube-apiserver"
	echo "ETCD=$BIN_DIR/etcd"
}

main() {
	local cmd=${1:-}
	case $cmd in
	build) cmd_build ;;
	start) [[ $# -eq 2 ]] || die "usage: $0 start <workdir>"; cmd_start "$2" ;;
	stop) [[ $# -eq 2 ]] || die "usage: $0 stop <workdir>"; cmd_stop "$2" ;;
	kill-apiserver) [[ $# -eq 2 ]] || die "usage: $0 kill-apiserver <workdir>"; cmd_kill_apiserver "$2" ;;
	start-apiserver) [[ $# -eq 2 ]] || die "usage: $0 start-apiserver <workdir>"; cmd_start_apiserver "$2" ;;
	paths) cmd_paths ;;
	*) die "usage: $0 build | start <workdir> | stop <workdir> | kill-apiserver <workdir> | start-apiserver <workdir> | paths" ;;
	esac
}

main "$@"
