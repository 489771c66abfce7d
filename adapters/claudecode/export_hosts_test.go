package claudecode

import "bytes"

// DecodeHostPayload reads a payload as mnemo-hook --host host event does,
// for the tests of the dialects.
func DecodeHostPayload(raw []byte, host, event string) (*Payload, error) {
	w, _, err := readPayload(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return w.normalize(host, event), nil
}

// AnswerFor is answerFor, for the tests of the hosts' answers.
var AnswerFor = answerFor

// DedupeKey is the event key a payload gets from its content, "" for one
// that names nothing.
func DedupeKey(p *Payload) string { return p.EventKey }
