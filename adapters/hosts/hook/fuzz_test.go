package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory/privacy"
)

// The seed corpora are in testdata/fuzz/<target> (real payloads Claude
// Code wrote, and broken ones); run a target with
//
//	go test -run '^$' -fuzz '^FuzzRunHook$' -fuzztime 30s ./adapters/hosts/hook

// decodePayload decodes stdin as the hook does: the first JSON value, a
// field of an unexpected type left empty.
func decodePayload(data []byte) (*hosts.Payload, bool) {
	var p hosts.Payload
	err := json.NewDecoder(bytes.NewReader(data)).Decode(&p)
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
		err = nil
	}
	return &p, err == nil
}

// FuzzRunHook runs the hook on arbitrary stdin, with arbitrary arguments
// (`mnemo-hook --host HOST EVENT`, read by ParseArgs; HOST "" leaves
// --host out), and no daemon to reach (no home): it must return 0 at once,
// never panic (Run recovers and logs "hook panicked"), and print the
// empty answer of the host whose dialect the payload is in (AnswerShape):
// nothing for Windsurf, which reads no answer, and for an event Mnemo does
// not hook; {"continue":true} for Cursor's prompt stage; else {}. With no
// daemon there is never context to give. Every documented payload of
// adapters/<host>/testdata/documented seeds it under every host.
func FuzzRunHook(f *testing.F) {
	files, err := filepath.Glob(hostData("*", "documented", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no host payloads: %v", err)
	}
	names := []string{""}
	for _, h := range hosts.All {
		names = append(names, h.Name)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		event := hostFileEvent(file)
		for _, host := range names {
			f.Add(data, host, event)
		}
	}
	for _, host := range names {
		f.Add([]byte("not a payload"), host, "beforeSubmitPrompt")
		f.Add([]byte(`{"conversation_id":"c1"`), host, "postToolUse")
	}
	f.Fuzz(func(t *testing.T, stdin []byte, host, event string) {
		if p, ok := decodePayload(stdin); ok && p.TranscriptPath != "" && (p.HookEventName == hosts.EventStop || p.HookEventName == "" && event == hosts.EventStop) {
			// A Stop reads the transcript it names: the fuzzer must not read
			// the files of this machine. FuzzTranslate covers transcripts.
			t.Skip("a Stop naming a transcript")
		}
		var args []string
		if host != "" {
			args = append(args, "--host", host)
		}
		if event != "" {
			args = append(args, event)
		}
		var out, errOut bytes.Buffer
		cfg := hook.Config{Stdin: bytes.NewReader(stdin), Stdout: &out, Stderr: &errOut}
		cfg.Host, cfg.Event, cfg.ArgsErr = hook.ParseArgs(args)
		done := make(chan int, 1)
		start := time.Now()
		go func() { done <- hook.Run(context.Background(), cfg) }()
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the hook did not return within 10s (stdin %q)", stdin)
		}
		if took := time.Since(start); took > hook.StdinWait {
			t.Errorf("the hook took %s on a closed stdin", took)
		}
		if strings.Contains(errOut.String(), "hook panicked") {
			t.Fatalf("the hook panicked: %s", errOut.String())
		}
		dialect, stage, read := hook.AnswerShape(stdin, cfg.Host, cfg.Event)
		var want string
		switch {
		case read && stage == "", dialect == hosts.Windsurf:
			want = ""
		case dialect == hosts.Cursor && stage == hosts.EventUserPromptSubmit:
			want = "{\"continue\":true}\n"
		default:
			want = "{}\n"
		}
		if got := out.String(); got != want {
			t.Fatalf("--host %q %q, a payload of %s (stage %q, read %v): answer %q, want %q", host, event, dialect, stage, read, got, want)
		}
	})
}

