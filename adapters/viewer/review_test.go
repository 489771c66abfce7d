package viewer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// The records that need review, through the viewer's API: listed with
// why, kept with one call (then no longer listed), and a bad id or limit
// refused in words.
func TestViewerReview(t *testing.T) {
	w := newWorldOf(t, store.Options{InMemory: true, ReviewAfter: -1})
	w.login(t)
	dir := filepath.Join(t.TempDir(), "shop")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "total.go")
	if err := os.WriteFile(path, []byte("package shop\n\nconst rate = 20\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := w.m.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: "cc-1", Cwd: dir, Prompt: "raise the rate"}); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"file_path": path, "old_string": "const rate = 19", "new_string": "const rate = 20"})
	if _, err := w.m.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: "cc-1", Cwd: dir, ToolName: "Edit", ToolInput: in, ToolResponse: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.m.WaitIdle(wctx); err != nil {
		t.Fatal(err)
	}
	var r memory.ReviewResult
	w.getJSON(t, "/api/review?project=shop", &r)
	if r.Total != 0 || len(r.Items) != 0 {
		t.Fatalf("nothing changed yet: %+v", r)
	}
	later := time.Now().Add(time.Second)
	os.WriteFile(path, []byte("package shop\n\n// rate in percent.\nconst rate = 20\n"), 0o600)
	os.Chtimes(path, later, later)
	w.getJSON(t, "/api/review?project=shop", &r)
	if r.Total != 1 || len(r.Items) != 1 || r.Items[0].Observation.State != memory.StateReview || r.Items[0].Changed[0] != "total.go" {
		t.Fatalf("review: %+v", r)
	}
	id := r.Items[0].Observation.ID
	page := map[string]string{"X-Mnemo": "1"}
	if code, body := w.do(t, "PUT", fmt.Sprintf("/api/records/%d/keep", id), nil); code != 403 {
		t.Errorf("a keep without the page's header: %d %s", code, body)
	}
	if code, body := w.do(t, "PUT", fmt.Sprintf("/api/records/%d/keep", id), page); code != 200 || !strings.Contains(body, fmt.Sprintf(`"changed":[%d]`, id)) {
		t.Fatalf("keep: %d %s", code, body)
	}
	w.getJSON(t, "/api/review?project=shop", &r)
	if r.Total != 0 {
		t.Errorf("kept, still listed: %+v", r)
	}
	if code, _ := w.do(t, "PUT", "/api/records/999999/keep", page); code != 404 {
		t.Errorf("keep a missing record: %d", code)
	}
	if code, body := w.do(t, "GET", "/api/review?limit=0", nil); code != 400 || !strings.Contains(body, "limit") {
		t.Errorf("limit 0: %d %s", code, body)
	}
}
