package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// scheme is the URI scheme of the resources (docs/mcp.md).
const scheme = "context://"

// resourceDef is one fixed resource or template of docs/mcp.md "Resources".
type resourceDef struct {
	uri, name, desc string
}

// fixedResources are the resources listed by resources/list, in the order of docs/mcp.md.
var fixedResources = []resourceDef{
	{"context://manifest", "manifest", "Project metadata and configuration: the Manifest (schema_version, project, adapters, team, created_at, updated_at)."},
	{"context://summary", "summary", "High-level project summary: project, knowledge/convention/decision/skill counts, current task and blockers."},
	{"context://knowledge", "knowledge", "All knowledge entries [{key, content, scope}], every scope, ordered by key." + listNote},
	{"context://conventions", "conventions", "All team conventions [{key, content, scope}], ordered by key." + listNote},
	{"context://decisions", "decisions", "All architectural decisions [{id, title, status, scope}], ordered by id."},
	{"context://state", "state", "The current session state (ActiveState): current_task, blockers, progress, last_agent, last_machine, updated_at."},
	{"context://history", "history", "Recent session history: SessionSummary objects ordered by start time."},
	{"context://skills", "skills", "All agent skills [{name, description, scope}], ordered by name."},
	{"context://skills/stats", "skills-stats", "Usage and feedback statistics of every skill (SkillStats); needs_attention when 2+ ratings average below 3.0."},
	{"context://activity", "activity", "Team activity entries with stale flags (older than 48 hours)."},
}

// listNote documents how a list keeps within the response limit (docs/limits.md).
const listNote = " Within the 1 MiB MCP response limit: when the entries do not fit, the longest are cut, each " +
	"ending with \"[truncated: showing N of M bytes; read context://.../{key}]\"; entries left out are counted in a " +
	"second, text/plain item."

// templateResources are the resource templates of docs/mcp.md.
var templateResources = []resourceDef{
	{"context://knowledge/{key}", "knowledge-entry", "One knowledge entry {key, content}." + missingNote("Knowledge entry 'KEY' not found") + largeNote("knowledge get KEY")},
	{"context://conventions/{key}", "convention", "One convention {key, content}." + missingNote("Convention 'KEY' not found") + largeNote("convention get KEY")},
	{"context://decisions/{id}", "decision", "One decision by numeric id or exact title {id, title, status, context, decision, consequences}, and body (the whole ADR) when one of those sections is missing." + missingNote("Decision 'ID' not found") + largeNote("decision get ID")},
	{"context://skills/{name}", "skill", "One skill's SKILL.md {name, description, content}." + missingNote("Skill 'NAME' not found") + largeNote("skill get NAME")},
	{"context://skills/{name}/feedback", "skill-feedback", "All feedback entries of a skill (SkillFeedback)." + missingNote("Skill 'NAME' not found")},
	{"context://skills/{name}/proposals", "skill-proposals", "All improvement proposals of a skill (SkillProposal)." + missingNote("Skill 'NAME' not found")},
}

// missingNote documents a template's not-found answer (the error object): a normal result, unlike
// a URI that matches no resource or template.
func missingNote(msg string) string {
	return ` A missing entry is not a JSON-RPC error: the result holds {"error": "` + msg + `"}; only a URI that names no resource at all is the JSON-RPC error -32002 (resource not found).`
}

// largeNote documents the refusal of an entry over the response limit.
func largeNote(cli string) string {
	return " An entry over the 1 MiB MCP response limit is not loaded: JSON-RPC error -32603 whose message " +
		"starts with output_limit_exceeded and names `ctx " + cli + "`, which prints it."
}

func (s *srv) addResources() {
	h := func(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
		return s.render(ctx, req.Params.URI)
	}
	for _, r := range fixedResources {
		s.mcp.AddResource(mcpgo.NewResource(r.uri, r.name, mcpgo.WithResourceDescription(r.desc),
			mcpgo.WithMIMEType("application/json")), h)
	}
	var tpls []server.ServerResourceTemplate
	for _, r := range templateResources {
		tpls = append(tpls, server.ServerResourceTemplate{
			Template: mcpgo.NewResourceTemplate(r.uri, r.name, mcpgo.WithTemplateDescription(r.desc),
				mcpgo.WithTemplateMIMEType("application/json")),
			Handler: server.ResourceTemplateHandlerFunc(h),
		})
	}
	s.mcp.AddResourceTemplates(tpls...)
}

