package store

import (
	"encoding/json"
	"fmt"
	"github.com/mnemo-dev/mnemo/memory"
	"os"
	"path/filepath"
	"time"
)

// The audit trail of agent runs (rule 7): for each memory session,
// agents/<memorySessionId>/conversation.json holds every message of its
// runs with the session metadata, and stream.log gets one timestamped line
// per message, appended and never replaced, also across resumes.

func (m *Memory) audit(in memory.AgentInput, out memory.AgentOutput) error {
	if m.opts.AgentsDir == "" {
		return nil
	}
	dir := filepath.Join(m.opts.AgentsDir, filepath.Base(out.MemorySessionID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	now := m.now()
	base := memory.AuditMessage{
		Time: now, ContentSessionID: in.Session.ContentSessionID, MemorySessionID: out.MemorySessionID,
		Resumed: in.ResumeID != "" && in.ResumeID == out.MemorySessionID, Agent: m.agent.Name(),
	}
	if len(in.Events) > 0 {
		base.PromptNumber = in.Events[0].PromptNumber
	}
	input, output := base, base
	input.Role, input.Content = "input", in.Events
	output.Role, output.Content = "output", struct {
		Observations []memory.Observation `json:"observations"`
		Summary      *memory.Summary      `json:"summary,omitempty"`
	}{out.Observations, out.Summary}

	for _, msg := range []memory.AuditMessage{input, output} {
		if err := appendJSONArray(filepath.Join(dir, "conversation.json"), msg); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, "stream.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s run session=%s memory=%s resumed=%t prompt=%d events=%d observations=%d summary=%t\n",
		now.UTC().Format(time.RFC3339Nano), base.ContentSessionID, base.MemorySessionID, base.Resumed,
		base.PromptNumber, len(in.Events), len(out.Observations), out.Summary != nil)
	return err
}

// appendJSONArray appends v to the JSON array in path (creating it), in
// constant time: it overwrites the closing bracket instead of rewriting
// the file.
func appendJSONArray(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	const closing = "\n]\n"
	if fi.Size() == 0 {
		_, err = f.Write([]byte("[\n" + string(b) + closing))
		return err
	}
	tail := make([]byte, len(closing))
	if fi.Size() < int64(len(closing)) {
		return fmt.Errorf("%s is not a JSON array this program wrote", path)
	}
	if _, err := f.ReadAt(tail, fi.Size()-int64(len(closing))); err != nil {
		return err
	}
	if string(tail) != closing {
		return fmt.Errorf("%s does not end with the closing bracket this program writes", path)
	}
	_, err = f.WriteAt([]byte(",\n"+string(b)+closing), fi.Size()-int64(len(closing)))
	return err
}
