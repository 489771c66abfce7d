package privacy_test

import (
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory/privacy"
)

// prose is ordinary text: a prompt, a tool's output, source code.
var prose = strings.Repeat(`The handler reads the request, checks a < b && c > d, and
returns <b>bold</b> HTML. func (s *Store) Get(ctx context.Context, id string) error {
	return fmt.Errorf("get %s: %w", id, err) // skip-list, task-runner, 3f2a9c1d
}
`, 256)

func BenchmarkStrip(b *testing.B) {
	const mb = 1 << 20
	rep := func(s string) string { return strings.Repeat(s, mb/len(s)) }
	var tags150 strings.Builder
	for range 150 {
		tags150.WriteString("<private>secret</private> text ")
	}
	benches := []struct {
		name string
		in   string
	}{
		{"prose-no-tags", prose},
		{"prose-with-tags", strings.ReplaceAll(prose, "<b>bold</b>", "<system-reminder>bold</system-reminder>")},
		{"150-tags", tags150.String()},
		{"10k-tag", "<private>" + strings.Repeat("x", 10000) + "</private> keep this"},
		{"1MB-open-without-gt", rep("<private")},
		{"1MB-lt", rep("<")},
		{"1MB-lt-then-elements", rep("<")[:mb/2] + rep("<private>x</private>")[:mb/2]},
		{"1MB-elements", rep("<private>x</private> ")},
		{"1MB-joined", rep("<priv<private>x</private>ate>")},
	}
	for _, bb := range benches {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(bb.in)))
			for b.Loop() {
				privacy.Strip(bb.in)
			}
		})
	}
}
