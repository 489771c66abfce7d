package rules_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory/rules"
)

const (
	context1 = "<mnemo-context project=\"calc\">\n# Memory of calc\n- #3 fixed the divide by zero\n</mnemo-context>\n"
	context2 = "<mnemo-context project=\"calc\">\n# Memory of calc\n- #4 added tests\n- #3 fixed the divide by zero\n</mnemo-context>"
	head     = "---\nalwaysApply: true\n---\n"
)

// blockOf is the block Write puts in, with eol between its lines.
func blockOf(body, eol string) string {
	lines := append([]string{rules.Begin}, strings.Split(strings.TrimRight(body, "\n"), "\n")...)
	return strings.Join(append(lines, rules.End), eol)
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWriteRefreshRemove runs the block's life on files of every shape:
// the bytes before and after the block stay exactly as they were through
// the first write, every refresh and the removal, which gives the file
// back as it was.
func TestWriteRefreshRemove(t *testing.T) {
	for _, tc := range []struct {
		name, before string
		// after is the file once the block is in, given the block's text.
		after func(block string) string
	}{
		{"no file", "", func(b string) string { return head + b + "\n" }},
		{"empty file", "\x00", func(b string) string { return b + "\n" }},
		{"trailing newline", "# Rules\n\nBe brief.\n", func(b string) string { return "# Rules\n\nBe brief.\n\n" + b + "\n" }},
		{"no trailing newline", "# Rules\n\nBe brief.", func(b string) string { return "# Rules\n\nBe brief.\n\n" + b }},
		{"CRLF", "# Rules\r\n\r\nBe brief.\r\n", func(b string) string { return "# Rules\r\n\r\nBe brief.\r\n\r\n" + b + "\r\n" }},
		{"CRLF, no trailing newline", "# Rules\r\nBe brief.", func(b string) string { return "# Rules\r\nBe brief.\r\n\r\n" + b }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", "AGENTS.md")
			before := tc.before
			switch before {
			case "":
			case "\x00":
				before = ""
				fallthrough
			default:
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			eol := "\n"
			if strings.Contains(before, "\r\n") {
				eol = "\r\n"
			}

			r, err := rules.Write(path, context1, head)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Changed || r.Created != (tc.before == "") {
				t.Errorf("write: %+v", r)
			}
			if got, want := read(t, path), tc.after(blockOf(context1, eol)); got != want {
				t.Fatalf("after write:\n%q\nwant\n%q", got, want)
			}
			if r, err := rules.Write(path, context1, head); err != nil || r.Changed {
				t.Errorf("second write: %+v, %v; want no change", r, err)
			}

			r, err = rules.Refresh(path, context2)
			if err != nil || !r.Changed {
				t.Fatalf("refresh: %+v, %v", r, err)
			}
			if got, want := read(t, path), tc.after(blockOf(context2, eol)); got != want {
				t.Fatalf("after refresh:\n%q\nwant\n%q", got, want)
			}
			if fi, err := os.Stat(path); err != nil || (tc.before != "" && fi.Mode().Perm() != 0o600) {
				t.Errorf("mode after refresh: %v, %v", fi.Mode(), err)
			}

			r, err = rules.Remove(path, head)
			if err != nil || !r.Changed {
				t.Fatalf("remove: %+v, %v", r, err)
			}
			if tc.before == "" || tc.before == "\x00" {
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) || !r.Deleted {
					t.Fatalf("a file of Mnemo's only is deleted: %+v, %v", r, err)
				}
				return
			}
			if got := read(t, path); got != before {
				t.Fatalf("after remove:\n%q\nwant the file as it was:\n%q", got, before)
			}
			if r, err := rules.Remove(path, head); err != nil || r.Changed {
				t.Errorf("second remove: %+v, %v", r, err)
			}
		})
	}
}

// TestBlockInTheMiddle: a block the user moved between paragraphs is
// refreshed where it stands, and the text around it is kept to the byte.
func TestBlockInTheMiddle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "GEMINI.md")
	before, after := "# Project\r\nUse tabs.\r\n\r\n", "\r\n## More\r\nNo trailing newline"
	old := strings.Join([]string{rules.BeginPrefix + " old words -->", "stale", rules.End}, "\r\n")
	if err := os.WriteFile(path, []byte(before+old+after), 0o644); err != nil {
		t.Fatal(err)
	}
	if !rules.Marked(path) {
		t.Fatal("Marked: false")
	}
	if _, err := rules.Refresh(path, context1); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, path), before+blockOf(context1, "\r\n")+after; got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	if _, err := rules.Remove(path, ""); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, path), before+"## More\r\nNo trailing newline"; got != want {
		t.Fatalf("after remove\n%q\nwant\n%q", got, want)
	}
}

// TestRefreshOptIn: only a file with the markers is refreshed; no file is
// created.
func TestRefreshOptIn(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "AGENTS.md")
	if err := os.WriteFile(plain, []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{plain, filepath.Join(dir, "GEMINI.md")} {
		r, err := rules.Refresh(path, context1)
		if err != nil || r.Changed {
			t.Errorf("%s: %+v, %v", path, r, err)
		}
	}
	if got := read(t, plain); got != "# mine\n" {
		t.Errorf("plain file changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "GEMINI.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refresh created a file: %v", err)
	}
}

// TestBadMarkers: a begin without an end, or two blocks, is refused and
// the file left as it was.
func TestBadMarkers(t *testing.T) {
	for name, text := range map[string]string{
		"no end":     "a\n" + rules.Begin + "\nctx\n",
		"two blocks": rules.Begin + "\n" + rules.End + "\n" + rules.Begin + "\n" + rules.End + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "AGENTS.md")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, op := range []func() (rules.Result, error){
				func() (rules.Result, error) { return rules.Write(path, context1, "") },
				func() (rules.Result, error) { return rules.Refresh(path, context1) },
				func() (rules.Result, error) { return rules.Remove(path, "") },
			} {
				if _, err := op(); !errors.Is(err, rules.ErrMarkers) {
					t.Errorf("err %v, want ErrMarkers", err)
				}
			}
			if got := read(t, path); got != text {
				t.Errorf("file changed: %q", got)
			}
		})
	}
}

// TestBodyCannotCloseTheBlock: a memory that quotes the end marker does not
// end the block early.
func TestBodyCannotCloseTheBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "AGENTS.md")
	if _, err := rules.Write(path, "before\n"+rules.End+"\nafter", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := rules.Refresh(path, context1); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, path), blockOf(context1, "\n")+"\n"; got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

// TestSymlink: the link stays a link; its target gets the block.
func TestSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "shared.md")
	if err := os.WriteFile(target, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "AGENTS.md")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := rules.Write(link, context1, ""); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link replaced: %v %v", fi.Mode(), err)
	}
	if !strings.Contains(read(t, target), rules.End) {
		t.Fatal("the target has no block")
	}
}
