// Package redacttest plants secrets of many shapes in text, for the tests of redaction and of sharing
// sessions (docs/security.md "Redaction of shared sessions"). The secrets are built at run time from a
// fixed-seed generator, so that no source file holds a string a secret scanner would flag.
package redacttest

import (
	"math/rand/v2"
	"strings"
)

// Plant is one planted secret: Line is how it appears in a transcript, Secret the part that must never
// be shared.
type Plant struct {
	Kind   string
	Line   string
	Secret string
}

const (
	alnum = "ABCDEFGHJKLMNPQRSTUVWXYZabcdeghijkmnopqrstuvwxyz23456789"
	upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64   = alnum + "+/"
)

// Gen returns n characters of alphabet from a generator seeded with seed.
func Gen(seed uint64, n int, alphabet string) string {
	r := rand.New(rand.NewPCG(seed, 11))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// Plants returns the planted secrets: 22 kinds, each with a secret that occurs nowhere else.
func Plants() []Plant {
	pem := func() string {
		var body []string
		for i := range 6 {
			body = append(body, Gen(uint64(500+i), 64, b64))
		}
		return "-----BEGIN " + "OPENSSH PRIVATE KEY-----\n" + strings.Join(body, "\n") + "\n-----END OPENSSH PRIVATE KEY-----"
	}()
	jwt := "eyJ" + Gen(17, 30, alnum) + ".eyJ" + Gen(18, 40, alnum) + "." + Gen(19, 43, alnum)
	p := []Plant{
		{Kind: "openai-legacy", Secret: "sk-" + Gen(1, 48, alnum)},
		{Kind: "openai-project", Secret: "sk-proj-" + Gen(2, 56, alnum)},
		{Kind: "anthropic", Secret: "sk-ant-api03-" + Gen(3, 93, alnum) + "AA"},
		{Kind: "github-classic", Secret: "ghp_" + Gen(4, 36, alnum)},
		{Kind: "github-oauth", Secret: "gho_" + Gen(5, 36, alnum)},
		{Kind: "github-server", Secret: "ghs_" + Gen(6, 36, alnum)},
		{Kind: "github-fine-grained", Secret: "github_pat_" + Gen(7, 82, alnum)},
		{Kind: "aws-access-key-id", Secret: "AKIA" + Gen(8, 16, upper)},
		{Kind: "aws-secret-access-key", Secret: Gen(9, 38, b64) + "9x"},
		{Kind: "google-api-key", Secret: "AIza" + Gen(10, 35, alnum)},
		{Kind: "slack-bot", Secret: "xoxb-" + "2931847561-4718264531-" + Gen(11, 24, alnum)},
		{Kind: "stripe-live", Secret: "sk_live_" + Gen(12, 24, alnum)},
		{Kind: "jwt", Secret: jwt},
		{Kind: "bearer-header", Secret: Gen(13, 40, alnum)},
		{Kind: "private-key", Secret: Gen(500, 64, b64)},
		{Kind: "env-password", Secret: "hunter2-" + Gen(14, 10, alnum)},
		{Kind: "env-api-key", Secret: Gen(15, 32, alnum)},
		{Kind: "url-credentials", Secret: "p4ss-" + Gen(16, 14, alnum)},
		{Kind: "gitlab", Secret: "glpat-" + Gen(20, 20, alnum)},
		{Kind: "npm", Secret: "npm_" + Gen(21, 36, alnum)},
		{Kind: "huggingface", Secret: "hf_" + Gen(22, 34, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")},
		{Kind: "json-client-secret", Secret: Gen(23, 28, alnum)},
	}
	for i := range p {
		s := p[i].Secret
		switch p[i].Kind {
		case "aws-secret-access-key":
			p[i].Line = "aws_secret_access_key = " + s
		case "bearer-header":
			p[i].Line = "curl -H 'Authorization: Bearer " + s + "' https://api.example.com/v1"
		case "private-key":
			p[i].Line = "cat ~/.ssh/id_ed25519\n" + pem
		case "env-password":
			p[i].Line = "DB_PASSWORD=" + s
		case "env-api-key":
			p[i].Line = "export MY_SERVICE_API_KEY=" + s
		case "url-credentials":
			p[i].Line = "git remote add backup https://ada:" + s + "@git.example.com/team/repo.git"
		case "json-client-secret":
			p[i].Line = `{"client_id": "app", "client_secret": "` + s + `"}`
		case "slack-bot":
			p[i].Line = "SLACK=" + s
		default:
			p[i].Line = "the key is " + s + " (do not share)"
		}
	}
	return p
}
