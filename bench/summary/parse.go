package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// result is one line of the Go benchmark format: its name without the "Benchmark" prefix (and without
// go test's -GOMAXPROCS suffix), the iterations and the value of each unit.
type result struct {
	name    string
	n       int
	metrics map[string]float64
}

// runInfo is what the make bench recipe records around the tools' outputs: "make-bench: start EPOCH
// LOAD1 LOAD5 LOAD15 ..." and "make-bench: end EPOCH LOAD1 LOAD5 LOAD15" (Unix seconds, /proc/loadavg),
// and "make-bench: vars NAME=VALUE ..." (the variables of the run).
type runInfo struct {
	start, end         int64  // Unix seconds, 0 when absent
	loadStart, loadEnd string // "1.02 0.88 0.75"
	vars               string
}

// goSuffix is go test's -GOMAXPROCS suffix of a benchmark's name ("BenchmarkWriteTool/10000-2").
var goSuffix = regexp.MustCompile(`-[0-9]+$`)

// parse reads a log of `make bench` and returns its results by name (a later line of a name replaces an
// earlier one) and the run's markers. A line that starts with "Benchmark" but is not a result (go test's
// "BenchmarkX" line when a benchmark fails or logs, a name alone while it runs) is skipped; a result with
// a malformed value is an error. Names inside a go test block (between its "pkg:" line and its "ok" or
// "FAIL" line) lose their -GOMAXPROCS suffix.
func parse(r io.Reader) (map[string]result, runInfo, error) {
	res := map[string]result{}
	var info runInfo
	inGoTest := false
	br := bufio.NewReaderSize(r, 64*1024)
	for lineNo := 1; ; lineNo++ {
		line, long, err := readLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, info, fmt.Errorf("read the log: %w", err)
		}
		if long {
			continue // a tool's log line over maxLine bytes: never a result or a marker
		}
		line = strings.TrimRight(line, "\r")
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case strings.HasPrefix(line, "pkg: "):
			inGoTest = true
		case f[0] == "ok" || f[0] == "FAIL" || f[0] == "PASS":
			inGoTest = false
		case f[0] == "make-bench:" && len(f) >= 3:
			if err := info.marker(f[1:]); err != nil {
				return nil, info, fmt.Errorf("line %d: %w", lineNo, err)
			}
		case strings.HasPrefix(f[0], "Benchmark") && len(f) >= 2:
			n, err := strconv.Atoi(f[1])
			if errors.Is(err, strconv.ErrRange) || err == nil && n <= 0 {
				return nil, info, fmt.Errorf("line %d: %s: iterations %q out of range", lineNo, f[0], f[1])
			}
			if err != nil || len(f)%2 != 0 {
				continue // not a result line (a benchmark's log or a name alone)
			}
			name := strings.TrimPrefix(f[0], "Benchmark")
			if inGoTest {
				name = goSuffix.ReplaceAllString(name, "")
			}
			m := map[string]float64{}
			for i := 2; i < len(f); i += 2 {
				v, err := strconv.ParseFloat(f[i], 64)
				if err != nil {
					return nil, info, fmt.Errorf("line %d: %s: value %q of %s: %w", lineNo, f[0], f[i], f[i+1], err)
				}
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					// Every figure of make bench is a count, a time, a size or a rate: finite and not negative.
					return nil, info, fmt.Errorf("line %d: %s: value %q of %s is not a finite figure >= 0", lineNo, f[0], f[i], f[i+1])
				}
				m[f[i+1]] = v
			}
			res[name] = result{name: name, n: n, metrics: m}
		}
	}
	return res, info, nil
}

// maxLine is the longest log line parse reads (bytes): result and marker lines are far shorter, and a
// tool may log lines of any length (a benchmark's output).
const maxLine = 64 * 1024

// readLine returns the next line of br without its "\n"; long is true (and line "") when the line is over
// maxLine bytes, whose rest is read and dropped. err is io.EOF after the last line.
func readLine(br *bufio.Reader) (line string, long bool, err error) {
	var b []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			if err == io.EOF && (b != nil || long) {
				return string(b), long, nil
			}
			return "", false, err
		}
		if !long {
			if len(b)+len(chunk) > maxLine {
				long, b = true, nil
			} else {
				b = append(b, chunk...)
			}
		}
		if !isPrefix {
			if long {
				return "", true, nil
			}
			return string(b), false, nil
		}
	}
}

// marker records one "make-bench:" line (its fields after the prefix).
func (info *runInfo) marker(f []string) error {
	switch f[0] {
	case "start", "end":
		t, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return fmt.Errorf("make-bench %s: time %q: %w", f[0], f[1], err)
		}
		load := strings.Join(f[2:min(len(f), 5)], " ")
		if f[0] == "start" {
			info.start, info.loadStart = t, load
		} else {
			info.end, info.loadEnd = t, load
		}
	case "vars":
		info.vars = strings.Join(f[1:], " ")
	}
	return nil
}

// field is the value of key in a result name's "key=value" parts ("" when absent).
func field(name, key string) string {
	for _, part := range strings.Split(name, "/") {
		if k, v, ok := strings.Cut(part, "="); ok && k == key {
			return v
		}
	}
	return ""
}
