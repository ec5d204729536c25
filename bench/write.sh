#!/usr/bin/env bash
# bench/write.sh — time `ctx knowledge set kI "text I"` against the same write done with C git plumbing,
# on stores pre-filled with 100 and 10,000 knowledge entries. See bench/README.md.
#
# usage: bench/write.sh [N]            N writes per store (default 200; env N works too)
#   SIZES="100 10000"                  store sizes (entries under knowledge/) to measure
#   CGIT_MODE=index|mktree             how the C git side builds the tree (default: index, the faster)
#   CTX=/path/to/ctx                   use this binary instead of building one
#   BENCHFMT=1                         also print each size's figures as a line of the Go benchmark format
#                                      (BenchmarkWriteSh/entries=S/mode=M N ctx-ms/write git-ms/write), for bench/summary
set -euo pipefail

N=${1:-${N:-200}}
SIZES=${SIZES:-"100 10000"}
CGIT_MODE=${CGIT_MODE:-index}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ctx-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# Keep go's caches where they are before HOME moves (go derives them from HOME).
if [[ -z "${CTX:-}" ]]; then
	export GOPATH GOMODCACHE GOCACHE
	GOPATH=$(go env GOPATH) GOMODCACHE=$(go env GOMODCACHE) GOCACHE=$(go env GOCACHE)
fi

# A hermetic git: no user or system config, a fixed identity.
export HOME="$TMP/home" XDG_CONFIG_HOME="$TMP/home/.config" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME="Bench" GIT_AUTHOR_EMAIL="bench@example.com"
export GIT_COMMITTER_NAME="Bench" GIT_COMMITTER_EMAIL="bench@example.com"
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE CTX_AGENT CTX_SESSION || true
mkdir -p "$HOME"

if [[ -z "${CTX:-}" ]]; then
	CTX="$TMP/bin/ctx"
	(cd "$ROOT" && go build -o "$CTX" ./cmd/ctx)
fi

now_ns() { date +%s%N; }

# entry KEY TEXT: the bytes of a knowledge entry as ctx writes them (front matter + body).
entry() {
	printf -- '---\nauthor: Bench <bench@example.com>\nagent: cli\nupdated_at: "2026-01-01T00:00:00Z"\nprovenance: owner_instruction\nscope: public\n---\n%s' "$2"
}

# prefill DIR SIZE: a repository with an initialised ctx store holding SIZE entries knowledge/k0..k<SIZE-1>.
# The store is made by `ctx init --no-hooks` (manifest.json), then the entries are added in one commit
# with C git plumbing through a temporary index, and one untimed ctx write refreshes ctx's checked-out tree.
prefill() {
	local dir=$1 size=$2 fill="$TMP/fill-$size" idx="$TMP/fill-$size.index"
	git init -q -b main "$dir"
	git -C "$dir" commit -q --allow-empty -m "initial commit"
	(cd "$dir" && "$CTX" init --no-hooks >/dev/null)
	mkdir -p "$fill/knowledge"
	for ((i = 0; i < size; i++)); do entry "k$i" "entry $i" >"$fill/knowledge/k$i.md"; done
	local tip tree commit
	tip=$(git -C "$dir" rev-parse refs/heads/ctx)
	GIT_INDEX_FILE="$idx" git -C "$dir" read-tree "$tip"
	GIT_INDEX_FILE="$idx" git -C "$dir" --work-tree="$fill" add knowledge
	tree=$(GIT_INDEX_FILE="$idx" git -C "$dir" write-tree)
	commit=$(git -C "$dir" commit-tree -p "$tip" -m "prefill $size entries" "$tree")
	git -C "$dir" update-ref refs/heads/ctx "$commit" "$tip"
	rm -rf "$fill" "$idx"
	(cd "$dir" && "$CTX" knowledge set warmup "warm up" >/dev/null)
	git -C "$dir" gc -q
}

# ctx_writes DIR: N ctx writes; prints the elapsed nanoseconds.
ctx_writes() {
	local dir=$1 t0 t1
	cd "$dir"
	t0=$(now_ns)
	for ((i = 0; i < N; i++)); do
		"$CTX" knowledge set "k$i" "text $i" >/dev/null
	done
	t1=$(now_ns)
	cd - >/dev/null
	echo $((t1 - t0))
}

