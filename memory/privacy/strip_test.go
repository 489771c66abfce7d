package privacy_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory/internal/cputime"
	"github.com/mnemo-dev/mnemo/memory/privacy"
)

// tagNames are the tags Strip must remove, as docs/architecture.md §8 lists them.
var tagNames = []string{
	"private",
	"mnemo-context",
	"system-reminder",
	"system_instruction",
	"system-instruction",
	"persisted-output",
	"hook_context",
}

func TestStrip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
		n    int
	}{
		// The reference cases of the system Mnemo replaces, with the
		// whitespace left behind tidied.
		{"basic", "public content <private>secret stuff</private> more public", "public content more public", 1},
		{"two elements", "<private>first</private> middle <private>second</private> end", "middle end", 2},
		{"whole text", "<private>entire prompt is private</private>", "", 1},
		{"mixed tags", "<system-reminder>r</system-reminder> public <private>s</private> <mnemo-context>c</mnemo-context> end", "public end", 3},
		{"inside a JSON text", `{"content":"<private>secret</private> public"}`, `{"content":" public"}`, 1},

		{"attributes", `a <system-reminder origin="hook" n='1'>r</system-reminder> b`, "a b", 1},
		{"attributes on lines", "a <private\n  reason=\"pw\"\n>x</private> b", "a b", 1},
		{"upper case", "a <PRIVATE>x</PRIVATE> b", "a b", 1},
		{"mixed case", "a <System-Reminder>x</SYSTEM-reminder> b", "a b", 1},
		{"self-closing", "a <private/> b <private x=\"1\" /> c", "a b c", 2},
		{"space in closing tag", "a <private>x</private > b", "a b", 1},

		{"nested same name", "<private>a<private>b</private>c</private> d", "d", 1},
		{"nested other name", "<private>a <system-reminder>b</system-reminder> c</private> d", "d", 1},
		{"other closing tag inside", "<private>a </system-reminder> c</private> d", "d", 1},
		{"inner unclosed", "<private>a<private>b</private> rest", "", 1},

		{"unclosed", "keep <private>secret\nmore secret", "keep", 1},
		{"unclosed on its line", "keep\n<private>secret\nmore secret", "keep", 1},
		{"stray closing tag", "stray </private> here", "stray here", 1},
		{"stray closing tags", "</system-reminder>a</mnemo-context>", "a", 2},

		{"spanning lines", "before\n<private>\nline a\nline b\n</private>\nafter", "before\nafter", 1},
		{"own line", "line1\n<private>secret</private>\nline2", "line1\nline2", 1},
		{"between paragraphs", "para1\n\n<private>x</private>\n\npara2", "para1\n\npara2", 1},
		{"many blank lines after", "para1\n<private>x</private>\n\n\n\npara2", "para1\n\npara2", 1},
		{"at the start", "<system-reminder>r</system-reminder>\n\nActual prompt", "Actual prompt", 1},
		{"at the end", "line1\n<private>x</private>", "line1", 1},
		{"at the end with a line break", "line1\n<private>x</private>\n", "line1\n", 1},
		{"at the end after a blank line", "line1\n\n<private>x</private>\n", "line1\n", 1},
		{"two on a line", "<private>a</private> <private>b</private>\nnext", "next", 2},
		{"crlf", "a\r\n<private>x</private>\r\nb", "a\r\nb", 1},
		{"indentation kept", "  <private>x</private> foo", "  foo", 1},
		{"trailing space dropped", "foo <private>x</private>\nbar", "foo\nbar", 1},
		{"end of text", "foo <private>x</private>", "foo", 1},
		{"words kept apart", "a<private>x</private>b", "a b", 1},
		{"punctuation not spaced", "key=<private>x</private>;", "key=;", 1},
		{"space on one side", "foo<private>x</private> bar", "foo bar", 1},

		{"not ours: longer name", "<privately>x</privately> <private-notes>y</private-notes>", "<privately>x</privately> <private-notes>y</private-notes>", 0},
		{"not ours: plural", "<persisted-outputs>x</persisted-outputs>", "<persisted-outputs>x</persisted-outputs>", 0},
		{"no closing bracket", "Java rejects <private int x; here", "Java rejects <private int x; here", 0},
		{"comparisons", "a < b && c > d <= e", "a < b && c > d <= e", 0},
		{"html", "<div><p>hello</p></div>", "<div><p>hello</p></div>", 0},
		{"empty", "", "", 0},

		// Text joined by a removal is a tag too.
		{"joined opening tag", "<private<private>x</private>>hidden</private>shown", "shown", 2},
		{"joined attributes", "<private a<private>x</private>>hidden</private>shown", "shown", 2},
		{"joined closing tag", "a </private<private>x</private>> b", "a b", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := privacy.Strip(tt.in)
			if got != tt.want || n != tt.n {
				t.Errorf("Strip(%q) = %q, %d; want %q, %d", tt.in, got, n, tt.want, tt.n)
			}
		})
	}
}

