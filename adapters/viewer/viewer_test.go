package viewer_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/viewer"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// storeMemory serves the viewer's Memory from a store.Memory directly, as
// the daemon's method table does.
type storeMemory struct{ m *store.Memory }

func (s storeMemory) Search(ctx context.Context, p memory.SearchParams) (memory.SearchResult, error) {
	return s.m.Search(ctx, p)
}
func (s storeMemory) Timeline(ctx context.Context, p memory.TimelineParams) (memory.TimelineResult, error) {
	return s.m.Timeline(ctx, p)
}
func (s storeMemory) GetObservations(ctx context.Context, p memory.IDsParams) (memory.ObservationsResult, error) {
	return s.m.Get(ctx, p)
}
func (s storeMemory) Context(ctx context.Context, p memory.ContextParams) (memory.ContextResult, error) {
	return s.m.Context(ctx, p)
}
func (s storeMemory) Injections(ctx context.Context, p memory.InjectionsParams) (memory.InjectionsResult, error) {
	return s.m.InjectionsOf(ctx, p)
}
func (s storeMemory) Forget(ctx context.Context, p memory.IDsParams) (memory.ForgetResult, error) {
	return s.m.Forget(ctx, p)
}
func (s storeMemory) Correct(ctx context.Context, p memory.CorrectParams) (memory.CorrectResult, error) {
	return s.m.Correct(ctx, p)
}
func (s storeMemory) Pin(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return s.m.Pin(ctx, p)
}
func (s storeMemory) Unpin(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return s.m.Unpin(ctx, p)
}
func (s storeMemory) MarkWrong(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return s.m.MarkWrong(ctx, p)
}
func (s storeMemory) UnmarkWrong(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return s.m.UnmarkWrong(ctx, p)
}
func (s storeMemory) Review(ctx context.Context, p memory.ReviewParams) (memory.ReviewResult, error) {
	return s.m.Review(ctx, p)
}
func (s storeMemory) Keep(ctx context.Context, p memory.IDsParams) (memory.PinResult, error) {
	return s.m.Keep(ctx, p)
}
func (s storeMemory) Status(ctx context.Context) (memory.Status, error) { return s.m.Status(ctx) }
func (s storeMemory) Sessions(ctx context.Context) (memory.SessionsResult, error) {
	ss, err := s.m.Sessions(ctx)
	return memory.SessionsResult{Sessions: ss}, err
}
func (s storeMemory) Session(ctx context.Context, p memory.SessionParams) (memory.SessionResult, error) {
	return s.m.SessionRecords(ctx, p)
}
func (s storeMemory) Doctor(ctx context.Context) (memory.DoctorResult, error) { return s.m.Doctor(ctx) }
func (s storeMemory) Knowledge(ctx context.Context, p memory.KnowledgeParams) (memory.Knowledge, error) {
	return s.m.Knowledge(ctx, p)
}

const token = "0123456789abcdef0123456789abcdef-test"

// world is a viewer on a real loopback listener over an in-memory store.
type world struct {
	m      *store.Memory
	base   string // http://127.0.0.1:port
	port   int
	client *http.Client // with the cookie, once login ran
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldOf(t, store.Options{InMemory: true})
}