# cgit_writes DIR: the same N writes with C git plumbing. Per write: read the tip, write the blob, build
# the tree reusing every unchanged subtree, write the commit (same message shape as ctx's), and move the
# ref with compare-and-swap (update-ref NEW OLD). Tree building:
#   index:  a temporary index (GIT_INDEX_FILE) loaded from the tip with read-tree, one update-index
#           --cacheinfo, write-tree (the index's cache-tree rewrites only knowledge/ and the root).
#   mktree: ls-tree of the knowledge subtree with the entry replaced | mktree, then the same for the root.
# Both start from the ref tip on every write, as ctx does; neither touches HEAD, the index or the work tree.
cgit_writes() {
	local dir=$1 idx="$TMP/cgit.index" t0 t1 tip blob tree ktree commit msg
	cd "$dir"
	t0=$(now_ns)
	for ((i = 0; i < N; i++)); do
		tip=$(git rev-parse refs/heads/ctx)
		blob=$(entry "k$i" "text $i" | git hash-object -w --stdin)
		if [[ $CGIT_MODE == index ]]; then
			GIT_INDEX_FILE="$idx" git read-tree "$tip"
			GIT_INDEX_FILE="$idx" git update-index --add --cacheinfo "100644,$blob,knowledge/k$i.md"
			tree=$(GIT_INDEX_FILE="$idx" git write-tree)
		else
			ktree=$({ git ls-tree "$tip:knowledge" | grep -v -F -x -e "$(git ls-tree "$tip:knowledge" "k$i.md")" || true
				printf '100644 blob %s\tk%s.md\n' "$blob" "$i"; } | git mktree)
			tree=$({ git ls-tree "$tip" | grep -v -P '\tknowledge$' || true
				printf '040000 tree %s\tknowledge\n' "$ktree"; } | git mktree)
		fi
		msg=$(printf 'ctx: set knowledge k%s\n\nCtx-Op: knowledge.set\nCtx-Key: k%s\nCtx-Agent: cli\n' "$i" "$i")
		commit=$(git commit-tree -p "$tip" -m "$msg" "$tree")
		git update-ref -m "ctx: set knowledge k$i" refs/heads/ctx "$commit" "$tip"
	done
	t1=$(now_ns)
	rm -f "$idx"
	cd - >/dev/null
	echo $((t1 - t0))
}

# check DIR: the N writes landed (N commits on top of the prefill, every entry kI present with "text I").
check() {
	local dir=$1 size=$2 n
	n=$(git -C "$dir" rev-list --count refs/heads/ctx)
	# init + prefill + warm-up + N writes
	if [[ $n -ne $((N + 3)) ]]; then
		echo "check failed in $dir: $n commits, want $((N + 3))" >&2
		exit 1
	fi
	git -C "$dir" show "refs/heads/ctx:knowledge/k$((N - 1)).md" | grep -q "text $((N - 1))" || {
		echo "check failed in $dir: knowledge/k$((N - 1)).md lacks its text" >&2
		exit 1
	}
	local want=$((size > N ? size : N))
	n=$(git -C "$dir" ls-tree "refs/heads/ctx:knowledge" | wc -l)
	if [[ $n -ne $((want + 1)) ]]; then # + warmup
		echo "check failed in $dir: $n entries, want $((want + 1))" >&2
		exit 1
	fi
	git -C "$dir" fsck --strict --no-dangling --no-progress
}

echo "ctx write benchmark: $N writes per store; C git tree mode: $CGIT_MODE"
echo "machine: $(nproc) CPUs; $(go version | cut -d' ' -f3-4); $(git --version)"
BENCHLINES=()
printf '%-9s %14s %14s %10s\n' entries "ctx ms/write" "git ms/write" "ctx/git"
for size in $SIZES; do
	base="$TMP/store-$size"
	prefill "$base" "$size"
	cp -a "$base" "$base-ctx"
	cp -a "$base" "$base-git"
	ctx_ns=$(ctx_writes "$base-ctx")
	git_ns=$(cgit_writes "$base-git")
	check "$base-ctx" "$size"
	check "$base-git" "$size"
	awk -v s="$size" -v c="$ctx_ns" -v g="$git_ns" -v n="$N" \
		'BEGIN { printf "%-9s %14.2f %14.2f %10.2f\n", s, c / n / 1e6, g / n / 1e6, c / g }'
	[[ ${BENCHFMT:-0} == 0 ]] || BENCHLINES+=("$(awk -v s="$size" -v c="$ctx_ns" -v g="$git_ns" -v n="$N" \
		'BEGIN { printf "BenchmarkWriteSh/entries=%d/mode=%s %d %g ctx-ms/write %g git-ms/write\n", s, "'"$CGIT_MODE"'", n, c / n / 1e6, g / n / 1e6 }')")
	rm -rf "$base" "$base-ctx" "$base-git"
done
[[ ${BENCHFMT:-0} == 0 ]] || printf '%s\n' "${BENCHLINES[@]}"