func TestStripEachTag(t *testing.T) {
	for _, name := range tagNames {
		t.Run(name, func(t *testing.T) {
			for _, in := range []string{
				"a <" + name + ">x</" + name + "> b",
				"a <" + strings.ToUpper(name) + ` k="v">x</` + name + "> b",
				"a <" + name + ">x\ny\n</" + name + "> b",
				"a </" + name + "> b",
			} {
				if got, n := privacy.Strip(in); got != "a b" || n != 1 {
					t.Errorf("Strip(%q) = %q, %d; want %q, 1", in, got, n, "a b")
				}
			}
		})
	}
}

// TestStripNoCopy checks that a text without tags comes back as it is.
func TestStripNoCopy(t *testing.T) {
	in := strings.Repeat("plain text with a < b and <b>bold</b>\n", 100)
	got, n := privacy.Strip(in)
	if n != 0 || got != in {
		t.Fatalf("Strip changed a text without tags: n = %d", n)
	}
	if allocs := testing.AllocsPerRun(10, func() { privacy.Strip(in) }); allocs != 0 {
		t.Errorf("Strip of a text without tags allocates %v times", allocs)
	}
}

func TestStripManyTags(t *testing.T) {
	var b strings.Builder
	for i := range 150 {
		b.WriteString("<private>secret")
		b.WriteString(strings.Repeat("x", i))
		b.WriteString("</private> text ")
	}
	in := b.String()
	start := time.Now()
	got, n := privacy.Strip(in)
	elapsed := time.Since(start)
	if n != 150 || n <= privacy.WarnTags {
		t.Errorf("n = %d, want 150 (> WarnTags)", n)
	}
	if strings.Contains(got, "private") || strings.Contains(got, "secret") {
		t.Errorf("tags left: %.200q", got)
	}
	if got != strings.Repeat("text ", 150) {
		t.Errorf("Strip = %.200q", got)
	}
	if elapsed > slowdown*100*time.Millisecond {
		t.Errorf("150 tags took %v", elapsed)
	}
}

func TestStripLongTag(t *testing.T) {
	in := "<private>" + strings.Repeat("x", 10000) + "</private> keep this"
	start := time.Now()
	got, n := privacy.Strip(in)
	elapsed := time.Since(start)
	if got != "keep this" || n != 1 {
		t.Errorf("Strip = %.100q, %d", got, n)
	}
	if elapsed > slowdown*100*time.Millisecond {
		t.Errorf("a 10,000-character tag took %v", elapsed)
	}
}

// TestStripLinear feeds inputs built to make a backtracking or
// rescanning stripper quadratic; each must take well under 200 ms for a
// megabyte, and come back without tags.
func TestStripLinear(t *testing.T) {
	const mb = 1 << 20
	rep := func(s string) string { return strings.Repeat(s, mb/len(s)) }
	tests := []struct {
		name string
		in   string
	}{
		{"opening tags without >", rep("<private")},
		{"opening tags with a space, without >", rep("<private ")},
		{"less-than signs", rep("<")},
		{"greater-than signs", rep(">")},
		{"both", rep("<>")},
		{"opening tags never closed", rep("<private>")},
		{"closing tags", rep("</private>")},
		{"elements", rep("<private>x</private>")},
		{"elements without spaces between words", rep("a<private>x</private>")},
		{"closing tags without >", rep("</private")},
		{"nested openings", rep("<private>") + rep("</private>")},
		{"joined tags", rep("<priv<private>x</private>ate>")},
		{"pending less-than signs then elements", rep("<") + rep("<private>x</private>")},
		{"spaces then elements", strings.Repeat(" ", mb) + rep("<private>x</private> ")},
		{"blank lines then elements", strings.Repeat("\n", mb) + rep("<private>x</private>\n")},
		{"long attributes", "<private " + strings.Repeat("a=1 ", mb/4)},
		{"names only", rep("<private-")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := cputime.Process()
			got, _ := privacy.Strip(tt.in)
			if used := cputime.Process() - start; used > slowdown*200*time.Millisecond {
				t.Errorf("took %v of CPU for %d bytes", used, len(tt.in))
			}
			if _, n := privacy.Strip(got); n != 0 {
				t.Errorf("output still has %d tags", n)
			}
		})
	}
}