// newWorldOf is newWorld over a store opened with o.
func newWorldOf(t *testing.T, o store.Options) *world {
	t.Helper()
	m, err := store.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	srv, err := viewer.New(viewer.Options{Memory: storeMemory{m}, Watch: m.Watch, Token: token, StatusEvery: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	port := ln.Addr().(*net.TCPAddr).Port
	jar, _ := cookiejar.New(nil)
	return &world{m: m, port: port, base: fmt.Sprintf("http://127.0.0.1:%d", port),
		client: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
}

// login opens the URL `mnemo ui` prints: the cookie is set, the token
// leaves the address.
func (w *world) login(t *testing.T) {
	t.Helper()
	var hops []string
	w.client.CheckRedirect = func(r *http.Request, _ []*http.Request) error { hops = append(hops, r.URL.String()); return nil }
	res, err := w.client.Get(viewer.URL(w.port, token))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || len(hops) != 1 || hops[0] != w.base+"/" || !strings.Contains(string(body), `<script type="module" src="/app.js">`) {
		t.Fatalf("login: %d via %q\n%s", res.StatusCode, hops, body)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
}

func (w *world) do(t *testing.T, method, path string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, w.base+path, nil)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := w.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (w *world) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	code, body := w.do(t, "GET", path, nil)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
}

// remember plays one turn into the store: a prompt, a read, the summary.
func remember(t *testing.T, m *store.Memory, csid string) {
	t.Helper()
	ctx := context.Background()
	if _, err := m.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: csid, Cwd: "/src/shop", Prompt: "why is the cart total wrong?", Platform: "claude-code"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: csid, Cwd: "/src/shop", ToolName: "Read",
		ToolInput:    json.RawMessage(`{"file_path":"/src/shop/cart/total.go"}`),
		ToolResponse: json.RawMessage(`{"type":"text","file":{"filePath":"/src/shop/cart/total.go","content":"package cart\nfunc roundTotal() {}"}}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: csid, LastUserMessage: "why is the cart total wrong?", LastAssistantMessage: "It rounds each line."}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := m.WaitIdle(wctx); err != nil {
		t.Fatal(err)
	}
}

// Without the token nothing is served; a wrong token, another Host (DNS
// rebinding) or another page's Origin is refused; a change without the
// page's header is refused.
func TestViewerRefusesStrangers(t *testing.T) {
	w := newWorld(t)
	for _, path := range []string{"/", "/app.js", "/style.css", "/api/records", "/api/status", "/api/stream"} {
		if code, body := w.do(t, "GET", path, nil); code != 401 || !strings.Contains(body, "mnemo ui") {
			t.Errorf("GET %s without the token: %d %q", path, code, body)
		}
	}
	if code, _ := w.do(t, "GET", "/?token=not-the-token", nil); code != 401 {
		t.Errorf("a wrong token: %d", code)
	}
	w.login(t)
	for _, jar := range w.client.Jar.Cookies(&url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", w.port)}) {
		if jar.Value != token {
			t.Errorf("cookie %s=%s", jar.Name, jar.Value)
		}
	}
	if code, _ := w.do(t, "GET", "/api/records", nil); code != 200 {
		t.Errorf("with the cookie: %d", code)
	}
	if code, body := w.do(t, "GET", "/api/records", map[string]string{"Host": fmt.Sprintf("evil.example:%d", w.port)}); code != 403 {
		t.Errorf("another Host: %d %s", code, body)
	}
	if code, _ := w.do(t, "GET", "/api/records", map[string]string{"Origin": "http://evil.example"}); code != 403 {
		t.Errorf("another Origin: %d", code)
	}
	if code, _ := w.do(t, "GET", "/api/records", map[string]string{"Origin": w.base}); code != 200 {
		t.Errorf("the page's own Origin: %d", code)
	}
	remember(t, w.m, "cc-1")
	var found memory.SearchResult
	w.getJSON(t, "/api/records", &found)
	if len(found.Hits) == 0 {
		t.Fatal("nothing to forget")
	}
	id := found.Hits[0].ID
	if code, _ := w.do(t, "DELETE", fmt.Sprintf("/api/records/%d", id), nil); code != 403 {
		t.Errorf("a forget without the page's header: %d", code)
	}
	if code, _ := w.do(t, "DELETE", fmt.Sprintf("/api/records/%d", id), map[string]string{"X-Mnemo": "1", "Origin": "http://evil.example"}); code != 403 {
		t.Errorf("a forget from another page: %d", code)
	}
	if r, _ := w.m.Get(context.Background(), memory.IDsParams{IDs: []uint64{id}}); len(r.Observations) != 1 {
		t.Errorf("a refused forget deleted #%d", id)
	}
}

// The API reads and changes the memory: the newest records (the same
// fact seen in two sessions is one record with its count), a search, a
// record whole, its session, the context preview with its reasons, the
// status, and forget; bad input is a 400 that says what was wrong.
func TestViewerAPI(t *testing.T) {
	w := newWorld(t)
	w.login(t)
	remember(t, w.m, "cc-1")
	remember(t, w.m, "codex:cc-2")

	// Both sessions read the same file as it was: one record, seen twice.
	var newest memory.SearchResult
	w.getJSON(t, "/api/records?limit=10", &newest)
	if len(newest.Hits) != 1 || newest.Hits[0].Count != 2 || newest.Hits[0].LastSeen.IsZero() {
		t.Fatalf("newest: %+v", newest)
	}
	var hit memory.SearchResult
	w.getJSON(t, "/api/records?q=roundTotal", &hit)
	if len(hit.Hits) == 0 {
		t.Errorf("a search for an identifier of the read found nothing")
	}
	var o memory.Observation
	w.getJSON(t, fmt.Sprintf("/api/records/%d", newest.Hits[0].ID), &o)
	if o.ID != newest.Hits[0].ID || o.Project != "shop" || len(o.FilesRead) == 0 || o.Count != 2 {
		t.Errorf("record: %+v", o)
	}
	var sess memory.SessionResult
	w.getJSON(t, "/api/sessions/"+url.PathEscape("codex:cc-2"), &sess)
	if sess.Session.ContentSessionID != "codex:cc-2" || len(sess.Prompts) != 1 || len(sess.Observations) != 1 || len(sess.Summaries) != 1 {
		t.Errorf("session: %+v", sess)
	}
	var page struct {
		Sessions []memory.Session `json:"sessions"`
		Total    int              `json:"total"`
		Projects []string         `json:"projects"`
	}
	w.getJSON(t, "/api/sessions?limit=1", &page)
	if page.Total != 2 || len(page.Sessions) != 1 || len(page.Projects) != 1 || page.Projects[0] != "shop" {
		t.Errorf("sessions: %+v", page)
	}
	w.getJSON(t, "/api/sessions?limit=1&offset=1", &page)
	if len(page.Sessions) != 1 {
		t.Errorf("the second page: %+v", page)
	}
	// A context gives no reads: it gives what was saved on purpose.
	if _, err := w.m.Save(context.Background(), memory.SaveParams{Project: "shop", Text: "Totals round once, at the end of the cart."}); err != nil {
		t.Fatal(err)
	}
	var ctx memory.ContextResult
	w.getJSON(t, "/api/context?project=shop", &ctx)
	if len(ctx.Items) == 0 || ctx.Items[0].Reason == "" || !strings.Contains(ctx.Context, "<mnemo-context") {
		t.Errorf("context: %+v", ctx)
	}
	var st struct {
		Status memory.Status `json:"status"`
	}
	w.getJSON(t, "/api/status", &st)
	if st.Status.Counts.Observations != 2 { // the read, seen twice, and the saved note
		t.Errorf("status: %+v", st.Status)
	}

	for path, want := range map[string]string{
		"/api/records?limit=5000":   "limit",
		"/api/records?until=soon":   "until",
		"/api/records/abc":          "not a record id",
		"/api/records?mode=psychic": "mode",
	} {
		if code, body := w.do(t, "GET", path, nil); code != 400 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %s, want 400 naming %q", path, code, body, want)
		}
	}
	if code, _ := w.do(t, "GET", "/api/records/999999", nil); code != 404 {
		t.Errorf("a missing record: %d", code)
	}
	if code, _ := w.do(t, "GET", "/api/sessions/nobody", nil); code != 404 {
		t.Errorf("a missing session: %d", code)
	}

	id := newest.Hits[0].ID
	if code, body := w.do(t, "DELETE", fmt.Sprintf("/api/records/%d", id), map[string]string{"X-Mnemo": "1"}); code != 200 || !strings.Contains(body, fmt.Sprint(id)) {
		t.Errorf("forget: %d %s", code, body)
	}
	if code, _ := w.do(t, "GET", fmt.Sprintf("/api/records/%d", id), nil); code != 404 {
		t.Errorf("a forgotten record: %d", code)
	}
	if code, _ := w.do(t, "DELETE", fmt.Sprintf("/api/records/%d", id), map[string]string{"X-Mnemo": "1"}); code != 404 {
		t.Errorf("forgetting it again: %d", code)
	}
}

// The live stream sends the status at once, then each change as it is
// made, within a second.
func TestViewerStream(t *testing.T) {
	w := newWorld(t)
	w.login(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", w.base+"/api/stream", nil)
	res, err := w.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	events := make(chan [2]string, 64)
	go func() {
		sc := bufio.NewScanner(res.Body)
		var event string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				events <- [2]string{event, strings.TrimPrefix(line, "data: ")}
			}
		}
		close(events)
	}()
	wait := func(kind memory.ChangeKind) memory.Change {
		t.Helper()
		deadline := time.After(time.Second)
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatal("the stream ended")
				}
				if e[0] != "change" {
					continue
				}
				var c memory.Change
				json.Unmarshal([]byte(e[1]), &c)
				if c.Kind == kind {
					return c
				}
			case <-deadline:
				t.Fatalf("no %s change within a second", kind)
			}
		}
	}
	select {
	case e := <-events:
		if e[0] != "status" {
			t.Errorf("first event %q, want the status", e[0])
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no status")
	}
	began := time.Now()
	remember(t, w.m, "cc-live")
	if c := wait(memory.KindObservation); c.ContentSessionID != "cc-live" || c.Title == "" {
		t.Errorf("observation: %+v", c)
	}
	t.Logf("the observation came %v after the prompt was sent", time.Since(began))
	if c := wait(memory.KindSummary); c.ContentSessionID != "cc-live" {
		t.Errorf("summary: %+v", c)
	}
}

// A record corrected from the viewer keeps what it said before; a pinned
// one is in every context of its project; a bad correction is a 400.
func TestViewerCorrectAndPin(t *testing.T) {
	w := newWorld(t)
	w.login(t)
	remember(t, w.m, "cc-1")
	var newest memory.SearchResult
	w.getJSON(t, "/api/records?limit=1", &newest)
	id := newest.Hits[0].ID
	send := func(method, path, body string, header map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, w.base+path, strings.NewReader(body))
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := w.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	page := map[string]string{"X-Mnemo": "1", "Content-Type": "application/json"}

	if code, body := send("POST", fmt.Sprintf("/api/records/%d/correct", id), `{"title":"Totals round once, at the end"}`, nil); code != 403 {
		t.Errorf("a correction without the page's header: %d %s", code, body)
	}
	code, body := send("POST", fmt.Sprintf("/api/records/%d/correct", id), `{"title":"Totals round once, at the end"}`, page)
	if code != 200 || !strings.Contains(body, `"changed":true`) {
		t.Fatalf("correct: %d %s", code, body)
	}
	var o memory.Observation
	w.getJSON(t, fmt.Sprintf("/api/records/%d", id), &o)
	if o.Title != "Totals round once, at the end" || len(o.Edits) != 1 || o.Edits[0].Title != newest.Hits[0].Title {
		t.Errorf("corrected: %q, edits %+v", o.Title, o.Edits)
	}
	for _, bad := range []string{`{}`, `not json`, `{"title":"   "}`} {
		if code, body := send("POST", fmt.Sprintf("/api/records/%d/correct", id), bad, page); code != 400 {
			t.Errorf("correct with %s: %d %s", bad, code, body)
		}
	}
	if code, _ := send("POST", "/api/records/999999/correct", `{"title":"x"}`, page); code != 404 {
		t.Errorf("correct a missing record: %d", code)
	}

	if code, body := send("PUT", fmt.Sprintf("/api/records/%d/pin", id), "", page); code != 200 || !strings.Contains(body, fmt.Sprintf(`"changed":[%d]`, id)) {
		t.Fatalf("pin: %d %s", code, body)
	}
	var ctx memory.ContextResult
	w.getJSON(t, "/api/context?project=shop", &ctx)
	if len(ctx.Items) == 0 || ctx.Items[0].ID != id || !strings.Contains(ctx.Items[0].Reason, "pinned") {
		t.Errorf("the pinned record in the context: %+v", ctx.Items)
	}
	if code, body := send("DELETE", fmt.Sprintf("/api/records/%d/pin", id), "", page); code != 200 || !strings.Contains(body, fmt.Sprintf(`"changed":[%d]`, id)) {
		t.Errorf("unpin: %d %s", code, body)
	}

	// Marked wrong: kept, shown as wrong, left out of the context.
	if code, body := send("PUT", fmt.Sprintf("/api/records/%d/wrong", id), "", page); code != 200 || !strings.Contains(body, fmt.Sprintf(`"changed":[%d]`, id)) {
		t.Fatalf("mark wrong: %d %s", code, body)
	}
	w.getJSON(t, fmt.Sprintf("/api/records/%d", id), &o)
	if !o.Wrong || o.State != memory.StateWrong {
		t.Errorf("marked wrong: wrong %v, state %q", o.Wrong, o.State)
	}
	w.getJSON(t, "/api/context?project=shop", &ctx)
	if len(ctx.Left) != 1 || ctx.Left[0].ID != id || slices.Contains(ctx.ObservationIDs, id) {
		t.Errorf("a wrong record in the context: ids %v, left %+v", ctx.ObservationIDs, ctx.Left)
	}
	if code, body := send("DELETE", fmt.Sprintf("/api/records/%d/wrong", id), "", page); code != 200 || !strings.Contains(body, fmt.Sprintf(`"changed":[%d]`, id)) {
		t.Errorf("unmark wrong: %d %s", code, body)
	}
}

// The knowledge view: what a project's records add up to, each line with
// its records, derived again on ?refresh=1; a decision marked wrong from
// the viewer leaves it at once.
func TestViewerKnowledge(t *testing.T) {
	w := newWorld(t)
	w.login(t)
	saved, err := w.m.Save(context.Background(), memory.SaveParams{Project: "shop", Type: memory.TypeDecision, Text: "Money is integer cents, never floats."})
	if err != nil {
		t.Fatal(err)
	}
	var k memory.Knowledge
	w.getJSON(t, "/api/knowledge?project=shop&refresh=1", &k)
	if k.Project != "shop" || len(k.Lines) != 1 || k.Lines[0].Kind != memory.KnowledgeDecision || len(k.Lines[0].IDs) != 1 || k.Lines[0].IDs[0] != saved.ID {
		t.Fatalf("knowledge: %+v", k)
	}
	req, _ := http.NewRequest("PUT", fmt.Sprintf("%s/api/records/%d/wrong", w.base, saved.ID), nil)
	req.Header.Set("X-Mnemo", "1")
	res, err := w.client.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("mark wrong: %v %v", err, res)
	}
	res.Body.Close()
	w.getJSON(t, "/api/knowledge?project=shop", &k)
	if len(k.Lines) != 0 {
		t.Errorf("a line whose record is marked wrong is still shown: %+v", k.Lines)
	}
	for path, want := range map[string]int{"/api/knowledge": 400} {
		if code, body := w.do(t, "GET", path, nil); code != want {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
}
