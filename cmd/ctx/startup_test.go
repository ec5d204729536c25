package main_test

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// initLine is one line of GODEBUG=inittrace=1: "init <package> @<t> ms, <t> ms clock, <n> bytes, <n> allocs".
var initLine = regexp.MustCompile(`(?m)^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes`)

// The binary's package initialisation does no heavy work: santhosh-tekuri/jsonschema (linked through
// mcp-go) compiles its metaschemas on first use, not in init (the go.mod replace with
// third_party/santhosh-tekuri-jsonschema; 1.7 MB allocated in init before), and no package allocates more
// than 512 KiB before main (docs/architecture.md "Start-up").
func TestInitIsLight(t *testing.T) {
	cmd := exec.Command(ctxBin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ctx --version: %v\n%s", err, out)
	}
	seen := false
	for _, m := range initLine.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[2])
		if m[1] == "github.com/santhosh-tekuri/jsonschema/v6" {
			seen = true
			if n > 64<<10 {
				t.Errorf("%s allocates %d bytes at init: the metaschemas compile before main again", m[1], n)
			}
		}
		if n > 512<<10 {
			t.Errorf("package %s allocates %d bytes at init", m[1], n)
		}
	}
	if !seen {
		t.Logf("santhosh-tekuri/jsonschema is no longer linked:\n%s", out)
	}
}
