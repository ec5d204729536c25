#!/usr/bin/env bash
# Fails when a Go file cites a document that lives outside this repository: the project's design notes
# ("design §N"), its reference documents ("seed 00N") or issue numbers ("issue #N", "issue N"). Comments
# point at the pages under docs/ instead, which say the same in the repository (docs/architecture.md
# lists them). Neither do they cite a tester's or a fault hunt's ids ("faults13 B2", "testB13 B5").
set -euo pipefail
cd "$(dirname "$0")/.."

pattern='design §|seed 0[0-9]|\b[Ii]ssues? #?[0-9]|faults[0-9]+|test[A-C][0-9]+'

pending=()

# One grep over every tracked Go file (not one per file: a process per file made this take minutes on a
# loaded machine). -H names the file even when xargs hands grep a single one.
out=$(git ls-files -z '*.go' |
  { if [ ${#pending[@]} -gt 0 ]; then grep -zvxF -f <(printf '%s\n' "${pending[@]}"); else cat; fi; } |
  xargs -0 -r grep -HnE "$pattern" || true)
if [ -n "$out" ]; then
  echo "$out"
  echo "check-doc-refs: the lines above cite documents outside the repository; point them at docs/ instead" >&2
  exit 1
fi
