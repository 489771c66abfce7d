package hook

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// encodeParams gives the JSON value json.Marshal gives, for tool events of
// every shape (empty fields left out, text that needs escaping, invalid
// UTF-8, a time), and knows every field of memory.ToolUseParams.
func TestEncodeParamsAsJSONMarshal(t *testing.T) {
	if n := reflect.TypeFor[memory.ToolUseParams]().NumField(); n != toolUseFields {
		t.Fatalf("memory.ToolUseParams has %d fields, encodeParams knows %d: teach it the new ones", n, toolUseFields)
	}
	cases := []any{
		&memory.ToolUseParams{ContentSessionID: "s", Cwd: "/p", ToolName: "Bash"},
		&memory.ToolUseParams{ContentSessionID: "s\"q\\ \n\t\r\x01 <b>&", Cwd: "/p/é/\u2028/\u2029/\xff", ToolName: "Edit",
			ToolInput: json.RawMessage(`{"file_path":"/p/a.go","old_string":"a","new_string":"<b>"}`), ToolResponse: json.RawMessage(`"text"`),
			ToolUseID: "toolu_1", Platform: "codex", Source: memory.SourceEditor, At: time.Date(2026, 11, 29, 10, 0, 0, 123456789, time.UTC), EventKey: "k"},
		&memory.ToolUseParams{ContentSessionID: "s", ToolName: "Read", ToolResponse: json.RawMessage(`{"a":[1,2.5,null,true]}`), At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))},
		&memory.StopParams{ContentSessionID: "s", LastAssistantMessage: "done"},
		&memory.SessionEndParams{ContentSessionID: "s", Reason: "exit"},
	}
	for _, c := range cases {
		got, err := encodeParams(c)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(c)
		if !json.Valid(got) {
			t.Fatalf("invalid JSON: %s", got)
		}
		var g, w any
		json.Unmarshal(got, &g)
		json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("encodeParams:\n got %s\nwant %s", got, want)
		}
	}
}