// hostFileEvent is the event of a documented payload file, named
// NN-<event>[-kind].json (Copilot CLI's camel-NN-… and pascal-NN-…).
func hostFileEvent(file string) string {
	parts := strings.Split(strings.TrimSuffix(filepath.Base(file), ".json"), "-")
	if parts[0] == "camel" || parts[0] == "pascal" {
		parts = parts[1:]
	}
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// FuzzTranslate maps arbitrary payloads, with an arbitrary transcript file,
// onto daemon calls. A call that goes out must be the stage's method with
// params that encode to JSON, carry the session id and event key, and
// hold no privacy tag in any text (the tags and their content are gone),
// with tool input and response as valid JSON. The hook never reads the
// transcript (the daemon does, at a turn's end): the call is the same
// whatever the file holds.
func FuzzTranslate(f *testing.F) {
	f.Fuzz(func(t *testing.T, payload, transcript []byte) {
		p, ok := decodePayload(payload)
		if !ok {
			return
		}
		tpath := filepath.Join(t.TempDir(), "transcript.jsonl")
		if err := os.WriteFile(tpath, transcript, 0o600); err != nil {
			t.Fatal(err)
		}
		if p.TranscriptPath != "" {
			p.TranscriptPath = tpath
		}
		method, params, err := hook.Translate(p, hook.TranslateOptions{EventKey: "fuzz-key"})
		if err != nil {
			if !errors.Is(err, hook.ErrUnhandledEvent) && !errors.Is(err, hook.ErrSkippedTool) && !errors.Is(err, hook.ErrInvalidPayload) && !errors.Is(err, hook.ErrNotPrompt) {
				t.Fatalf("Translate: unexpected error %v", err)
			}
			return
		}
		stage, ok := hosts.StageOf(hosts.ClaudeCode, p.HookEventName)
		if !ok || stage.Method != method {
			t.Fatalf("event %q went out as %q", p.HookEventName, method)
		}
		raw, err := json.Marshal(params)
		if err != nil {
			t.Fatalf("params %#v do not encode: %v", params, err)
		}
		var sent struct {
			ContentSessionID     string          `json:"contentSessionId"`
			EventKey             string          `json:"eventKey"`
			Prompt               string          `json:"prompt"`
			LastUserMessage      string          `json:"lastUserMessage"`
			LastAssistantMessage string          `json:"lastAssistantMessage"`
			ToolInput            json.RawMessage `json:"toolInput"`
			ToolResponse         json.RawMessage `json:"toolResponse"`
		}
		if err := json.Unmarshal(raw, &sent); err != nil {
			t.Fatalf("params %s: %v", raw, err)
		}
		if sent.ContentSessionID != p.SessionID || sent.EventKey != "fuzz-key" {
			t.Errorf("params %s lost the session id %q or the event key", raw, p.SessionID)
		}
		if stage.Event == hosts.EventUserPromptSubmit && privacy.IsFullyPrivate(p.Prompt) != (sent.Prompt == hook.PrivateMarker) {
			t.Errorf("prompt %q went out as %q", p.Prompt, sent.Prompt)
		}
		for name, text := range map[string]string{"lastUserMessage": sent.LastUserMessage, "lastAssistantMessage": sent.LastAssistantMessage} {
			if _, n := privacy.Strip(text); n != 0 {
				t.Errorf("%s %q still has %d privacy tags", name, text, n)
			}
			if !utf8.ValidString(text) && utf8.Valid(payload) && utf8.Valid(transcript) {
				t.Errorf("%s %q is not UTF-8", name, text)
			}
		}
		if sent.Prompt != hook.PrivateMarker {
			if _, n := privacy.Strip(sent.Prompt); n != 0 {
				t.Errorf("prompt %q still has %d privacy tags", sent.Prompt, n)
			}
		}
		for name, v := range map[string]json.RawMessage{"toolInput": sent.ToolInput, "toolResponse": sent.ToolResponse} {
			if len(v) == 0 {
				continue
			}
			if !json.Valid(v) {
				t.Errorf("%s %s is not JSON", name, v)
			}
			if n := privacyTags(v); n != 0 {
				t.Errorf("%s %s still has %d privacy tags", name, v, n)
			}
		}
		if err := os.WriteFile(tpath, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, again, _ := hook.Translate(p, hook.TranslateOptions{EventKey: "fuzz-key"})
		if rawAgain, _ := json.Marshal(again); string(rawAgain) != string(raw) {
			t.Errorf("the call depends on the transcript's content:\n%s\nwith an empty transcript:\n%s", raw, rawAgain)
		}
	})
}

// privacyTags counts the privacy tags left in the strings of a JSON value.
func privacyTags(v json.RawMessage) int {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return 0
	}
	n := 0
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			_, k := privacy.Strip(x)
			n += k
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				walk(k)
				walk(e)
			}
		}
	}
	walk(x)
	return n
}
