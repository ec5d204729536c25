#!/usr/bin/env bash
# bench/search-ab.sh — `ctx history search` of two ctx builds over one repository's history index
# and, when the repository has a context branch, its store (bench/README.md "Eighth round", branch
# search8; "Ninth round", branch search9): first that both print the same bytes and exit codes for
# bench/histsearch's queries under each flag set (text and --json, --limit, --scope, --provider,
# --primary-only, shapes ctx-search leaves to ctx-full), then whole processes alternated old/new query
# by query: wall and CPU (task-clock, user + sys) and page faults from `perf stat`, p50 and p99 of each,
# and their ratio.
#
# usage: bench/search-ab.sh OLD_CTX NEW_CTX REPO [ROUNDS]
#   OLD_CTX, NEW_CTX   the `ctx` of each build (the front, with ctx-full, and for NEW ctx-search, beside it)
#   REPO               a repository whose index `ctx history import` built (bench/history.sh's setup)
#   ROUNDS             timing rounds of the 12 queries (default 10); 0 checks the output only
#   CHECK=0            time only, without the output check
#   EXTRA="q1|q2"      more queries ('|'-separated), e.g. words of the context store's entries
set -euo pipefail
OLD=$1 NEW=$2 REPO=$3 ROUNDS=${4:-10}
# shellcheck source=bench/search-matrix.sh
source "$(dirname "$0")/search-matrix.sh"
if [[ -n ${EXTRA:-} ]]; then
	IFS='|' read -r -a more <<<"$EXTRA"
	QUERIES+=("${more[@]}")
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ctx-searchab.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

if [[ ${CHECK:-1} != 0 ]]; then
	check_same "${QUERIES[@]}" >"$TMP/check" && ok=1 || ok=0
	sed '$d' "$TMP/check"
	read -r same differ < <(tail -n 1 "$TMP/check")
	echo "output: $same command lines print the same bytes, $differ differ"
	[[ $ok == 1 ]] || exit 1
fi
[[ $ROUNDS -gt 0 ]] || exit 0

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # bin query... → "wall_ms cpu_ms faults"
	perf stat -x, -e task-clock,page-faults -o "$TMP/stat" -- "$1" -C "$REPO" history search --json "${@:2}" >/dev/null 2>&1 || true
	awk -F, '/task-clock/ {cpu = $1} /page-faults/ {pf = $1} END {printf "%.3f %d\n", cpu, pf}' "$TMP/stat"
}
: >"$TMP/old.t"
: >"$TMP/new.t"
for ((r = 0; r < ROUNDS; r++)); do
	for q in "${QUERIES[@]}"; do
		for side in old new; do
			bin=$OLD
			[[ $side == new ]] && bin=$NEW
			# shellcheck disable=SC2086
			t0=$(date +%s%N)
			read -r cpu pf < <(run "$bin" $q)
			t1=$(date +%s%N)
			echo "$(((t1 - t0) / 1000))e-3 $cpu $pf $q" >>"$TMP/$side.t"
		done
	done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
pct() { sort -g | awk -v p="$1" '{a[NR] = $1} END {i = int((NR - 1) * p + 0.5) + 1; printf "%.1f", a[i]}'; }
for col in 1:wall 2:cpu 3:faults; do
	c=${col%%:*} name=${col#*:}
	o50=$(awk -v c="$c" '{print $c}' "$TMP/old.t" | pct 0.5) n50=$(awk -v c="$c" '{print $c}' "$TMP/new.t" | pct 0.5)
	o99=$(awk -v c="$c" '{print $c}' "$TMP/old.t" | pct 0.99) n99=$(awk -v c="$c" '{print $c}' "$TMP/new.t" | pct 0.99)
	awk -v n="$name" -v o50="$o50" -v n50="$n50" -v o99="$o99" -v n99="$n99" 'BEGIN {
		printf "%-7s p50 old %7.1f new %7.1f (%.2f)   p99 old %7.1f new %7.1f (%.2f)\n", n, o50, n50, n50 / o50, o99, n99, n99 / o99 }'
done
echo "per query, CPU p50 (ms) old → new:"
for q in "${QUERIES[@]}"; do
	o=$(awk -v q="$q" '{w = $4; for (i = 5; i <= NF; i++) w = w " " $i} w == q {print $2}' "$TMP/old.t" | pct 0.5)
	n=$(awk -v q="$q" '{w = $4; for (i = 5; i <= NF; i++) w = w " " $i} w == q {print $2}' "$TMP/new.t" | pct 0.5)
	printf "  %-16s %6.1f → %6.1f\n" "$q" "$o" "$n"
done
