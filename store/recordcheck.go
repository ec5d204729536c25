package store

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// recordSchemaFS holds the JSON Schemas of the JSON records of the branch (docs/format.md "Records"):
// the fields ctx reads and their types; unknown fields are allowed (readers keep them).
//
//go:embed schemas/*.json
var recordSchemaFS embed.FS

// recordKind is a kind of JSON record the store reads: its schema and the reader's own decoding.
type recordKind struct {
	schema string               // file name under schemas/
	decode func(b []byte) error // the reader's decoding (the record type of the kind)
	// The schema, compiled on first use, never at start-up (docs/architecture.md "Start-up"): the kinds
	// are package-level literals, which allocate nothing at init (cmd/ctx TestInitIsLight).
	once     sync.Once
	compiled *jsonschema.Schema
	err      error
}

// comp returns the kind's compiled schema (compileRecordSchema, once).
func (k *recordKind) comp() (*jsonschema.Schema, error) {
	k.once.Do(func() { k.compiled, k.err = compileRecordSchema(k.schema) })
	return k.compiled, k.err
}

func decodeAs[T any](b []byte) error { var v T; return json.Unmarshal(b, &v) }

var (
	stateRecord    = &recordKind{schema: "state.json", decode: decodeAs[ActiveState]}
	sessionRecord  = &recordKind{schema: "session.json", decode: decodeAs[SessionSummary]}
	privateRecord  = &recordKind{schema: "private_names.json", decode: decodeAs[sessionNames]}
	activityRecord = &recordKind{schema: "activity.json", decode: decodeAs[ActivityEntry]}
	proposalRecord = &recordKind{schema: "proposal.json", decode: decodeAs[SkillProposal]}
)

// recordKindOf is the kind of record at the layout path p, nil for a file that is no such record (the
// manifest and conflict records have checks of their own: manifestProblem, conflictRecordProblem).
func recordKindOf(p string) *recordKind {
	if !strings.HasSuffix(p, ".json") {
		return nil
	}
	parts := strings.Split(p, "/")
	switch {
	case p == StatePath:
		return stateRecord
	case len(parts) == 3 && parts[0] == HistoryDir && parts[1] == ".private":
		return privateRecord
	case parts[0] == HistoryDir && (len(parts) == 2 || len(parts) == 4):
		return sessionRecord
	case parts[0] == "activity" && len(parts) >= 2:
		return activityRecord
	case len(parts) == 4 && parts[0] == "skills" && parts[2] == SkillProposalsDir:
		return proposalRecord
	}
	return nil
}

// isRecordPath reports whether p is a JSON record that RecordProblem checks.
func isRecordPath(p string) bool { return recordKindOf(p) != nil }

// maxRecordDepth bounds the nesting of a record's JSON: the deepest field ctx reads is at depth 3
// (activity's intent.paths[i]); anything far deeper is hostile (Go's decoder stops at 10,000 levels).
const maxRecordDepth = 64

// RecordProblem says why the JSON record at the layout path p (state.json, a session record and its
// private names, an activity entry, a skill proposal) is malformed, or "" when it is none of these or
// reads: it must be UTF-8, one JSON object without repeated keys nor more than 64 levels of nesting,
// whose fields have the types of docs/format.md "Records" (its schema under store/schemas/), and decode
// as its reader decodes it. The reason names the field: "at '/blockers/0': got number, want string".
func RecordProblem(p string, b []byte) string {
	k := recordKindOf(p)
	if k == nil {
		return ""
	}
	if !utf8.Valid(b) {
		return "not UTF-8 text"
	}
	if reason := jsonShape(b); reason != "" {
		return reason
	}
	sch, err := k.comp()
	if err != nil {
		return "schema " + k.schema + ": " + err.Error() // a programming error; TestRecordSchemasCompile
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return "not JSON: " + err.Error()
	}
	if err := sch.Validate(doc); err != nil {
		return schemaReason(err)
	}
	if err := k.decode(b); err != nil {
		return err.Error()
	}
	return ""
}

// jsonShape checks b is one JSON object, with no key repeated in one object (which readers would each
// take differently: Go keeps the last, others the first) and at most maxRecordDepth levels deep.
func jsonShape(b []byte) string {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	type frame struct {
		obj     bool
		keys    map[string]bool
		wantKey bool
		path    string
		key     string // an object's current key
		idx     int    // an array's next index
	}
	var stack []*frame
	values := 0
	for {
		t, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "not JSON: " + err.Error()
		}
		dl, isDelim := t.(json.Delim)
		if len(stack) == 0 {
			if values++; values > 1 {
				return "more than one JSON value"
			}
			if !isDelim || dl != '{' {
				return "not a JSON object"
			}
			stack = append(stack, &frame{obj: true, keys: map[string]bool{}, wantKey: true})
			continue
		}
		top := stack[len(stack)-1]
		if isDelim && (dl == '}' || dl == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if top.obj && top.wantKey {
			key, _ := t.(string)
			if top.keys[key] {
				return fmt.Sprintf("at '%s/%s': the key %q appears twice", top.path, key, key)
			}
			top.keys[key], top.key, top.wantKey = true, key, false
			continue
		}
		// A value: of top's current key, or top's next item.
		path := top.path + "/" + top.key
		if top.obj {
			top.wantKey = true
		} else {
			path = fmt.Sprintf("%s/%d", top.path, top.idx)
			top.idx++
		}
		if isDelim { // '{' or '['
			if len(stack) >= maxRecordDepth {
				return fmt.Sprintf("at '%s': nested more than %d levels deep", path, maxRecordDepth)
			}
			stack = append(stack, &frame{obj: dl == '{', keys: map[string]bool{}, wantKey: dl == '{', path: path})
		}
	}
	if values == 0 {
		return "empty: not a JSON object"
	}
	return ""
}

// schemaReason writes a schema validation error as "at '/field': what" for each offending field.
func schemaReason(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var msgs []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		what := e.ErrorKind.LocalizedString(recordPrinter())
		msgs = append(msgs, fmt.Sprintf("at '/%s': %s", strings.Join(e.InstanceLocation, "/"), what))
	}
	walk(ve)
	sort.Strings(msgs)
	out := msgs[:0]
	for i, m := range msgs {
		if i == 0 || m != msgs[i-1] {
			out = append(out, m)
		}
	}
	return strings.Join(out, "; ")
}

// recordPrinter words a schema's findings; made on first use, not at start-up (cmd/ctx TestInitIsLight).
var recordPrinter = sync.OnceValue(func() *message.Printer { return message.NewPrinter(language.English) })

// recordSchemasCompiled counts compileRecordSchema's calls (tests check that start-up compiles none).
var recordSchemasCompiled sync.Map

// compileRecordSchema compiles an embedded record schema, trusting it (no metaschema validation, which
// would compile the drafts' metaschemas first: TestRecordSchemasCompile checks them instead).
func compileRecordSchema(name string) (*jsonschema.Schema, error) {
	return compileRecordSchemaDoc(name, false)
}

func compileRecordSchemaDoc(name string, checkMeta bool) (*jsonschema.Schema, error) {
	recordSchemasCompiled.Store(name, true)
	raw, err := recordSchemaFS.ReadFile("schemas/" + name)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	if !checkMeta {
		c.SkipMetaValidation()
	}
	url := "mem:///records/" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return c.Compile(url)
}
