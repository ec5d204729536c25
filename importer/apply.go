package importer

import (
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/store"
)

// Batch turns a plan into one store batch (ctx import: one commit per import run) with every entry in
// scope sc. A decision's Source is recorded relative to workTree when the file is inside it (absolute
// otherwise), so that importing the same ADR folder again changes nothing; a decision without a known
// status is stored as proposed, its original word kept in status_text.
func Batch(p Plan, sc store.Scope, workTree string) store.Batch {
	var b store.Batch
	for _, it := range p.Items {
		switch it.Kind {
		case KindKnowledge:
			b.Entries = append(b.Entries, store.BatchEntry{Kind: store.KnowledgeKind, SetEntry: store.SetEntry{Key: it.Key, Content: string(it.Content), Scope: sc}})
		case KindConvention:
			b.Entries = append(b.Entries, store.BatchEntry{Kind: store.ConventionKind, SetEntry: store.SetEntry{Key: it.Key, Content: string(it.Content), Scope: sc}})
		case KindSkill:
			b.Skills = append(b.Skills, store.NewSkill{Name: it.Key, Content: it.Content, Scope: sc})
		case KindDecision:
			body := string(it.Content)
			status := it.Status
			if status == "" {
				status = "proposed"
			}
			b.Decisions = append(b.Decisions, store.NewDecision{Title: it.Title, Status: status, StatusText: it.StatusText,
				Date: it.Date, Source: relSource(workTree, it.Source), Body: &body, Number: it.Number, Scope: sc})
		}
	}
	return b
}

func relSource(workTree, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	if workTree != "" {
		if rel, err := filepath.Rel(workTree, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(abs)
}
