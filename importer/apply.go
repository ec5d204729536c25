package importer

import (
	"strings"

	"github.com/ctx-dev/ctx/store"
)

// Batch turns a plan into one store batch (ctx import: one commit per import run) with every entry in
// scope sc. A decision's Source is the item's Path: relative to the repository root, never machine-local,
// so that importing the same ADR folder again changes nothing (or updates what changed); a decision
// without a known status is stored as proposed, its original word kept in status_text.
func Batch(p Plan, sc store.Scope) store.Batch {
	var b store.Batch
	for _, it := range p.Items {
		switch it.Kind {
		case KindKnowledge:
			b.Entries = append(b.Entries, store.BatchEntry{Kind: store.KnowledgeKind, SetEntry: store.SetEntry{Key: it.Key, Content: fileContent(it.Content), Scope: sc}})
		case KindConvention:
			b.Entries = append(b.Entries, store.BatchEntry{Kind: store.ConventionKind, SetEntry: store.SetEntry{Key: it.Key, Content: fileContent(it.Content), Scope: sc}})
		case KindSkill:
			b.Skills = append(b.Skills, store.NewSkill{Name: it.Key, Content: it.Content, Scope: sc})
		case KindDecision:
			body := string(it.Content)
			status := it.Status
			if status == "" {
				status = "proposed"
			}
			nd := store.NewDecision{Title: it.Title, Status: status, StatusText: it.StatusText,
				Date: it.Date, Source: it.Path, Body: &body, Number: it.Number, Scope: sc, SupersedesRefs: it.Supersedes}
			if it.SupersededBy != nil {
				nd.SupersededByRef = *it.SupersededBy
			}
			b.Decisions = append(b.Decisions, nd)
		}
	}
	return b
}

// fileContent is the content of an entry imported from a text file: the file less its final newline,
// which ends its last line and is no content (store.EntryContent), so that the entry's file on the branch
// holds the file's bytes: importing again, or a store imported by an older ctx, changes nothing.
func fileContent(b []byte) string { return strings.TrimSuffix(string(b), "\n") }
