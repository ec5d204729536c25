#!/usr/bin/env bash
# bench/auto-ab.sh — what the search server's automatic start (ctx history server enable) adds to a search
# that finds no server (bench/README.md "Twelfth round", branch auto12). Sides, alternated ROUNDS times
# (the order switched every round), each `perf stat -r RUNS` of `CTX -C REPO search --json README`
# (the front, then ctx-search one-shot; task-clock = user + sys of the whole process):
#   off       no marker (search.auto absent): the front's one failed lstat
#   marker    search.auto present, CTX_SEARCH_SERVER_AUTO=0: the lstat finds the marker, nothing starts
#   starting  search.auto present and a fresh start stamp (search.starting: another search is starting
#             the server): the lstat, the folder's lstat, the stamp's O_EXCL open and its lstat
# then the system calls of one search of each side on the server's files (search.*, the history folder)
# and their count in all (strace -f, the one-shot ctx-search included; the Go runtime's vary by run).
# No server runs during the runs; the script leaves the marker as it found it.
#
# usage: bench/auto-ab.sh CTX REPO [ROUNDS] [RUNS]
set -euo pipefail
CTX=$1 REPO=$2 ROUNDS=${3:-3} RUNS=${4:-20}
HIST=$(git -C "$REPO" rev-parse --path-format=absolute --git-common-dir)/ctx/history
had=0
[[ -e $HIST/search.auto ]] && had=1
restore() {
	rm -f "$HIST/search.starting"
	"$CTX" -C "$REPO" history server stop >/dev/null 2>&1 || true
	if ((had)); then : >"$HIST/search.auto"; else rm -f "$HIST/search.auto"; fi
}
trap restore EXIT
"$CTX" -C "$REPO" history server stop >/dev/null 2>&1 || true
side() { # name → "name ms"
	local env=()
	case $1 in
	off) rm -f "$HIST/search.auto" "$HIST/search.starting" ;;
	marker) : >"$HIST/search.auto" && chmod 600 "$HIST/search.auto" && rm -f "$HIST/search.starting" && env=(CTX_SEARCH_SERVER_AUTO=0) ;;
	starting) : >"$HIST/search.auto" && chmod 600 "$HIST/search.auto" && : >"$HIST/search.starting" ;;
	esac
	env "${env[@]}" perf stat -x, -r "$RUNS" -e task-clock -- "$CTX" -C "$REPO" search --json README 2>&1 >/dev/null |
		awk -F, -v n="$1" '/task-clock/ {printf "%-9s %.3f ms\n", n, $1}'
	if [[ -e $HIST/search.sock ]]; then echo "a server started during side $1" >&2 && exit 1; fi
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
OUT=$(mktemp)
for ((r = 0; r < ROUNDS; r++)); do
	if ((r % 2)); then order=(starting marker off); else order=(off marker starting); fi
	for s in "${order[@]}"; do side "$s" | tee -a "$OUT"; done
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for s in off marker starting; do # the median of the rounds' means, and their range
	awk -v n="$s" '$1 == n {print $2}' "$OUT" | sort -n | awk -v n="$s" '{v[NR] = $1} END {if (NR) printf "%-9s median %.2f ms (%.2f to %.2f) over %d rounds\n", n, (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR], NR}'
done
rm -f "$OUT"
for s in off marker starting; do
	case $s in
	off) rm -f "$HIST/search.auto" "$HIST/search.starting"; env=() ;;
	marker) : >"$HIST/search.auto"; env=(CTX_SEARCH_SERVER_AUTO=0) ;;
	starting) : >"$HIST/search.starting"; env=() ;;
	esac
	env "${env[@]}" strace -f -o "$HIST/../auto-ab.strace" "$CTX" -C "$REPO" search --json README >/dev/null 2>&1
	echo "$s: $(wc -l <"$HIST/../auto-ab.strace") system calls; on the server's files:"
	grep -E 'search\.(sock|auto|starting|lock|log)|history", ' "$HIST/../auto-ab.strace" | sed 's/^[0-9]* */    /'
	rm -f "$HIST/../auto-ab.strace"
done
