#!/usr/bin/env bash
# Fails when a Go file cites a document that lives outside this repository: the project's design notes
# ("design §N"), its reference documents ("seed 00N") or issue numbers ("issue #N", "issue N"). Comments
# point at the pages under docs/ instead, which say the same in the repository (docs/architecture.md
# lists them).
set -euo pipefail
cd "$(dirname "$0")/.."

pattern='design §|seed 0[0-9]|\b[Ii]ssues? #?[0-9]'

pending=()

files=$(git ls-files '*.go')
bad=0
for f in $files; do
  for p in "${pending[@]}"; do
    [ "$f" = "$p" ] && continue 2
  done
  if out=$(grep -nE "$pattern" "$f"); then
    while IFS= read -r line; do echo "$f:$line"; done <<<"$out"
    bad=1
  fi
done
if [ "$bad" = 1 ]; then
  echo "check-doc-refs: the lines above cite documents outside the repository; point them at docs/ instead" >&2
  exit 1
fi