// resourcePatterns match the URIs resources/read serves: the fixed resources, and the templates as mcp-go
// matches them (their uritemplate's regular expression).
var resourcePatterns = sync.OnceValue(func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, r := range fixedResources {
		out = append(out, regexp.MustCompile("^"+regexp.QuoteMeta(r.uri)+"$"))
	}
	for _, r := range templateResources {
		out = append(out, mcpgo.NewResourceTemplate(r.uri, r.name).URITemplate.Regexp())
	}
	return out
})

// knownResource reports whether uri names a resource or matches a template of the server: what
// resources/read answers with contents (or the error object of a missing entry) rather than the JSON-RPC
// error resource not found.
func knownResource(uri string) bool {
	for _, re := range resourcePatterns() {
		if re.MatchString(uri) {
			return true
		}
	}
	return false
}

// unknownSubscription returns the JSON-RPC error for a resources/subscribe request b whose params.uri names
// no resource or template (knownResource), nil otherwise: the code resources/read gives the same URI,
// -32002 resource not found, or -32602 for a request of protocol 2026-07-28 (as mcp-go answers a read).
// mcp-go's own subscribe accepts any URI; both transports check it before dispatch (docs/mcp.md
// "Resource errors").
func unknownSubscription(b []byte, method string, id any) *mcpgo.JSONRPCError {
	if mcpgo.MCPMethod(method) != mcpgo.MethodResourcesSubscribe {
		return nil
	}
	var m struct {
		Params struct {
			URI  string      `json:"uri"`
			Meta *mcpgo.Meta `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &m) != nil || m.Params.URI == "" || knownResource(m.Params.URI) {
		return nil // no URI: paramProblem's answer
	}
	code := mcpgo.RESOURCE_NOT_FOUND
	if mcpgo.IsModernProtocol(m.Params.Meta.ProtocolVersion()) {
		code = mcpgo.INVALID_PARAMS
	}
	e := mcpgo.NewJSONRPCError(mcpgo.NewRequestId(id), code, fmt.Sprintf("Resource not found: %s names no resource or "+
		"template of this server (resources/list, resources/templates/list): nothing to subscribe to", m.Params.URI), map[string]any{"uri": m.Params.URI})
	return &e
}

// errorObject is the error object of docs/mcp.md "Resource errors", served as a resource's contents.
type errorObject struct {
	Error string `json:"error"`
}

// Seed 000's shapes.
type (
	entryItem struct {
		Key     string      `json:"key"`
		Content string      `json:"content"`
		Scope   store.Scope `json:"scope"`
	}
	entryOne struct {
		Key     string `json:"key"`
		Content string `json:"content"`
	}
	decisionItem struct {
		ID     int         `json:"id"`
		Title  string      `json:"title"`
		Status string      `json:"status"`
		Scope  store.Scope `json:"scope"`
	}
	decisionOne struct {
		ID           int    `json:"id"`
		Title        string `json:"title"`
		Status       string `json:"status"`
		Context      string `json:"context"`
		Decision     string `json:"decision"`
		Consequences string `json:"consequences"`
		// Body is the whole ADR, given when one of the three sections above is missing (headings in
		// another language, or none), so that the decision is always served whole.
		Body string `json:"body,omitempty"`
	}
	skillItem struct {
		Name        string      `json:"name"`
		Description string      `json:"description"`
		Scope       store.Scope `json:"scope"`
	}
	skillOne struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Content     string `json:"content"`
	}
	// activeState is the ActiveState of docs/format.md "Records".
	activeState struct {
		CurrentTask string            `json:"current_task"`
		Blockers    []string          `json:"blockers"`
		Progress    map[string]string `json:"progress"`
		LastAgent   string            `json:"last_agent"`
		LastMachine string            `json:"last_machine"`
		UpdatedAt   *string           `json:"updated_at"`
	}
)

// render returns the contents of a context:// URI (docs/mcp.md), read from the checked-out tree (docs/mcp.md):
// one application/json item holding the resource's JSON. Missing entries, and keys or names that
// store.ValidKey refuses, render as the error object. Path segments are URL-decoded one by one, so
// an encoded '/' stays inside its segment and is then refused by ValidKey. A URI that names no resource is
// an error (JSON-RPC resource not found).
//
// Every rendering fits the MCP response limit (docs/limits.md): a list too long for it is cut, each cut
// entry's content ending with a "[truncated: ...]" marker, and items left out are counted in a second,
// text/plain item holding the same kind of marker; a single entry too large for one response is an
// error (output_limit_exceeded) and is not loaded.
func (s *srv) render(ctx context.Context, uri string) ([]mcpgo.ResourceContents, error) {
	rest, ok := strings.CutPrefix(uri, scheme)
	if !ok {
		return nil, fmt.Errorf("%w: %s", server.ErrResourceNotFound, uri)
	}
	var segs []string
	for _, p := range strings.Split(rest, "/") {
		d, err := url.PathUnescape(p)
		if err != nil {
			d = p
		}
		segs = append(segs, d)
	}
	// The read cache (readcache.go): served from memory while the refs, the record and the entry's files
	// are unchanged; otherwise read as below, and kept when it may be.
	pub := store.PublicOnly(ctx)
	key := uri
	if pub {
		key = "public-only\x00" + uri
	}
	rc := s.reads
	cache := rc != nil && !(len(segs) == 1 && segs[0] == "activity")
	var gen uint64
	var v *store.View
	if cache {
		var kept []mcpgo.ResourceContents
		if kept, gen, v = rc.lookup(s.st, key, pub); kept != nil {
			return kept, nil
		}
	}
	if v == nil {
		var err error
		if v, err = s.st.CheckoutView(ctx); err != nil {
			return nil, fmt.Errorf("read the checked-out tree: %w", err)
		}
		if cache {
			rc.setView(gen, pub, v)
		}
	}
	var deps *readDeps
	if cache {
		deps = newReadDeps(s.st.CheckoutRoot(), rc.margin)
		v = v.Observe(deps.before)
	}
	out, err := s.resource(ctx, v.WithMaxRead(maxFileRead), segs)
	var nf *store.NotFoundError
	var amb *store.AmbiguousError
	var tl *store.TooLargeError
	switch {
	case errors.As(err, &nf):
		out = errorObject{nf.Msg}
	case errors.As(err, &amb):
		out = errorObject{amb.Error()}
	case errors.Is(err, errNoResource):
		return nil, fmt.Errorf("%w: %s", server.ErrResourceNotFound, uri)
	case errors.Is(err, errOutputLimit):
		return nil, err
	case errors.As(err, &tl):
		return nil, fmt.Errorf("%w: %s: %v (the MCP server loads at most %d bytes of one file)", errOutputLimit, uri, tl, maxFileRead)
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", uri, err)
	}
	contents, err := fitContents(uri, out)
	if err == nil && cache && deps.keep {
		rc.put(key, gen, deps.deps, contents)
	}
	return contents, err
}

var errNoResource = errors.New("no such resource")

// resource computes the value of the resource named by the decoded path segments.
func (s *srv) resource(ctx context.Context, v *store.View, segs []string) (any, error) {
	switch len(segs) {
	case 1:
		switch segs[0] {
		case "manifest":
			return s.manifest(ctx, v)
		case "summary":
			return s.summary(ctx, v)
		case "knowledge":
			return s.listEntries(ctx, v, store.KnowledgeKind)
		case "conventions":
			return s.listEntries(ctx, v, store.ConventionKind)
		case "decisions":
			ds, err := v.ListDecisions(ctx)
			if err != nil {
				return nil, err
			}
			out := make([]decisionItem, 0, len(ds))
			for _, d := range ds {
				out = append(out, decisionItem{d.ID, d.Title, d.Status, d.Scope})
			}
			return out, nil
		case "state":
			return s.state(ctx, v)
		case "history":
			return v.ListSessions(ctx)
		case "skills":
			sks, err := v.ListSkills(ctx)
			if err != nil {
				return nil, err
			}
			out := make([]skillItem, 0, len(sks))
			for _, sk := range sks {
				out = append(out, skillItem{sk.Name, sk.Description, sk.Scope})
			}
			return out, nil
		case "activity":
			return s.activity(ctx, v)
		}
	case 2:
		switch segs[0] {
		case "knowledge", "conventions":
			k := store.KnowledgeKind
			if segs[0] == "conventions" {
				k = store.ConventionKind
			}
			key, err := store.NormalizeKey(segs[1])
			if err != nil {
				return nil, &store.NotFoundError{Msg: fmt.Sprintf(k.Missing, segs[1])}
			}
			if err := checkEntrySize(ctx, v, scheme+segs[0]+"/"+key, k.Dir+"/"+key+".md",
				"ctx "+k.Name+" get "+key); err != nil {
				return nil, err
			}
			e, err := v.GetEntry(ctx, k, segs[1])
			if err != nil {
				return nil, err
			}
			return entryOne{e.Key, e.Content}, nil
		case "decisions":
			d, err := v.FindDecision(ctx, segs[1])
			if err != nil {
				return nil, err
			}
			one := decisionOne{d.ID, d.Title, d.Status, d.Context, d.Decision, d.Consequences, ""}
			if d.Context == "" || d.Decision == "" || d.Consequences == "" {
				one.Body = d.Body
			}
			return one, nil
		case "skills":
			if segs[1] == "stats" {
				return v.SkillStats(ctx)
			}
			if name, err := store.NormalizeKey(segs[1]); err == nil {
				if err := checkEntrySize(ctx, v, scheme+"skills/"+name, "skills/"+name+"/SKILL.md",
					"ctx skill get "+name); err != nil {
					return nil, err
				}
			}
			sk, err := s.skill(ctx, v, segs[1])
			if err != nil {
				return nil, err
			}
			return skillOne{sk.Name, sk.Description, sk.Content}, nil
		}
	case 3:
		if segs[0] == "skills" && (segs[2] == "feedback" || segs[2] == "proposals") {
			if _, err := s.skill(ctx, v, segs[1]); err != nil {
				return nil, err
			}
			if segs[2] == "feedback" {
				return v.SkillFeedback(ctx, segs[1])
			}
			return v.ListProposals(ctx, segs[1], "")
		}
	}
	return nil, errNoResource
}

func skillMissing(name string) error {
	return &store.NotFoundError{Msg: fmt.Sprintf("Skill '%s' not found", name)}
}

// skill reads a skill; an invalid name is not found ("Skill 'x' not found").
func (s *srv) skill(ctx context.Context, v *store.View, name string) (store.Skill, error) {
	if _, err := store.NormalizeKey(name); err != nil {
		return store.Skill{}, skillMissing(name)
	}
	return v.GetSkill(ctx, name)
}

// manifest reads the Manifest with empty collections as [] and {} rather than null (docs/mcp.md).
func (s *srv) manifest(ctx context.Context, v *store.View) (store.Manifest, error) {
	m, err := v.ReadManifest(ctx)
	if err != nil {
		return m, err
	}
	if m.Adapters == nil {
		m.Adapters = map[string]store.Adapter{}
	}
	if m.Team.Members == nil {
		m.Team.Members = []store.Member{}
	}
	return m, nil
}

// state is the ActiveState (store.GetState), with updated_at null while the state was never set.
func (s *srv) state(ctx context.Context, v *store.View) (activeState, error) {
	st, err := v.GetState(ctx)
	if err != nil {
		return activeState{}, err
	}
	return activeStateOf(st), nil
}

// activityItem is an entry of context://activity: exactly its fields (the team pulse fields are served
// by get_project_context).
type activityItem struct {
	Member    string `json:"member"`
	Agent     string `json:"agent"`
	Machine   string `json:"machine"`
	Task      string `json:"task"`
	IssueRef  string `json:"issue_ref"`
	Status    string `json:"status"`
	UpdatedAt string `json:"updated_at"`
	Stale     bool   `json:"stale"`
}

// activity is context://activity: every entry, stale ones flagged (the 48-hour rule, store.IsStale).
func (s *srv) activity(ctx context.Context, v *store.View) ([]activityItem, error) {
	as, err := v.ListActivity(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]activityItem, 0, len(as))
	for _, a := range as {
		out = append(out, activityItem{a.Member, a.Agent, a.Machine, a.Task, a.IssueRef, a.Status, a.UpdatedAt, a.Stale})
	}
	return out, nil
}

// summary is context://summary (store.Summary).
func (s *srv) summary(ctx context.Context, v *store.View) (store.ProjectSummary, error) {
	sum, err := v.Summary(ctx)
	if sum.Blockers == nil {
		sum.Blockers = []string{}
	}
	return sum, err
}
