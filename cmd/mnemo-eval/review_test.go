package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// The review's measure on a history of three commits, in a real git
// repository: Ann's edit is seen, Bob's change of the same file (a week
// later, her line still there) is not; at once and at 7 days her record
// is listed at the end, at 30 days not yet. With every author seen, Bob's
// edit saw the file as it is now: nothing is listed.
func TestReviewReplay(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := filepath.Join(t.TempDir(), "shop")
	git := func(env []string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), append([]string{"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}, env...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(repo, 0o700); err != nil {
		t.Fatal(err)
	}
	git(nil, "init", "-q")
	commit := func(who, when, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo, "tax.go"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		git(nil, "add", "tax.go")
		env := []string{"GIT_AUTHOR_NAME=" + who, "GIT_AUTHOR_EMAIL=" + who + "@example.com", "GIT_AUTHOR_DATE=" + when,
			"GIT_COMMITTER_NAME=" + who, "GIT_COMMITTER_EMAIL=" + who + "@example.com", "GIT_COMMITTER_DATE=" + when}
		git(env, "commit", "-q", "-m", "change")
	}
	commit("ann", "2026-01-05T10:00:00Z", "package shop\n\nconst rate = 19\n")
	commit("ann", "2026-01-06T10:00:00Z", "package shop\n\nconst rate = 20\n")
	commit("bob", "2026-01-20T10:00:00Z", "package shop\n\n// rate in percent.\nconst rate = 20\n")

	var out bytes.Buffer
	if err := runReview(context.Background(), &out, repo, "ann@example.com", []int{7, 30}); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	for _, want := range []string{
		`3 commits 2026-01-05 – 2026-01-20, 2 of them recorded`,
		`(?m)^ +at once \(every changed record\) +\d+ +\d+ +1 +1 +50\.0%`,
		`(?m)^ +7 days +\d+ +\d+ +\d+ +1 +50\.0%`,
		`(?m)^ +30 days +0 +0 +0 +0 +0\.0%`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := runReview(context.Background(), &out, repo, "", []int{7}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^ +7 days +0 +0 +0 +0 +0\.0%`).MatchString(out.String()) {
		t.Errorf("every author seen:\n%s", out.String())
	}
}
