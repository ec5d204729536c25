#!/usr/bin/env bash
# bench/history.sh — agent-history import and search at scale (bench/README.md "Agent history: import
# and search"): bench/histgen writes EVENTS events in EVENTS/15 sessions from the shared corpus, then one
# whole `ctx history import` process (wall, user+sys, peak RSS from /usr/bin/time -v), a refresh with
# nothing new, and bench/histsearch (whole-process `ctx history search`, warm MCP search, rg beside).
#
# usage: bench/history.sh
#   EVENTS=30000                        size (300000 is the issue's full size: ~800 MB of JSONL)
#   CORPUS=../shared/corpus/agent-history
#   CTX=/path/to/ctx                    the binary (default bin/ctx)
#   RUNS=5 MCP_RUNS=20                  search repetitions per query
#   BENCHFMT=1                          also print the figures as lines of the Go benchmark format
#                                       (BenchmarkHistoryImport/events=N/run=first|refresh, and histsearch's
#                                       BenchmarkHistSearch/events=N/...), which bench/summary reads
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EVENTS=${EVENTS:-30000}
CORPUS=${CORPUS:-$ROOT/../shared/corpus/agent-history}
CTX=${CTX:-$ROOT/bin/ctx}
RUNS=${RUNS:-5}
MCP_RUNS=${MCP_RUNS:-20}
[[ -d $CORPUS ]] || CORPUS=/work/shared/corpus/agent-history
[[ -d $CORPUS ]] || { echo "history.sh: no corpus (set CORPUS)" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ctx-histbench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

cd "$ROOT"
go run ./bench/histgen -corpus "$CORPUS" -out "$TMP/history" -sessions $((EVENTS / 15)) -events "$EVENTS" | sed -n 1p
H=$TMP/history
ENVS=(HOME="$H/home" XDG_DATA_HOME="$H/home" CLAUDE_CONFIG_DIR="$H/claude-code" CODEX_HOME="$H/codex"
	GEMINI_CLI_HOME="$H/gemini-cli" CURSOR_DATA_DIR="$H/cursor" COPILOT_HOME="$H/copilot-cli")
mkdir "$TMP/repo"
git -C "$TMP/repo" init -q
GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.com GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.com \
	git -C "$TMP/repo" commit -q --allow-empty -m init
BYTES=$(du -sb "$H" | cut -f1)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
BENCHLINES=()
for what in "first import" "refresh, nothing new"; do
	(cd "$TMP/repo" && env "${ENVS[@]}" /usr/bin/time -f "%e %U %S %M" -o "$TMP/time" "$CTX" history import --quiet >/dev/null)
	read -r wall user sys rss <"$TMP/time"
	awk -v w="$what" -v wall="$wall" -v u="$user" -v s="$sys" -v rss="$rss" -v b="$BYTES" 'BEGIN {
		cpu = u + s; printf "%-22s wall %6.2f s  cpu (user+sys) %6.2f s  %5.1f MB/s of cpu  peak RSS %d MB\n", w, wall, cpu, (cpu > 0 ? b / 1e6 / cpu : 0), rss / 1024 }'
	run=first
	[[ $what == "first import" ]] || run=refresh
	BENCHLINES+=("$(awk -v run="$run" -v e="$EVENTS" -v wall="$wall" -v u="$user" -v s="$sys" -v rss="$rss" -v b="$BYTES" 'BEGIN {
		cpu = u + s; printf "BenchmarkHistoryImport/events=%d/run=%s 1 %g wall-s %g cpu-s %g MB/cpu-s %g peak-rss-MB %d jsonl-B\n", e, run, wall, cpu, (cpu > 0 ? b / 1e6 / cpu : 0), rss / 1024, b }')")
done
echo "index: $(du -sh "$TMP/repo/.git/ctx/history" | cut -f1)"
BENCHFLAG=()
[[ ${BENCHFMT:-0} == 0 ]] || BENCHFLAG=(-benchfmt "events=$EVENTS")
go run ./bench/histsearch -ctx "$CTX" -repo "$TMP/repo" -history "$H" -runs "$RUNS" -mcp-runs "$MCP_RUNS" "${BENCHFLAG[@]}"
[[ ${BENCHFMT:-0} == 0 ]] || printf '%s\n' "${BENCHLINES[@]}"
