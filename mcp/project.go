package mcp

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/store"
)

// Limits of get_project_context's output schema (schemas/get_project_context.output.json).
const (
	maxSlug         = 39
	maxAgentAddress = 79
	maxTeam         = 40
	maxName         = 80
	maxAgentName    = 40
	maxMemoryKey    = 100
	maxMemoryValue  = 4000
	maxUpdatedBy    = 80
	logDepth        = 1000 // commits of the public branch scanned for the agents seen
)

// projectContext is get_project_context's output (schemas/get_project_context.output.json).
type projectContext struct {
	Project projectInfo  `json:"project"`
	Memory  []memoryItem `json:"memory"`
	Pulse   []pulseItem  `json:"pulse"`
	Members []any        `json:"members"`
}

type projectInfo struct {
	Slug        string `json:"slug"`
	Team        string `json:"team"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

type memoryItem struct {
	Key        string `json:"key"`
	Value      string `json:"value"`
	Provenance string `json:"provenance"`
	UpdatedBy  string `json:"updated_by"`
	UpdatedAt  string `json:"updated_at"`
}

// pulseItem is one agent of the team pulse (docs/mcp.md).
type pulseItem struct {
	AgentID      string            `json:"agent_id"`
	Owner        string            `json:"owner"`
	Project      string            `json:"project"`
	Availability string            `json:"availability"`
	Doing        string            `json:"doing"`
	TaskID       *string           `json:"task_id"`
	Branch       *string           `json:"branch"`
	Files        []string          `json:"files"`
	LastDecision *string           `json:"last_decision"`
	UpdatedAt    string            `json:"updated_at"`
	RunFailure   *store.RunFailure `json:"run_failure,omitempty"`
	Intent       *store.Intent     `json:"intent,omitempty"`
}

// pulseOf renders an activity entry as a pulse item, within the output schema's limits.
func pulseOf(a store.Activity, project string) (pulseItem, bool) {
	owner := Slugify(a.Member, maxSlug)
	agent := Slugify(a.Agent, maxAgentAddress-len(owner)-1)
	at := normTime(a.UpdatedAt)
	if owner == "" || agent == "" || at == "" {
		return pulseItem{}, false
	}
	avail := a.Availability
	if !contains(store.Availabilities, avail) {
		avail = "online"
	}
	if a.Stale || a.Status == store.StatusCheckedOut {
		avail = "offline"
	}
	files := a.Files
	if files == nil {
		files = []string{}
	}
	if len(files) > store.MaxFiles {
		files = files[:store.MaxFiles]
	}
	for i := range files {
		files[i] = truncate(files[i], store.MaxFile)
	}
	p := pulseItem{AgentID: owner + "/" + agent, Owner: owner, Project: project, Availability: avail,
		Doing: truncate(a.Doing, store.MaxDoing), TaskID: a.TaskID, Branch: truncPtr(a.Branch, store.MaxBranch),
		Files: files, LastDecision: truncPtr(a.LastDecision, store.MaxLastDecision), UpdatedAt: at,
		RunFailure: a.RunFailure, Intent: a.Intent}
	valid := func(e store.ActivityEntry) bool {
		e.Status, e.Availability = store.StatusActive, "online"
		return store.ValidateActivity(e) == nil
	}
	if p.TaskID != nil && !valid(store.ActivityEntry{TaskID: p.TaskID}) {
		p.TaskID = nil
	}
	if p.RunFailure != nil && !valid(store.ActivityEntry{RunFailure: p.RunFailure}) {
		p.RunFailure = nil
	}
	if p.Intent != nil && store.ValidateIntent(*p.Intent) != nil {
		p.Intent = nil
	}
	return p, true
}

func truncPtr(s *string, n int) *string {
	if s == nil {
		return nil
	}
	v := truncate(*s, n)
	return &v
}

type personMember struct {
	Kind        string `json:"kind"` // "person"
	Address     string `json:"address"`
	DisplayName string `json:"display_name"`
	IsYou       bool   `json:"is_you"`
}

type agentMember struct {
	Kind        string `json:"kind"` // "agent"
	Address     string `json:"address"`
	DisplayName string `json:"display_name"`
	Owner       string `json:"owner"`
	IsYou       bool   `json:"is_you"`
}

// projectContext is get_project_context (docs/mcp.md), read from the checked-out tree:
//   - project: slug derived from the manifest's project name (Slugify), team = the owner part of the
//     manifest's repo_url (github.com/<team>/<repo>), name = the project name, description "" (the
//     manifest has none);
//   - memory: the public knowledge entries (private and ephemeral ones never leave the machine), value
//     truncated to 4000 characters, provenance from the front matter (agent_generated for an agent's
//     write, owner_instruction for a person's when absent), updated_by = the agent, or the author for a
//     person's write (max 80), updated_at = the front matter's, else the entry's last commit; keys longer
//     than the schema's 100 characters are left out;
//   - pulse: the public activity entries (store.ListActivity), one per member/agent/machine file, with
//     agent_id owner/agent; a stale entry (48 hours, docs/format.md) or a checked-out one is "offline";
//     entries whose member or agent make no slug are left out;
//   - members: the manifest's team members and the owners of the agents seen, as persons; the agents seen
//     in the last commits of the context branch (Ctx-Agent trailers) and this server's agent, addressed
//     owner/agent.
//
// is_you comes from the server's identity (the process's git identity and the client's agent), never
// from an argument. The project argument names this store (projectNames: its slug, or the
// slug of its repository's name or folder); another is a tool error naming the slug.
//
// The result fits the MCP response limit (docs/limits.md): a memory value cut at the schema's 4,000
// characters ends with a "[truncated: ...]" marker naming its resource; when the whole result would
// still be too large, every value gets a fair share of the room (cut the same way), and memory items,
// then pulse items that do not fit are left out, said in a second text content item.
// projectArgs are the arguments of get_project_context.
type projectArgs struct {
	Project string `json:"project"`
}

func (s *srv) projectContext(ctx context.Context, a projectArgs) (any, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, err
	}
	m, err := v.ReadManifest(ctx)
	if err != nil {
		return nil, err
	}
	names := s.projectNames(m)
	slug := names[0]
	if want := a.Project; !contains(names, want) {
		return nil, argErrorf("argument 'project': unknown project '%s': this store's project is '%s'", want, slug)
	}
	name := truncate(strings.TrimSpace(m.Project.Name), maxName)
	if name == "" {
		name = slug
	}
	out := projectContext{
		Project: projectInfo{Slug: slug, Team: truncate(teamOf(m.Project.RepoURL), maxTeam), Name: name},
		Memory:  []memoryItem{},
		Pulse:   []pulseItem{},
		Members: []any{},
	}

	acts, err := v.ListActivity(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range acts {
		if a.Scope != store.Public {
			continue
		}
		if p, ok := pulseOf(a, slug); ok {
			out.Pulse = append(out.Pulse, p)
		}
	}

	log, err := s.store(ctx).Log(ctx, logDepth, "")
	if err != nil {
		return nil, err
	}
	// Of each entry, no more than the longest value the schema allows (4,000 characters of up to 4 bytes).
	entries, err := loadEntries(ctx, v, store.KnowledgeKind, func(sizes []int) []int {
		out := make([]int, len(sizes))
		for i, n := range sizes {
			out[i] = min(n, 4*maxMemoryValue)
		}
		return out
	})
	if err != nil {
		return nil, err
	}
	var fulls []int
	for _, e := range entries {
		if e.Scope != store.Public || utf8.RuneCountInString(e.Key) > maxMemoryKey {
			continue
		}
		out.Memory = append(out.Memory, s.memory(ctx, e.Entry, m))
		fulls = append(fulls, e.full)
	}

	// Identity of the caller: the token's member over HTTP, else this process's git identity; never an
	// argument (docs/http.md).
	var meName, meEmail string
	if id, err := s.store(ctx).Identity(ctx); err == nil {
		meName, meEmail = id.Name, id.Email
	}
	me := personSlug(meName, meEmail)
	myAgent := s.store(ctx).Actor.Agent

	persons := map[string]personMember{}
	var personOrder []string
	addPerson := func(name, email string) string {
		addr := personSlug(name, email)
		if addr == "" {
			return ""
		}
		if _, ok := persons[addr]; !ok {
			dn := truncate(strings.TrimSpace(name), maxName)
			if dn == "" {
				dn = addr
			}
			persons[addr] = personMember{Kind: "person", Address: addr, DisplayName: dn, IsYou: addr == me}
			personOrder = append(personOrder, addr)
		}
		return addr
	}
	for _, mem := range m.Team.Members {
		addPerson(mem.Name, "")
	}
	agents := map[string]agentMember{}
	var agentOrder []string
	addAgent := func(agent, ownerName, ownerEmail string) {
		if agent == "" || agent == "cli" {
			return // "cli" is a person at the terminal (store.Actor)
		}
		owner := addPerson(ownerName, ownerEmail)
		as := Slugify(agent, maxAgentAddress-len(owner)-1)
		if owner == "" || as == "" {
			return
		}
		addr := owner + "/" + as
		if _, ok := agents[addr]; ok {
			return
		}
		agents[addr] = agentMember{Kind: "agent", Address: addr, DisplayName: truncate(agent, maxAgentName),
			Owner: owner, IsYou: owner == me && agent == myAgent}
		agentOrder = append(agentOrder, addr)
	}
	addAgent(myAgent, meName, meEmail)
	for _, a := range acts {
		if a.Scope == store.Public {
			addAgent(a.Agent, a.Member, "")
		}
	}
	for _, l := range log {
		n, e := splitAuthor(l.Author)
		addAgent(l.Agent, n, e)
	}
	sort.Strings(personOrder)
	sort.Strings(agentOrder)
	for _, a := range personOrder {
		out.Members = append(out.Members, persons[a])
	}
	for _, a := range agentOrder {
		out.Members = append(out.Members, agents[a])
	}
	return fitProjectContext(out, fulls)
}

// projectHint is the sentence of get_project_context's description that names this store's project
// (when the store can be read): agents cannot guess the slug.
//
// It runs before the server answers initialize, so it reads through a second, short-lived handle of the
// store that reads objects in process (gitstore's pack reader, as a one-shot command does): read through
// the server's own handle, the manifest made go-git decode every pack index first, ~45 % of the CPU of
// `ctx mcp serve` up to initialize at 10,000 entries (bench/README.md "Start-up at the floor"). The
// server's handle loads them on its first read of an object, as before.
func (s *srv) projectHint(ctx context.Context) string {
	names, err := s.startProjectNames(ctx)
	if err != nil {
		return " Pass project: this store's project slug (a wrong one is an error naming it)."
	}
	h := fmt.Sprintf(" This server serves one project: pass project: %q", names[0])
	if len(names) > 1 {
		h += fmt.Sprintf(" (also accepted: %s)", quoteList(names[1:]))
	}
	return h + "."
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

// startProjectNames is currentProjectNames through a handle of the store of its own that reads in
// process (projectHint); through the server's handle when that cannot be opened (a bare repository).
func (s *srv) startProjectNames(ctx context.Context) ([]string, error) {
	wt := s.st.WorkTree()
	if wt == "" {
		return s.currentProjectNames(ctx)
	}
	one, err := store.Open(ctx, wt, s.st.Actor)
	if err != nil {
		return s.currentProjectNames(ctx)
	}
	defer func() { _ = one.Close() }()
	one.ReadInProcess()
	return s.projectNamesOf(ctx, one)
}

// currentProjectNames reads the manifest at the context refs' tips and returns projectNames.
func (s *srv) currentProjectNames(ctx context.Context) ([]string, error) {
	return s.projectNamesOf(ctx, s.st)
}

// projectNamesOf is projectNames of the manifest at st's context refs' tips.
func (s *srv) projectNamesOf(ctx context.Context, st *store.Store) ([]string, error) {
	v, err := st.RefView(ctx)
	if err != nil {
		return nil, err
	}
	m, err := v.WithMaxRead(maxFileRead).ReadManifest(ctx)
	if err != nil {
		return nil, err
	}
	return s.projectNames(m), nil
}

// prepareProject is get_project_context's prepare: a project given as a name ("Engine Notes") that
// slugifies to one of this store's names is taken as that slug, so that the schema's slug pattern
// accepts it; an argument error names the slug.
func (s *srv) prepareProject(ctx context.Context, args map[string]any) string {
	names, err := s.currentProjectNames(ctx)
	if err != nil || len(names) == 0 {
		return ""
	}
	if p, ok := args["project"].(string); ok && !contains(names, p) {
		if sl := Slugify(p, maxSlug); contains(names, sl) {
			args["project"] = sl
		}
	}
	return fmt.Sprintf("this store's project is '%s'", names[0])
}

// projectNames are the values of get_project_context's project argument that name this store: first its
// slug (of the manifest's project name; "project" when that gives none), then the slugs of the
// repository's name (the last part of the manifest's repo_url) and of its work tree's folder.
func (s *srv) projectNames(m store.Manifest) []string {
	slug := Slugify(m.Project.Name, maxSlug)
	if slug == "" {
		slug = "project"
	}
	out := []string{slug}
	add := func(name string) {
		if n := Slugify(name, maxSlug); n != "" && !contains(out, n) {
			out = append(out, n)
		}
	}
	if u := strings.TrimSuffix(strings.TrimRight(strings.TrimSpace(m.Project.RepoURL), "/"), ".git"); u != "" {
		add(path.Base(strings.ReplaceAll(u, ":", "/")))
	}
	if wt := s.st.WorkTree(); wt != "" {
		add(filepath.Base(wt))
	}
	return out
}

// memory renders one public knowledge entry as a memory item of the output schema.
func (s *srv) memory(ctx context.Context, e store.Entry, m store.Manifest) memoryItem {
	prov := e.Provenance
	if !contains(store.Provenances, prov) {
		prov = "owner_instruction"
		if e.Agent != "" && e.Agent != "cli" {
			prov = "agent_generated"
		}
	}
	by := e.Agent
	if by == "" || by == "cli" {
		by, _ = splitAuthor(e.Author)
	}
	at := normTime(e.UpdatedAt)
	if at == "" {
		if l, err := s.store(ctx).Log(ctx, 1, store.KnowledgeKind.Dir+"/"+e.Key+".md"); err == nil && len(l) > 0 {
			at = normTime(l[0].Time)
		}
	}
	if at == "" {
		at = normTime(m.UpdatedAt)
	}
	if at == "" {
		at = "1970-01-01T00:00:00Z"
	}
	return memoryItem{Key: e.Key, Value: e.Content, Provenance: prov, UpdatedBy: truncate(by, maxUpdatedBy), UpdatedAt: at}
}

// Slugify derives the project and member slug ^[a-z0-9]+(?:-[a-z0-9]+)*$ from a name: ASCII letters lower-cased
// and digits kept, every run of anything else becomes one '-', no leading or trailing '-', at most max
// bytes. "" when nothing is left.
func Slugify(name string, max int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	out := b.String()
	if max > 0 && len(out) > max {
		out = strings.TrimRight(out[:max], "-")
	}
	return out
}

// personSlug is a person's address: the slug of the name, else of the email's local part.
func personSlug(name, email string) string {
	if s := Slugify(name, maxSlug); s != "" {
		return s
	}
	local, _, _ := strings.Cut(email, "@")
	return Slugify(local, maxSlug)
}

// splitAuthor splits "Name <email>" (store's author and LogEntry.Author form).
func splitAuthor(a string) (name, email string) {
	name, rest, ok := strings.Cut(a, "<")
	if !ok {
		return strings.TrimSpace(a), ""
	}
	return strings.TrimSpace(name), strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), ">"))
}

// teamOf returns the owner part of a repository URL: "org" of https://github.com/org/repo(.git),
// git@github.com:org/repo.git or ssh://git@host/org/repo; "" when there is none.
func teamOf(repoURL string) string {
	p := strings.TrimSpace(repoURL)
	if p == "" {
		return ""
	}
	if u, err := url.Parse(p); err == nil && u.Scheme != "" && u.Host != "" {
		p = u.Path
	} else if _, after, ok := strings.Cut(p, ":"); ok && !strings.Contains(p, "://") {
		p = after // scp-like git@host:org/repo
	} else {
		return ""
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) < 2 {
		return ""
	}
	return parts[len(parts)-2]
}

// normTime renders an RFC 3339 time in UTC with seconds (docs/format.md), "" when it does not parse.
func normTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// truncate keeps at most n characters (JSON Schema's maxLength counts code points).
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
