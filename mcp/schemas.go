package mcp

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaFS holds the tools' JSON Schemas: <tool>.input.json for every tool, and get_project_context's input and
// output schemas of get_project_context verbatim (get_project_context.{input,output}.json).
//
//go:embed schemas/*.json
var schemaFS embed.FS

// rawSchema returns an embedded schema file's bytes; a missing file is a programming error.
func rawSchema(name string) json.RawMessage {
	b, err := schemaFS.ReadFile("schemas/" + name)
	if err != nil {
		panic(fmt.Sprintf("mcp: embedded schema %s: %v", name, err))
	}
	return b
}

// schemasCompiled counts compileSchema's calls (tests check that start-up compiles none).
var schemasCompiled atomic.Int64

// compileSchema compiles an embedded schema with santhosh-tekuri/jsonschema (draft 2020-12 from its
// $schema), trusting it: it is not validated against its metaschema, which would compile the drafts'
// metaschemas first (about 7 ms of CPU, a fifth of a `ctx history search` process). The embedded schemas
// are validated against their metaschema by TestEmbeddedSchemasCompile (compileSchemaChecked).
func compileSchema(name string) (*jsonschema.Schema, error) {
	return compileSchemaDoc(name, rawSchema(name), false)
}

// compileSchemaChecked is compileSchema validating the schema against its metaschema first (the tests).
func compileSchemaChecked(name string) (*jsonschema.Schema, error) {
	return compileSchemaDoc(name, rawSchema(name), true)
}

func compileSchemaDoc(name string, raw []byte, checkMeta bool) (*jsonschema.Schema, error) {
	schemasCompiled.Add(1)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	if !checkMeta {
		c.SkipMetaValidation()
	}
	url := "mem:///" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return sch, nil
}

var printer = message.NewPrinter(language.English)

// argError is a tool argument the model can fix: the tool returns it as a tool error (isError).
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func argErrorf(format string, a ...any) error { return &argError{fmt.Sprintf(format, a...)} }

// validateArgs checks a tool's arguments against its input schema. The error names each offending
// field: "invalid arguments: missing property 'key'", "argument 'scope': value must be one of ...".
func validateArgs(sch *jsonschema.Schema, args any) error {
	if args == nil {
		args = map[string]any{}
	}
	// Round-trip through JSON so that numbers and nested values have the types the validator expects.
	b, err := json.Marshal(args)
	if err != nil {
		return argErrorf("invalid arguments: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return argErrorf("invalid arguments: %v", err)
	}
	err = sch.Validate(doc)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
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
		what := e.ErrorKind.LocalizedString(printer)
		if len(e.InstanceLocation) == 0 {
			msgs = append(msgs, what)
			return
		}
		msgs = append(msgs, fmt.Sprintf("argument '%s': %s", strings.Join(e.InstanceLocation, "."), what))
	}
	walk(ve)
	sort.Strings(msgs)
	msgs = dedupe(msgs)
	return argErrorf("invalid arguments: %s", strings.Join(msgs, "; "))
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
