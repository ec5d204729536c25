package hooks

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

var blockInputs = []string{
	"",
	"#!/bin/sh\n",
	"#!/bin/sh\necho hi\n",
	"#!/bin/sh\necho hi",
	"#!/bin/bash\nset -e\nexec foo \"$@\"\n",
	"#!/bin/sh\nexec foo \\\n  --bar \"$@\"\n\n# trailing comment\n",
	"#!/bin/sh\nexit 0",
	"#!/bin/sh\nif true; then\n  exit 0\nfi\n",
	"echo no shebang\n\n\n",
	"#!/bin/sh\r\necho crlf\r\n",
}

func TestAddRemoveRoundTrip(t *testing.T) {
	for _, in := range blockInputs {
		for _, h := range AllHooks {
			out, err := AddBlock([]byte(in), h)
			if err != nil {
				t.Fatalf("%q: %v", in, err)
			}
			again, err := AddBlock(out, h)
			if err != nil || !bytes.Equal(again, out) {
				t.Errorf("%q: second AddBlock differs:\n%s", in, again)
			}
			back, remove, err := RemoveBlocks(out)
			if err != nil || remove || string(back) != in {
				t.Errorf("%q: RemoveBlocks = %q %v %v", in, back, remove, err)
			}
			if strings.Count(string(out), BeginMarker) != 1 {
				t.Errorf("%q: %d blocks", in, strings.Count(string(out), BeginMarker))
			}
		}
	}
}

func TestInsertBeforeFinalCommand(t *testing.T) {
	cases := map[string]string{
		"#!/bin/sh\nexec foo \"$@\"\n":                  "exec foo",
		"#!/bin/sh\nexec foo \\\n  --bar\n# c\n\n":      "exec foo",
		"#!/bin/sh\necho a\nexit 0\n":                   "exit 0",
		"#!/bin/sh\nexec >&2\necho a\n":                 "", // exec not final: append
		"#!/bin/sh\nif x; then\n  exec a\nfi\n":         "",
		"#!/bin/sh\nexecutable_thing\n":                 "",
		"#!/bin/sh\n  exec npx --no -- commitlint\n":    "  exec npx",
		"#!/bin/sh\necho a\nexit\n":                     "exit\n",
		"#!/bin/sh\n. \"$(dirname \"$0\")/_/husky.sh\"": "",
	}
	for in, before := range cases {
		out, err := AddBlock([]byte(in), PostMerge)
		if err != nil {
			t.Fatal(err)
		}
		s := string(out)
		end := strings.Index(s, EndMarker+"\n")
		if before == "" {
			if !strings.HasSuffix(strings.TrimRight(s, "\n"), EndMarker) {
				t.Errorf("%q: block not appended:\n%s", in, s)
			}
			continue
		}
		if end < 0 || !strings.HasPrefix(s[end+len(EndMarker)+1:], before) {
			t.Errorf("%q: block not right before %q:\n%s", in, before, s)
		}
	}
}

func TestBrokenMarkers(t *testing.T) {
	for _, in := range []string{
		"#!/bin/sh\n" + BeginMarker + "\necho\n",
		"#!/bin/sh\n" + EndMarker + "\n",
		BeginMarker + "\n" + BeginMarker + "\n" + EndMarker + "\n",
	} {
		if _, err := AddBlock([]byte(in), PostMerge); err == nil {
			t.Errorf("AddBlock(%q) accepted broken markers", in)
		}
		if _, _, err := RemoveBlocks([]byte(in)); err == nil {
			t.Errorf("RemoveBlocks(%q) accepted broken markers", in)
		}
	}
}

func TestNewFileRemovedWhole(t *testing.T) {
	for _, h := range AllHooks {
		out, remove, err := RemoveBlocks(NewFile(h))
		if err != nil || !remove || out != nil {
			t.Errorf("%s: %q %v %v", h, out, remove, err)
		}
		if again, _ := AddBlock(NewFile(h), h); !bytes.Equal(again, NewFile(h)) {
			t.Errorf("%s: AddBlock on a new file changed it", h)
		}
	}
}

func TestBlockIsValidShell(t *testing.T) {
	for _, sh := range []string{"sh", "bash", "dash"} {
		if _, err := exec.LookPath(sh); err != nil {
			continue
		}
		for _, h := range AllHooks {
			if out, err := exec.Command(sh, "-n", "-c", string(NewFile(h))).CombinedOutput(); err != nil {
				t.Errorf("%s -n %s: %v %s", sh, h, err, out)
			}
		}
	}
}

func TestNotShell(t *testing.T) {
	for in, shell := range map[string]bool{
		"":                                true,
		"echo\n":                          true,
		"#!/bin/sh\n":                     true,
		"#!/usr/bin/env bash\n":           true,
		"#!/usr/bin/env -S bash -e\n":     true,
		"#!/bin/zsh -f\n":                 true,
		"#!/usr/bin/env python3\n":        false,
		"#!/usr/bin/perl\n":               false,
		"\x7fELF\x02\x01\x01\x00\x00\x00": false,
	} {
		if got := notShell([]byte(in)) == ""; got != shell {
			t.Errorf("notShell(%q) shell=%v, want %v", in, got, shell)
		}
	}
}

// FuzzAddRemove: for any file without ctx's markers, Install then Uninstall
// gives back the same bytes, and Install is idempotent.
func FuzzAddRemove(f *testing.F) {
	for _, in := range blockInputs {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if strings.Contains(in, ">>> ctx hooks >>>") || strings.Contains(in, "<<< ctx hooks <<<") {
			return
		}
		out, err := AddBlock([]byte(in), PostCheckout)
		if err != nil {
			t.Fatal(err)
		}
		again, err := AddBlock(out, PostCheckout)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q", again)
		}
		back, remove, err := RemoveBlocks(out)
		if err != nil || remove || string(back) != in {
			t.Fatalf("round trip %q -> %q -> %q %v %v", in, out, back, remove, err)
		}
	})
}
