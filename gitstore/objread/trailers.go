package objread

import "strings"

// Trailers parses the "Key: value" lines of a commit message's last paragraph (git-interpret-trailers(1)):
// a key holds no space; values are trimmed. A message of one paragraph has none. Shared by the lean front
// and store (store.Trailers), so both programs read ctx's trailers by one rule.
func Trailers(msg string) map[string]string {
	out := map[string]string{}
	paras := strings.Split(strings.TrimRight(msg, "\n"), "\n\n")
	if len(paras) < 2 {
		return out
	}
	for _, line := range strings.Split(paras[len(paras)-1], "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if ok && !strings.Contains(k, " ") {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// TrailerValues is every value of the trailer key in a commit message's last paragraph, in order, by
// Trailers' rule: a key may repeat (ctx's Ctx-Renamed, one per file). Nil when there is none.
func TrailerValues(msg, key string) []string {
	paras := strings.Split(strings.TrimRight(msg, "\n"), "\n\n")
	if len(paras) < 2 {
		return nil
	}
	var out []string
	for _, line := range strings.Split(paras[len(paras)-1], "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && k == key {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}
