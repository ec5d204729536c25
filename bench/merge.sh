#!/usr/bin/env bash
# bench/merge.sh — ctx's merge commit against C git's `git merge` of the same two histories, in one run:
# two sides that each changed 1,000 entries of a 10,000-entry store (500 entries changed on both sides, in
# different lines). Runs BenchmarkMergeVsGit of store/merge_bench_test.go and prints both ns/op and the
# ratio ctx/git; "same_tree" says whether both merges produced the same tree.
#
# usage: bench/merge.sh [N]     N iterations of each side (default 5; env N works too)
set -euo pipefail
N=${1:-${N:-5}}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
out=$(GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null go test ./store -run '^$' -bench '^BenchmarkMergeVsGit$' -benchtime "${N}x" -count=1 2>&1)
echo "$out" | grep -E '^(Benchmark|MERGE-RATIO|ok|FAIL|---)' || { echo "$out"; exit 1; }
