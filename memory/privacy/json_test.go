package privacy_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory/privacy"
)

func TestCleanJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty object", `{}`, `{}`},
		{"empty array", ` [ ] `, `[]`},
		{"string", `"a <private>b</private> c"`, `"a c"`},
		{"value", `{"content":"<private>secret</private> public"}`, `{"content":"public"}`},
		{"nested", `{"a":{"b":[{"c":"x <private>y</private>"}]},"d":["<system-reminder>r</system-reminder>ok"]}`,
			`{"a":{"b":[{"c":"x"}]},"d":["ok"]}`},
		{"key", `{"<private>k</private>name":1}`, `{"name":1}`},
		{"key order kept", `{"z":1,"a":2,"m":3}`, `{"z":1,"a":2,"m":3}`},
		{"numbers as written", `[1.50,1e3,-0,12345678901234567890123,0.1]`, `[1.50,1e3,-0,12345678901234567890123,0.1]`},
		{"literals", `[true,false,null]`, `[true,false,null]`},
		{"escaped tag", `{"s":"\u003cprivate\u003esecret\u003c/private\u003e left"}`, `{"s":"left"}`},
		{"escapes kept valid", `{"s":"quote \" back \\ nl \n tab \t ctl \u0001 <b>"}`, `{"s":"quote \" back \\ nl \n tab \t ctl \u0001 <b>"}`},
		{"unicode", `{"s":"héllo 世界 \u2028 <private>x</private>"}`, `{"s":"héllo 世界 \u2028"}`},
		{"tag across strings", `{"a":"keep <private>open","b":"still </private>after"}`, `{"a":"keep","b":"still after"}`},
		{"secret in text", `{"output":"export GITHUB_TOKEN=abc123def456ghi"}`, `{"output":"export GITHUB_TOKEN=[REDACTED:token]"}`},
		{"secret by key", `{"env":{"DB_PASSWORD":"hunter2hunter2","DB_USER":"app"}}`, `{"env":{"DB_PASSWORD":"[REDACTED:password]","DB_USER":"app"}}`},
		{"authorization by key", `{"headers":{"Authorization":"Bearer abc123def456ghi"}}`, `{"headers":{"Authorization":"Bearer [REDACTED:bearer-token]"}}`},
		{"short value by key", `{"password":"","token":"none"}`, `{"password":"","token":"none"}`},
		{"key not redacted", `{"password":1}`, `{"password":1}`},
		{"tool response", `{"tool_name":"Read","tool_response":{"file":{"content":"line1\n<system-reminder>\nCLAUDE.md\n</system-reminder>\nline2"}}}`,
			`{"tool_name":"Read","tool_response":{"file":{"content":"line1\nline2"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := privacy.CleanJSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("CleanJSON(%s): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("CleanJSON(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("CleanJSON(%s) = %s: not valid JSON", tt.in, got)
			}
		})
	}
}

func TestCleanJSONInvalid(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `1 2`, `{} {}`, `nul`, `"unterminated`,
		`{"truncated":`, "not json at all", `{'a':1}`, "\"bad \x01 control\"",
	} {
		t.Run(in, func(t *testing.T) {
			got, err := privacy.CleanJSON([]byte(in))
			if !errors.Is(err, privacy.ErrInvalidJSON) {
				t.Errorf("CleanJSON(%q) = %q, %v; want ErrInvalidJSON", in, got, err)
			}
		})
	}
}

// TestCleanJSONLarge checks a large document keeps its shape.
func TestCleanJSONLarge(t *testing.T) {
	var items []map[string]any
	for i := range 2000 {
		items = append(items, map[string]any{
			"i":    i,
			"text": strings.Repeat("word ", 20) + "<private>hidden</private> tail",
			"list": []any{"a", 1.5, true, nil},
		})
	}
	raw, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	got, err := privacy.CleanJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var back []map[string]any
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("output is not valid JSON: %v", err)
	}
	if len(back) != len(items) {
		t.Fatalf("got %d items, want %d", len(back), len(items))
	}
	for _, it := range back {
		if s := it["text"].(string); strings.Contains(s, "hidden") || !strings.HasSuffix(s, "word tail") {
			t.Fatalf("text = %q", s)
		}
	}
}
