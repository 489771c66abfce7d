package claudecode

import "bytes"

// AnswerShape reads a hook's stdin as RunHook does, for a hook installed
// for host (ParseArgs's) with event on its command line, and returns the
// host whose dialect the payload is in, the stage of its event ("" for an
// event Mnemo does not hook), and whether the payload could be read. For a
// payload that cannot be read they are the installed host's and the
// command line's.
func AnswerShape(stdin []byte, host, event string) (dialect, stage string, read bool) {
	if host == "" {
		host = HostClaudeCode
	}
	w, _, err := readPayload(bytes.NewReader(stdin))
	if err != nil {
		s, _ := StageOf(host, event)
		return host, s.Event, false
	}
	p := w.normalize(host, event)
	return p.Host, p.Stage.Event, true
}

// CodexTrust exposes the trust records Codex CLI would need for Mnemo's
// handlers of a hooks.json, to check them against what Codex computes.
var CodexTrust = codexTrust

// SpliceJSON is spliceJSON over stripJSONC, for the fuzz test.
func SpliceJSON(data []byte, want []byte) ([]byte, bool) {
	return spliceJSON(data, stripJSONC(data), want)
}

// EqualJSONC reports whether two JSON-with-comments texts hold the same value.
func EqualJSONC(a, b []byte) bool { return equalJSON(stripJSONC(a), stripJSONC(b)) }
