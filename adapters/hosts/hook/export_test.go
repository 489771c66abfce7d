package hook

import (
	"bytes"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
)

// AnswerShape reads a hook's stdin as Run does, for a hook installed
// for host (ParseArgs's) with event on its command line, and returns the
// host whose dialect the payload is in, the stage of its event ("" for an
// event Mnemo does not hook), and whether the payload could be read. For a
// payload that cannot be read they are the installed host's and the
// command line's.
func AnswerShape(stdin []byte, host, event string) (dialect, stage string, read bool) {
	if host == "" {
		host = hosts.ClaudeCode
	}
	w, _, err := readPayload(bytes.NewReader(stdin))
	if err != nil {
		s, _ := hosts.StageOf(host, event)
		return host, s.Event, false
	}
	p := w.Normalize(host, event)
	return p.Host, p.Stage.Event, true
}

// DecodeHostPayload reads a payload as mnemo-hook --host host event does,
// for the tests of the dialects.
func DecodeHostPayload(raw []byte, host, event string) (*hosts.Payload, error) {
	w, _, err := readPayload(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return w.Normalize(host, event), nil
}

// SetMaxPayload lowers the bound of the payload (MaxPayloadBytes) until
// the test ends, so that a test of it need not write 64 MiB.
func SetMaxPayload(tb interface{ Cleanup(func()) }, n int) {
	old := maxPayload
	maxPayload = n
	tb.Cleanup(func() { maxPayload = old })
}
