// Package adapters keeps the files coding agents read by themselves — instruction files (CLAUDE.md,
// AGENTS.md, GEMINI.md, .github/copilot-instructions.md), Cursor rules and skills folders — in step with
// the public context of a store, and imports them back without reading ctx's own output.
//
// The flow: Load reads the public context (store's read API, never private or ephemeral entries);
// PlanExport computes, per file, what an export of some clients would do (Create, Update, Delete,
// Unchanged) and the Problems of files it must leave alone (a hand-edited or broken managed block, a
// file ctx wrote that the user changed, a skill folder ctx did not write); Plan.Diff renders a dry run;
// Plan.Apply writes atomically and keeps the Record of what ctx wrote; Status reports in-step, stale,
// missing or hand-edited per client; Refresh re-exports the clients enabled in the Record (after a pull,
// in git hooks); ImportPlan and Clean give the importer's plan of the clients' files without ctx's
// block, rules and skills, so that an export followed by an import changes nothing.
//
// Everything is specified in docs/adapters.md. Paths are slash-separated and relative to the work tree;
// every file access goes through an os.Root and follows no symbolic link.
package adapters
