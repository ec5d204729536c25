#!/usr/bin/env bash
# bench/sync-stress.sh — many teammates syncing at once (bench/README.md "Many teammates").
#
# N clones of one remote served by a real `git daemon` on 127.0.0.1 each make W context writes (untimed),
# then all N run `ctx sync` at the same moment. Measured: how many syncs failed (exit status other than 0),
# the wall time until every sync has finished (converge), the total CPU time of the syncs, whether the
# remote holds all N×W entries on its context branch and machine refs together (0 lost; docs/sync.md "One
# ref per machine"), and how many the shared branch holds right after the storm and after one more sync of
# one clone. The same N syncs run one after another on a copy of the same clones give the serial figure;
# the goal is converge ≤ 2× serial with 0 failed syncs.
#
# It is a stress run, not a test: it is not part of `make test`. Run it once; it loads the machine.
#
# usage: bench/sync-stress.sh [N...]        clone counts (default: 10 20 40)
#        W=10 CTX=bin/ctx bench/sync-stress.sh 40
#        SERIAL=0 bench/sync-stress.sh 40      skip the serial run (it does not depend on the retry policy)
#        BENCHFMT=1 bench/sync-stress.sh       also print each line of the table in the Go benchmark format
#          (BenchmarkSyncStress/clones=N/writes=W/mode=M 1 failed wall-s cpu-s retries entries missing shared),
#          at the end, for bench/summary
set -euo pipefail
COUNTS=("$@")
[ ${#COUNTS[@]} -gt 0 ] || COUNTS=(10 20 40)
W=${W:-10}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/ctx-sync-stress.XXXXXX")
DAEMON=
cleanup() {
	if [ -n "$DAEMON" ]; then kill "$DAEMON" 2>/dev/null || true; wait "$DAEMON" 2>/dev/null || true; fi
	rm -rf "$T"
}
trap cleanup EXIT

if [ -z "${CTX:-}" ]; then
	(cd "$ROOT" && go build -o "$T/bin/ctx" ./cmd/ctx)
	CTX=$T/bin/ctx
else
	CTX=$(cd "$(dirname "$CTX")" && pwd)/$(basename "$CTX")
fi

# Hermetic git: no user or system configuration, a fixed identity.
export HOME=$T/home XDG_CONFIG_HOME=$T/home/.config GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=Stress GIT_AUTHOR_EMAIL=stress@example.com GIT_COMMITTER_NAME=Stress GIT_COMMITTER_EMAIL=stress@example.com
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE CTX_AGENT CTX_SESSION
mkdir -p "$HOME" "$T/srv"

PORT=$((20000 + RANDOM % 20000))
git daemon --reuseaddr --base-path="$T/srv" --export-all --enable=receive-pack --listen=127.0.0.1 --port=$PORT \
	--max-connections=0 "$T/srv" 2>"$T/daemon.log" &
DAEMON=$!
for _ in $(seq 50); do
	git ls-remote "git://127.0.0.1:$PORT/none" >/dev/null 2>&1 && break
	grep -q "Ready to rumble\|not exported\|No such" "$T/daemon.log" 2>/dev/null && break
	sleep 0.1
done

BENCHLINES=() # BENCHFMT's lines, printed at the end
cpu() { awk '{print $14+$15+$16+$17}' /proc/$$/stat; } # utime+stime+cutime+cstime of this shell, in ticks
HZ=$(getconf CLK_TCK)

echo "machine: $(nproc) CPUs, $(uname -sm), $(git --version), ctx $CTX"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-7s %-9s %8s %9s %9s %8s %7s %8s %7s\n' clones mode failed "wall s" "cpu s" retries entries missing shared

# setup N: a remote with the context branch and N clones, each with W writes not yet pushed.
setup() {
	local n=$1 dir=$T/run$1
	mkdir -p "$dir"
	git init -q --bare -b main "$T/srv/r$n.git"
	git clone -q "git://127.0.0.1:$PORT/r$n.git" "$dir/seed" 2>/dev/null
	(cd "$dir/seed" && git commit -q --allow-empty -m init && git push -q origin main &&
		"$CTX" init --no-hooks >/dev/null && "$CTX" push >/dev/null)
	for i in $(seq "$n"); do
		git clone -q "git://127.0.0.1:$PORT/r$n.git" "$dir/c$i"
		(cd "$dir/c$i" && git config user.email "c$i@example.com" && "$CTX" pull >/dev/null &&
			for w in $(seq "$W"); do "$CTX" knowledge set "c$i-w$w" "clone $i write $w" >/dev/null; done)
	done
}

# entries REMOTE REF...: the distinct clone writes (knowledge/c<i>-w<j>.md) on the remote's refs REF...
entries() {
	local remote=$1 ref
	shift
	for ref in "$@"; do git --git-dir="$remote" ls-tree --name-only "$ref" knowledge/ 2>/dev/null; done | grep '/c[0-9]*-w' | sort -u | wc -l
}

# report N MODE DIR REMOTE WALL CPU: failed syncs, retries (pulls after the first), entries on the remote
# (on the shared branch and the machine refs together; missing: writes a failed sync left unpushed in its
# clone), and entries on the shared branch alone (it catches up with the machine refs at the next sync).
report() {
	local n=$1 mode=$2 dir=$3 remote=$4 failed=0 retries=0 all shared pulls
	for i in $(seq "$n"); do
		[ "$(cat "$dir/c$i.rc")" = 0 ] || failed=$((failed + 1))
		pulls=$(grep -c "^pull origin: [^r]" "$dir/c$i.out" || true)
		retries=$((retries + (pulls > 0 ? pulls - 1 : 0)))
	done
	# shellcheck disable=SC2046
	all=$(entries "$remote" refs/heads/ctx $(git --git-dir="$remote" for-each-ref --format='%(refname)' refs/ctx/machines/))
	shared=$(entries "$remote" refs/heads/ctx)
	printf '%-7s %-9s %8s %9s %9s %8s %7s %8s %7s\n' "$n" "$mode" "$failed" "$5" "$6" "$retries" "$all" $((n * W - all)) "$shared"
	BENCHLINES+=("BenchmarkSyncStress/clones=$n/writes=$W/mode=$mode 1 $failed failed $5 wall-s $6 cpu-s $retries retries $all entries $((n * W - all)) missing $shared shared")
}

# syncs N DIR MODE: runs `ctx sync` in each clone of DIR, one after another (serial) or all at once.
syncs() {
	local n=$1 dir=$2 mode=$3 c0 c1 t0 t1 pids=()
	c0=$(cpu)
	t0=$(date +%s.%N)
	for i in $(seq "$n"); do
		if [ "$mode" = serial ]; then
			(cd "$dir/c$i" || exit; rc=0; "$CTX" sync >"$dir/c$i.out" 2>&1 || rc=$?; echo $rc >"$dir/c$i.rc")
		else
			(cd "$dir/c$i" || exit; rc=0; "$CTX" sync >"$dir/c$i.out" 2>&1 || rc=$?; echo $rc >"$dir/c$i.rc") &
			pids+=($!)
		fi
	done
	[ ${#pids[@]} = 0 ] || wait "${pids[@]}" # not the daemon
	t1=$(date +%s.%N)
	c1=$(cpu)
	WALL=$(echo "$t1 - $t0" | bc | xargs printf "%.1f")
	CPUS=$(echo "($c1 - $c0) / $HZ" | bc -l | xargs printf '%.1f')
}

for n in "${COUNTS[@]}"; do
	setup "$n"
	# The serial run works on a copy: a second remote, the clones pointed at it.
	cp -a "$T/srv/r$n.git" "$T/srv/s$n.git"
	cp -a "$T/run$n" "$T/ser$n"
	for i in $(seq "$n"); do git -C "$T/ser$n/c$i" remote set-url origin "git://127.0.0.1:$PORT/s$n.git"; done

	if [ "${SERIAL:-1}" != 0 ]; then
		syncs "$n" "$T/ser$n" serial
		report "$n" serial "$T/ser$n" "$T/srv/s$n.git" "$WALL" "$CPUS"
	fi
	syncs "$n" "$T/run$n" parallel
	report "$n" parallel "$T/run$n" "$T/srv/r$n.git" "$WALL" "$CPUS"
	for i in $(seq "$n"); do
		if [ "$(cat "$T/run$n/c$i.rc")" != 0 ]; then echo "  c$i exit $(cat "$T/run$n/c$i.rc"): $(tail -1 "$T/run$n/c$i.out")"; fi
	done
	# One more sync, of one clone, after the storm: the shared branch then holds every write pushed.
	(cd "$T/run$n/c1" && "$CTX" sync >/dev/null 2>&1) || echo "  the sync after the storm failed"
	echo "  after one more sync of c1: $(entries "$T/srv/r$n.git" refs/heads/ctx) entries on the shared branch"
	rm -rf "$T/run$n" "$T/ser$n" "$T/srv/r$n.git" "$T/srv/s$n.git"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "${BENCHFMT:-0}" = 0 ] || [ ${#BENCHLINES[@]} = 0 ] || printf '%s\n' "${BENCHLINES[@]}"