func TestIsFullyPrivate(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"<private>all secret</private>", true},
		{"  <private>x</private>\n ", true},
		{"<private>x</private><system-reminder>y</system-reminder>", true},
		{"<private>never closed", true},
		{"<PRIVATE>x</PRIVATE>", true},
		{"", false},
		{"   \n", false},
		{"hi <private>x</private>", false},
		{"plain prompt", false},
		{"<private>x</private> ?", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := privacy.IsFullyPrivate(tt.in); got != tt.want {
				t.Errorf("IsFullyPrivate(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestSkipped(t *testing.T) {
	tests := []struct {
		tool string
		skip []string
		want bool
	}{
		{"TodoWrite", privacy.DefaultSkipTools, true},
		{"ListMcpResourcesTool", privacy.DefaultSkipTools, true},
		{"SlashCommand", privacy.DefaultSkipTools, true},
		{"Skill", privacy.DefaultSkipTools, true},
		{"AskUserQuestion", privacy.DefaultSkipTools, true},
		{"Edit", privacy.DefaultSkipTools, false},
		{"todowrite", privacy.DefaultSkipTools, false},
		{"TodoWrite", nil, false},
		{"Bash", []string{"Bash"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			if got := privacy.Skipped(tt.tool, tt.skip); got != tt.want {
				t.Errorf("Skipped(%q, %v) = %v, want %v", tt.tool, tt.skip, got, tt.want)
			}
		})
	}
}

// TestStripRandom builds texts from words, whitespace and well-formed
// elements (nested, with attributes, in any case, across lines), plus stray
// closing and self-closing tags, and checks that Strip keeps exactly the
// words outside the elements, in order and apart, and nothing inside.
func TestStripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	var element func(b *strings.Builder, depth int)
	element = func(b *strings.Builder, depth int) {
		name := tagNames[rng.IntN(len(tagNames))]
		open := name
		if rng.IntN(3) == 0 {
			open = strings.ToUpper(name)
		}
		b.WriteString("<" + open + pick("", ` a="1"`, "\n b='x'", " c"))
		b.WriteString(pick(">", " >"))
		for range rng.IntN(4) {
			switch rng.IntN(5) {
			case 0:
				if depth < 3 {
					element(b, depth+1) // nested, any name
				}
			case 1:
				// nested, same name: the outermost pair wins
				b.WriteString("<" + name + ">secret</" + name + ">")
			default:
				b.WriteString(pick("secret", " secret ", "\nsecret\n", "<b>secret</b>", "secret < x", "</other>"))
			}
		}
		b.WriteString("</" + pick(name, strings.ToUpper(name)) + pick(">", " >"))
	}
	for c := range 20000 {
		var b strings.Builder
		var words []string
		word := func() {
			w := fmt.Sprintf("w%d", len(words))
			words = append(words, w)
			b.WriteString(w)
		}
		for range rng.IntN(12) {
			switch rng.IntN(7) {
			case 0, 1:
				word()
				b.WriteString(pick(" ", "  ", "\n", "\n\n", "\r\n", "\t"))
			case 6:
				// An element between two words, with no space around it.
				b.WriteString(" ")
				word()
				element(&b, 0)
				word()
				b.WriteString(" ")
			case 2:
				b.WriteString(pick(" ", "\n", "\n\n\n", "  \n", "\t"))
			case 3, 4:
				element(&b, 0)
			case 5:
				name := tagNames[rng.IntN(len(tagNames))]
				b.WriteString(pick("</"+name+">", "<"+name+"/>", "<"+name+" x />"))
			}
		}
		in := b.String()
		out, n := privacy.Strip(in)
		checkStripped(t, in, out, n)
		if got := strings.Fields(out); !slices.Equal(got, words) {
			t.Fatalf("case %d: Strip(%q) = %q: words %q, want %q", c, in, out, got, words)
		}
		if strings.Contains(out, "\n\n\n") && !strings.Contains(in, "\n\n\n") {
			t.Fatalf("case %d: Strip(%q) = %q: two blank lines", c, in, out)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
}

// MayHaveTag finds every text Strip would change, opening or closing tag,
// also written as a JSON escape, and passes text with other angle brackets.
func TestMayHaveTag(t *testing.T) {
	for _, s := range []string{"a <private>b", "x </private> y", "<mnemo-context>", "<System-Reminder x=1>", `{"a":"\u003cprivate>"}`, `"\u003C/private>"`} {
		if !privacy.MayHaveTag(s) || !privacy.MayHaveTag([]byte(s)) {
			t.Errorf("MayHaveTag(%q) = false", s)
		}
		if stripped, _ := privacy.Strip(s); stripped == s && !strings.Contains(s, `\u003`) {
			t.Errorf("Strip(%q) changed nothing: the case proves nothing", s)
		}
	}
	for _, s := range []string{"", "a < b && c > d", "List<String>", "<div>", "<privates>", `\u003e`, "x\\u00e9"} {
		if privacy.MayHaveTag(s) {
			t.Errorf("MayHaveTag(%q) = true", s)
		}
	}
}
