package hosts_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
)

// decodeStd decodes the first JSON value of data into a Wire as the hook
// did with encoding/json's Decoder: a member of another type is left out,
// the rest kept.
func decodeStd(data []byte) (*hosts.Wire, error) {
	var w hosts.Wire
	err := json.NewDecoder(bytes.NewReader(data)).Decode(&w)
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// wireCases are payloads of every kind DecodeWire must read as
// encoding/json does.
var wireCases = []string{
	`{}`,
	`null`,
	`  {"session_id":"s","hook_event_name":"PostToolUse"}  trailing`,
	`{"session_id":"s\u00e9\n\"q\"","prompt":"caf\u00e9 \ud83d\ude00 \\path"}`,
	`{"session_id":"invalid \xff utf8"}`,
	`{"tool_input":{"a":[1,2.5e-3,{"b":null}],"c":true},"tool_response":"text","error":null,"timestamp":1732000000000}`,
	`{"duration_ms":12,"is_interrupt":true,"stop_hook_active":false}`,
	`{"duration_ms":12.5,"is_interrupt":"yes","session_id":42,"prompt":"kept"}`,
	`{"duration_ms":"12","tool_name":["x"],"cwd":{"a":1},"reason":null}`,
	`{"workspace_roots":["/a","/b"]}`,
	`{"workspace_roots":["/a",7,null,"/d"]}`,
	`{"workspace_roots":[]}`,
	`{"workspace_roots":null}`,
	`{"workspace_roots":"/a"}`,
	`{"Session_ID":"folded","HOOK_EVENT_NAME":"Stop","SessionId":"camel"}`,
	`{"session_id":"first","session_id":"second","tool_input":[1],"tool_input":{"k":"v"}}`,
	`{"unknown":{"deep":[[[[{"x":"y"}]]]]},"session_id":"s"}`,
	`{"sessionId":"c","hookEventName":"PostToolUse","toolName":"edit","toolArgs":{"p":1},"toolResult":"ok","tool_result":"r"}`,
	`{"conversation_id":"c","generation_id":"g","cursor_version":"1","command":"ls","output":"o","file_path":"f","edits":[],"result_json":"{}","tool_output":1,"text":"t","status":"s","error_message":"e"}`,
	`{"trajectory_id":"t","execution_id":"e","agent_action_name":"post_run_command","tool_info":{"command_line":"ls"}}`,
	`{"turn_id":"t","prompt_response":"p","prompt_id":"i","permission_mode":"m","agent_id":"a","agent_type":"b","source":"s","model":"m","transcript_path":"/t","last_assistant_message":"l","tool_use_id":"u"}`,
	`["not","an","object"]`,
	`"a string"`,
	`12`,
	`true`,
	`{"session_id":"s",}`,
	`{"session_id" "s"}`,
	`{"session_id":"s"`,
	`{"session_id":"s`,
	`{"a":01}`,
	`{"a":1.}`,
	`{"a":-}`,
	`{"a":tru}`,
	`{"a":"\x01"}`,
	`{"a":"\q"}`,
	`{"a":"\u12"}`,
	``,
	`   `,
	`{"a":[1,2,]}`,
	`{"a":{"b":1,}}`,
}

// DecodeWire reads every payload as encoding/json's Decoder does: the same
// Wire, or an error where it errs.
func TestDecodeWireAsEncodingJSON(t *testing.T) {
	inputs := wireCases
	files, _ := filepath.Glob(filepath.Join("..", "*", "testdata", "*", "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(data))
	}
	if len(files) < 50 {
		t.Fatalf("only %d recorded payloads found", len(files))
	}
	for _, in := range inputs {
		checkDecodeWire(t, []byte(in))
	}
}

func checkDecodeWire(t *testing.T, data []byte) {
	t.Helper()
	want, werr := decodeStd(data)
	got, n, err := hosts.DecodeWire(data)
	name := string(data)
	if len(name) > 80 {
		name = name[:80] + "…"
	}
	if (err != nil) != (werr != nil) {
		t.Fatalf("%q: DecodeWire err %v, encoding/json err %v", name, err, werr)
	}
	if err != nil {
		eof := errors.Is(werr, io.EOF) || errors.Is(werr, io.ErrUnexpectedEOF)
		if eof != errors.Is(err, hosts.ErrIncomplete) {
			t.Errorf("%q: DecodeWire err %v, encoding/json err %v: not both about the end of the input", name, err, werr)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Errorf("%q:\n got %s\nwant %s", name, gb, wb)
	}
	if n > len(data) || strings.TrimSpace(string(data[:n])) == "" {
		t.Errorf("%q: used %d bytes", name, n)
	}
}

// FuzzDecodeWire: whatever the input, DecodeWire and encoding/json agree.
func FuzzDecodeWire(f *testing.F) {
	for _, c := range wireCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeWire(t, data)
	})
}
