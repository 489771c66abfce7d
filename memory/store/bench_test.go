package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// blockedAgent never finishes a run, so benchmarks of the acknowledged
// write path are not disturbed by the worker.
type blockedAgent struct{}

func (blockedAgent) Name() string { return "blocked" }
func (blockedAgent) Run(ctx context.Context, _ memory.AgentInput) (memory.AgentOutput, error) {
	<-ctx.Done()
	return memory.AgentOutput{}, ctx.Err()
}

// BenchmarkPostToolUse measures an acknowledged, durable tool event: with
// an fsync per commit (SyncWrites, what Mnemo uses: concurrent commits share
// one fsync) and without (crash-safe through the mmap, not power-safe).
func BenchmarkPostToolUse(b *testing.B) {
	input := json.RawMessage(`{"file_path":"/src/shop/cart/total.go","old_string":"total - discount","new_string":"total * (1 - rate)"}`)
	response := json.RawMessage(`{"filePath":"/src/shop/cart/total.go","structuredPatch":[{"oldStart":12,"oldLines":1,"newStart":12,"newLines":1,"lines":["-\treturn total - discount","+\treturn total * (1 - rate)"]}]}`)
	for _, sync := range []bool{true, false} {
		for _, parallel := range []bool{false, true} {
			name := fmt.Sprintf("sync=%t/parallel=%t", sync, parallel)
			b.Run(name, func(b *testing.B) {
				m, err := store.Open(context.Background(), store.Options{Dir: filepath.Join(b.TempDir(), "db"), NoSync: !sync, Agent: blockedAgent{}})
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				ctx := context.Background()
				var n atomic.Int64
				one := func() {
					i := n.Add(1)
					_, err := m.PostToolUse(ctx, memory.ToolUseParams{
						ContentSessionID: fmt.Sprintf("bench-%d", i%8), Cwd: "/src/shop", ToolName: "Edit",
						ToolInput: input, ToolResponse: response,
					})
					if err != nil {
						b.Error(err)
					}
				}
				b.ResetTimer()
				if parallel {
					b.SetParallelism(8)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							one()
						}
					})
				} else {
					for b.Loop() {
						one()
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}
