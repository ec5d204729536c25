#!/usr/bin/env bash
# bench/server-ab.sh — the search server's CPU per search, OLD's server against NEW's (bench/README.md
# "Twelfth round", branch search12). Blocks alternate OLD and NEW (the order switched every round); each
# block starts the build's server with its answers' cache off (CTX_SEARCH_SERVER_CACHE=0), runs WARMUP
# searches not measured, then every query twice through the build's front: the first ("first": the
# server has not seen the query's words, so FTS5 counts their documents) and again ("again": the
# phrases' counts kept by the index). Per search: the front's CPU (task-clock from `perf stat`, user +
# sys) and the server's (its threads' run time from /proc/PID/task/*/schedstat, before and after).
#
# usage: bench/server-ab.sh OLD_CTX NEW_CTX REPO [ROUNDS]   (QUERIES="w1 w2 ..." to change the queries)
set -euo pipefail
OLD=$1 NEW=$2 REPO=$3 ROUNDS=${4:-4}
# shellcheck disable=SC2206 # QUERIES is a list of words
QUERIES=(${QUERIES:-README the session error test todo onboarding zzznomatch})
WARMUP=(hello function)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ctx-serverab.XXXXXX")
HIST=$(git -C "$REPO" rev-parse --path-format=absolute --git-common-dir)/ctx/history
stop() { "$1" -C "$REPO" history server stop >/dev/null 2>&1 || true; }
trap 'stop "$NEW"; stop "$OLD"; rm -rf "$TMP"' EXIT
srvns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}'; }
one() { # bin pid name query... → appends "client_ms server_ms" to $TMP/<name>
	local bin=$1 pid=$2 name=$3
	shift 3
	local s0 s1
	s0=$(srvns "$pid")
	perf stat -x, -e task-clock -o "$TMP/stat" -- "$bin" -C "$REPO" history search --json "$@" >/dev/null 2>&1 || true
	s1=$(srvns "$pid")
	echo "$(awk -F, '/task-clock/ {printf "%.3f", $1}' "$TMP/stat") $(((s1 - s0) / 1000))e-3 $*" >>"$TMP/$name"
}
block() { # side
	local side=$1 bin=$OLD
	[[ $side == new ]] && bin=$NEW
	stop "$OLD"
	stop "$NEW"
	CTX_SEARCH_SERVER_CACHE=0 "$bin" -C "$REPO" history server start --idle 1h >/dev/null
	local pid
	pid=$(cat "$HIST/search.lock")
	for q in "${WARMUP[@]}"; do "$bin" -C "$REPO" history search --json "$q" >/dev/null; done
	for q in "${QUERIES[@]}"; do
		# shellcheck disable=SC2086
		one "$bin" "$pid" "$side.first" $q
		# shellcheck disable=SC2086
		one "$bin" "$pid" "$side.again" $q
	done
	stop "$bin"
}
pct() { sort -g | awk -v p="$1" '{a[NR] = $1} END {i = int((NR - 1) * p + 0.5) + 1; printf "%.1f", a[i]}'; }
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < ROUNDS; r++)); do
	if ((r % 2 == 0)); then block old; block new; else block new; block old; fi
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); ${#QUERIES[@]} queries x $ROUNDS rounds per row"
for kind in first again; do
	for side in old new; do
		f=$TMP/$side.$kind
		printf "%-3s %-5s client CPU p50 %5.1f p99 %5.1f | server CPU p50 %5.1f p99 %5.1f | sum p50 %5.1f p99 %5.1f ms\n" "$side" "$kind" \
			"$(awk '{print $1}' "$f" | pct 0.5)" "$(awk '{print $1}' "$f" | pct 0.99)" \
			"$(awk '{print $2}' "$f" | pct 0.5)" "$(awk '{print $2}' "$f" | pct 0.99)" \
			"$(awk '{print $1 + $2}' "$f" | pct 0.5)" "$(awk '{print $1 + $2}' "$f" | pct 0.99)"
	done
done
echo "server CPU p50 per query, first (old → new) ms:"
for q in "${QUERIES[@]}"; do
	printf "  %-12s %6.1f → %6.1f\n" "$q" "$(awk -v q="$q" '$3 == q {print $2}' "$TMP/old.first" | pct 0.5)" "$(awk -v q="$q" '$3 == q {print $2}' "$TMP/new.first" | pct 0.5)"
done
