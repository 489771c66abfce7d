package main_test

import (
	"fmt"
	"github.com/mnemo-dev/mnemo/memory"
	"slices"
	"testing"
	"time"
)

// BenchmarkStdioPostToolUse is the round trip of an acknowledged (durable)
// mnemo/postToolUse over stdio to `mnemo serve --stdio --remote=none`, a
// real subprocess with real framing. It reports the median and p99.
func BenchmarkStdioPostToolUse(b *testing.B) {
	env := newTestEnv(b)
	c := startServe(b, env, "--remote=none")
	c.call(memory.MethodUserPromptSubmit, map[string]any{"contentSessionId": "bench", "cwd": env.project, "prompt": "bench"})
	var took []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		c.call(memory.MethodPostToolUse, map[string]any{
			"contentSessionId": "bench", "cwd": env.project, "toolName": "Edit",
			"toolInput":    map[string]any{"file_path": fmt.Sprintf("%s/pkg/file%d.go", env.project, i), "old_string": "a := 1", "new_string": "a := 2"},
			"toolResponse": map[string]any{"filePath": fmt.Sprintf("%s/pkg/file%d.go", env.project, i)},
		})
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
}
