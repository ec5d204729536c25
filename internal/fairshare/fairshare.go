// Package fairshare splits a byte budget between sections of a bounded text (the MCP onboarding prompt,
// the managed block of an agent's instruction file): docs/limits.md.
package fairshare

import "sort"

// Split splits room between demand by max-min fairness: each demand gets at most what it asks, and what
// a small demand leaves goes to the larger ones. The result has len(demand) entries summing to at most
// room (all in the same unit, bytes here).
func Split(demand []int, room int) []int {
	out := make([]int, len(demand))
	idx := make([]int, len(demand))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return demand[idx[a]] < demand[idx[b]] })
	for k, i := range idx {
		share := room / (len(idx) - k)
		out[i] = min(demand[i], share)
		room -= out[i]
	}
	return out
}
