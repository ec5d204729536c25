#!/usr/bin/env bash
# bench/search-server.sh — `ctx search` through the warm search server against the one-shot path
# (bench/README.md "Eleventh round", branch search11; docs/architecture.md "The search server"): first
# that NEW through its server prints the same bytes and exit codes as OLD for bench/search-ab.sh's
# matrix, then whole `ctx -C REPO history search --json Q` processes, OLD alternated with NEW query by
# query, in two blocks: NEW with its server running, then NEW with no server (its one-shot path). Wall
# from the shell's clock, the client's CPU (task-clock: user + sys) from `perf stat`, and for the
# server block the server's CPU for the request (the sum of its threads' run time in
# /proc/PID/task/*/schedstat, before and after); p50 and p99 of each.
#
# usage: bench/search-server.sh OLD_CTX NEW_CTX REPO [ROUNDS]
#   OLD_CTX, NEW_CTX   the `ctx` of each build (front, ctx-full and ctx-search beside it)
#   REPO               a repository whose index `ctx history import` built (bench/history.sh's setup)
#   ROUNDS             timing rounds of the 12 queries per block (default 10); 0 checks the output only
#   CHECK=0            time only, without the output check
set -euo pipefail
OLD=$1 NEW=$2 REPO=$3 ROUNDS=${4:-10}
# shellcheck source=bench/search-matrix.sh
source "$(dirname "$0")/search-matrix.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ctx-searchserver.XXXXXX")
HIST=$(git -C "$REPO" rev-parse --path-format=absolute --git-common-dir)/ctx/history
stop() { "$NEW" -C "$REPO" history server stop >/dev/null 2>&1 || true; }
trap 'stop; rm -rf "$TMP"' EXIT
stop
"$NEW" -C "$REPO" history server start --idle 1h
PID=$(cat "$HIST/search.lock")
"$NEW" -C "$REPO" search --json zzznomatch >/dev/null # the server's first search

if [[ ${CHECK:-1} != 0 ]]; then
	check_same "${QUERIES[@]}" >"$TMP/check" && ok=1 || ok=0
	sed '$d' "$TMP/check"
	read -r same differ < <(tail -n 1 "$TMP/check")
	echo "output through the server: $same command lines print the same bytes as OLD, $differ differ"
	[[ $ok == 1 ]] || exit 1
fi
[[ $ROUNDS -gt 0 ]] || exit 0

srvns() { cat /proc/"$PID"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}'; }
run() { # bin query... → "cpu_ms"
	perf stat -x, -e task-clock -o "$TMP/stat" -- "$1" -C "$REPO" history search --json "${@:2}" >/dev/null 2>&1 || true
	awk -F, '/task-clock/ {printf "%.3f\n", $1}' "$TMP/stat"
}
block() { # name → appends "wall_ms cpu_ms server_ms query" to $TMP/<name>.{old,new}
	local name=$1
	: >"$TMP/$name.old"
	: >"$TMP/$name.new"
	for ((r = 0; r < ROUNDS; r++)); do
		for q in "${QUERIES[@]}"; do
			for side in old new; do
				bin=$OLD
				[[ $side == new ]] && bin=$NEW
				s0=$(srvns)
				t0=$(date +%s%N)
				# shellcheck disable=SC2086
				cpu=$(run "$bin" $q)
				t1=$(date +%s%N)
				s1=$(srvns)
				srv=0
				[[ $side == new && $name == server ]] && srv=$(((s1 - s0) / 1000))e-3
				echo "$(((t1 - t0) / 1000))e-3 $cpu $srv $q" >>"$TMP/$name.$side"
			done
		done
	done
}
pct() { sort -g | awk -v p="$1" '{a[NR] = $1} END {i = int((NR - 1) * p + 0.5) + 1; printf "%.1f", a[i]}'; }
report() {
	local name=$1
	echo "== $name (load average at end: $(cut -d' ' -f1-3 /proc/loadavg))"
	for col in 1:wall 2:cpu 3:server-cpu; do
		c=${col%%:*} what=${col#*:}
		[[ $what == server-cpu && $name != server ]] && continue
		o50=$(awk -v c="$c" '{print $c}' "$TMP/$name.old" | pct 0.5) n50=$(awk -v c="$c" '{print $c}' "$TMP/$name.new" | pct 0.5)
		o99=$(awk -v c="$c" '{print $c}' "$TMP/$name.old" | pct 0.99) n99=$(awk -v c="$c" '{print $c}' "$TMP/$name.new" | pct 0.99)
		printf "%-10s p50 old %7.1f new %7.1f   p99 old %7.1f new %7.1f\n" "$what" "$o50" "$n50" "$o99" "$n99"
	done
	tot=$(awk '{print $2 + $3}' "$TMP/$name.new" | pct 0.5)
	tot99=$(awk '{print $2 + $3}' "$TMP/$name.new" | pct 0.99)
	echo "new client + server CPU p50 $tot p99 $tot99"
	echo "per query, wall p50 old → new (ms):"
	for q in "${QUERIES[@]}"; do
		o=$(awk -v q="$q" '{w = $4; for (i = 5; i <= NF; i++) w = w " " $i} w == q {print $1}' "$TMP/$name.old" | pct 0.5)
		n=$(awk -v q="$q" '{w = $4; for (i = 5; i <= NF; i++) w = w " " $i} w == q {print $1}' "$TMP/$name.new" | pct 0.5)
		printf "  %-16s %7.1f → %7.1f\n" "$q" "$o" "$n"
	done
}
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
block server
report server
stop
block oneshot
report oneshot
