# bench/search-matrix.sh — sourced by bench/search-ab.sh and bench/search-server.sh: the queries and flag
# sets of the output check, and the check itself (that two builds print the same bytes and exit codes).
# Needs OLD, NEW, REPO and TMP set by the script that sources it.

QUERIES=("hello function" "onboarding" "todo" "npm run build" "apply_patch" "git commit" "zzznomatch" "README"
	"error" "the" "session" "test")
FLAGSETS=("" "--json" "--json --limit 5" "--limit 100" "--json --limit 100 --scope calls" "--scope transcript"
	"--json --scope outputs" "--json --provider codex" "--provider claude-code --provider codex --json"
	"--primary-only --json" "--json --events" "--json --limit 200" "--json --since 2025-01-01")

# check_same QUERY... — runs every query under every flag set with both command names through OLD and
# NEW, prints each line that differs and then "<same> <differ>" as the last line; returns 1 when any differ.
check_same() {
	local same=0 differ=0 q f cmd rc1 rc2
	for q in "$@"; do
		for f in "${FLAGSETS[@]}"; do
			for cmd in search "history search"; do
				# shellcheck disable=SC2086 # the flags and the query's words are split on purpose
				"$OLD" -C "$REPO" $cmd $f $q >"$TMP/old" 2>"$TMP/olderr" && rc1=0 || rc1=$?
				# shellcheck disable=SC2086
				"$NEW" -C "$REPO" $cmd $f $q >"$TMP/new" 2>"$TMP/newerr" && rc2=0 || rc2=$?
				if [[ $rc1 == "$rc2" ]] && cmp -s "$TMP/old" "$TMP/new" && cmp -s "$TMP/olderr" "$TMP/newerr"; then
					same=$((same + 1))
				else
					differ=$((differ + 1))
					echo "DIFFERS: ctx $cmd $f $q (exit $rc1 / $rc2)"
				fi
			done
		done
	done
	echo "$same $differ"
	[[ $differ == 0 ]]
}
