package vector_test

import (
	"slices"
	"testing"

	"github.com/mnemo-dev/mnemo/vector"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    []string // terms that must be there
		notWant []string // terms that must not
	}{
		{"camelCase split and kept whole", "handleLoginRequest", []string{"handleloginrequest", "handl", "login", "request"}, nil},
		{"snake_case split and kept whole", "retry_with_backoff", []string{"retry_with_backoff", "retry", "backoff"}, []string{"with"}},
		{"kebab-case", "billing-api", []string{"billing-api", "bill", "api"}, nil},
		{"path split on / and . and kept whole", "see src/auth/sessionStore.go now",
			[]string{"src/auth/sessionstore.go", "src", "auth", "sessionstore.go", "sessionstore", "session", "stor", "go", "see", "now"}, nil},
		{"leading ./ and trailing dot trimmed", "edit ./scripts/deploy.sh.", []string{"scripts/deploy.sh", "deploy.sh", "deploy", "sh"}, []string{"./scripts/deploy.sh", "scripts/deploy.sh."}},
		{"rust error code", "error[E0425]: cannot find value", []string{"e0425", "error", "find", "valu"}, nil},
		{"errno", "open config.yaml: ENOENT", []string{"enoent", "config.yaml", "config", "yaml", "open"}, nil},
		{"HTTP status", "HTTP 503 from upstream", []string{"http", "503", "upstream"}, nil},
		{"SQLSTATE", "SQLSTATE 23505", []string{"sqlstate", "23505"}, nil},
		{"acronym followed by a word", "HTTPServer", []string{"httpserver", "http", "server"}, nil},
		{"plural acronym is one word", "URLs", []string{"urls"}, []string{"ur", "ls"}},
		{"letters and digits", "utf8 p99", []string{"utf8", "utf", "8", "p99", "99"}, []string{"p"}},
		{"inflections meet", "tests testing tested test", []string{"test"}, []string{"tests", "testing", "tested"}},
		{"e-final words meet", "cache caches cached caching", []string{"cach"}, []string{"cache", "caches"}},
		{"doubled consonants", "logging logged log", []string{"log"}, []string{"logg"}},
		{"ies plural", "retries libraries", []string{"retry", "library"}, nil},
		{"ss and us kept", "class process status", []string{"class", "process", "status"}, []string{"clas", "proces", "statu"}},
		{"stop words and single letters dropped", "the cache is a b", []string{"cach"}, []string{"the", "is", "a", "b"}},
		{"upper-case words are not stemmed", "EACCES", []string{"eacces"}, []string{"eacce"}},
		{"non-ASCII words", "Café naïve Größe", []string{"café", "naïve", "größe"}, nil},
		{"C++ scope", "std::vector", []string{"std::vector", "std", "vector"}, nil},
		{"Windows path", `C:\Users\dev\app.ts`, []string{`c:\users\dev\app.ts`, "user", "dev", "app.ts", "app", "ts"}, []string{"c:", "c"}},
		{"empty", "", nil, nil},
		{"punctuation only", "--- !!! ...", nil, []string{"-", "!", "."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := vector.Terms(tt.text)
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("Terms(%q) = %q, missing %q", tt.text, got, w)
				}
			}
			for _, w := range tt.notWant {
				if slices.Contains(got, w) {
					t.Errorf("Terms(%q) = %q, should not hold %q", tt.text, got, w)
				}
			}
			if tt.want == nil && tt.notWant != nil && len(got) > 0 {
				t.Errorf("Terms(%q) = %q, want none", tt.text, got)
			}
		})
	}
}

func TestTermsOncePerToken(t *testing.T) {
	// A compound whose parts repeat ("go/go.go") counts each term once per
	// token, so term frequencies are not inflated by splitting.
	got := vector.Terms("go/go.go")
	n := 0
	for _, term := range got {
		if term == "go" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("Terms(go/go.go) = %q: %d times \"go\", want 1", got, n)
	}
}
