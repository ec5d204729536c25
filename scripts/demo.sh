#!/usr/bin/env bash
# The ctx tour: a bare remote and two clones in a temporary directory; Ada imports the bundled real files
# (testdata/corpus: ADRs, SKILL.md folders, agent instruction files, contributing guides), writes, pushes;
# Grace clones, pulls, writes; both sync; an agent reads through MCP. Prints what happens.
set -euo pipefail
CTX=$(cd "$(dirname "${1:-bin/ctx}")" && pwd)/$(basename "${1:-bin/ctx}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ctx-demo.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME="$TMP/home" GIT_TERMINAL_PROMPT=0
mkdir -p "$HOME"
git config --global init.defaultBranch main
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# quote prints one argument as a shell would need it: as is when it is a plain word, else in single quotes
# (like printf %q, but readable; bash 3.2 has no ${x@Q}).
quote() {
  case "$1" in
    '' | *[!A-Za-z0-9_./:=@%+,-]*) printf "'%s'" "${1//\'/\'\\\'\'}" ;;
    *) printf '%s' "$1" ;;
  esac
}
# show echoes a command with the prompt of the clone it runs in (ada$, grace$), then runs it.
show() {
  local first=$1 a
  [ "$first" = "$CTX" ] && first=ctx
  printf '%s$ %s' "$WHO" "$(quote "$first")"
  shift
  for a in "$@"; do printf ' %s' "$(quote "$a")"; done
  printf '\n'
  if [ "$first" = ctx ]; then "$CTX" "$@"; else "$first" "$@"; fi
}
# as switches the person (git identity, machine, prompt) of the commands that follow.
as() {
  export GIT_AUTHOR_NAME="$1" GIT_AUTHOR_EMAIL="$2" GIT_COMMITTER_NAME="$1" GIT_COMMITTER_EMAIL="$2" CTX_MACHINE="$3"
  WHO=$(printf '%s' "${1%% *}" | tr '[:upper:]' '[:lower:]')
}

step "a bare remote with a project on main"
git init -q --bare "$TMP/remote.git"
git clone -q "$TMP/remote.git" "$TMP/seed" 2>/dev/null
as "Ada Lovelace" ada@example.com ada-laptop
(cd "$TMP/seed" && echo "# demo project" > README.md && git add README.md && git commit -qm "initial commit" && git push -q origin main)
echo "remote: $TMP/remote.git"

step "Ada: clone, ctx init, import the bundled real files"
git clone -q "$TMP/remote.git" "$TMP/ada"
cd "$TMP/ada"
show "$CTX" init --no-hooks
show "$CTX" import --dry-run "$ROOT/testdata/corpus" 2>"$TMP/warnings" | tail -n 6
echo "($(wc -l <"$TMP/warnings") warnings say what the importer guessed, e.g.: $(head -n 1 "$TMP/warnings" | cut -c1-160)...)"
show "$CTX" import "$ROOT/testdata/corpus" 2>/dev/null
show "$CTX" decision list
show "$CTX" knowledge set architecture "One Go binary; the context store is a git branch."
show "$CTX" decision add "Store context on a git branch" --context "Agents on many machines need shared context" \
  --decision "Every write is a commit on refs/heads/ctx" --consequences "ctx push/pull sync it" --status accepted
echo "Ada's work tree is untouched by ctx:"
printf '%s$ git status --short\n' "$WHO"
st=$(git status --short)
if [ -n "$st" ]; then
  printf '%s\n' "$st"
  echo "demo: ctx changed Ada's work tree" >&2
  exit 1
fi
echo "(clean)"
show "$CTX" push
show git log --oneline -3 ctx

step "Grace: clone, ctx pull, write, sync"
as "Grace Hopper" grace@example.com grace-desktop
git clone -q "$TMP/remote.git" "$TMP/grace"
cd "$TMP/grace"
show "$CTX" pull
show "$CTX" knowledge get architecture; echo
show "$CTX" convention set reviews "Every change is reviewed by one other person."

step "meanwhile Ada writes too; both sync and converge"
as "Ada Lovelace" ada@example.com ada-laptop
(cd "$TMP/ada" && show "$CTX" knowledge set deploy "Deploy with make release.")
as "Grace Hopper" grace@example.com grace-desktop
show "$CTX" sync
as "Ada Lovelace" ada@example.com ada-laptop
(cd "$TMP/ada" && show "$CTX" sync)
as "Grace Hopper" grace@example.com grace-desktop
show "$CTX" pull
echo "Ada's tip:   $(git -C "$TMP/ada" rev-parse ctx)"
echo "Grace's tip: $(git -C "$TMP/grace" rev-parse ctx)"
show "$CTX" status
show "$CTX" log -n 4

step "an agent reads through MCP (ctx mcp serve over stdio)"
{
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}'
  printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"context://knowledge/architecture"}}'
  printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"context://decisions"}}'
  sleep 1
} | "$CTX" mcp serve --agent demo-agent 2>/dev/null | while IFS= read -r line; do
  case "$line" in
    *'"id":2'*|*'"id":3'*) printf '%s\n' "$line" | cut -c1-400 ;;
  esac
done
step "done: every write above is a commit on refs/heads/ctx, in both clones and on the remote"
