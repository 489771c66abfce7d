package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected output of the transcripts")

// Transcript tests replay client frames against `mnemo serve --stdio
// --remote=none`, a real subprocess with real LSP framing, and compare the
// normalized server frames with the expected ones. One txtar per scenario
// in testdata/transcripts: its comment says what it proves; the file "in"
// holds the client's messages, one JSON value per line, and these
// directives:
//
//	raw <text>    send <text> as one frame body as it is (malformed input)
//	wait-idle     wait until the search index is loaded, the memory
//	              agent has drained the queue and the projects' knowledge
//	              is derived after the sessions that ended
//	close         close stdin (the client goes away)
//	# …           a comment
//
// The file "out" holds the server's frames, one per line, keys sorted,
// volatile values (times, pids, paths, uuids) replaced by placeholders,
// then the exit status. `go test ./cmd/mnemo -run Transcript -update`
// rewrites "out".
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/transcripts/*.txtar")
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var in, want []byte
			for _, f := range ar.Files {
				switch f.Name {
				case "in":
					in = f.Data
				case "out":
					want = f.Data
				}
			}
			got := replay(t, in)
			if *update {
				for i := range ar.Files {
					if ar.Files[i].Name == "out" {
						ar.Files[i].Data = got
					}
				}
				if want == nil {
					ar.Files = append(ar.Files, txtar.File{Name: "out", Data: got})
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: server frames differ (-want +got):\n%s", file, diff.Diff("want", want, "got", got))
			}
		})
	}
}

// replay runs one transcript and returns the normalized output.
func replay(t *testing.T, in []byte) []byte {
	t.Helper()
	env := newTestEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mnemoBin, "serve", "--stdio", "--remote=none")
	cmd.Env = env.environ()
	cmd.Dir = env.project
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	}()

	frames := make(chan []byte, 256)
	go func() {
		defer close(frames)
		r := bufio.NewReader(stdout)
		for {
			body, err := readFrame(r)
			if err != nil {
				return
			}
			frames <- body
		}
	}()

	var out bytes.Buffer
	pending := map[string]bool{} // ids of calls not yet answered
	record := func(body []byte) {
		var msg map[string]any
		if err := json.Unmarshal(body, &msg); err != nil {
			fmt.Fprintf(&out, "<invalid frame %q>\n", body)
			return
		}
		if id, ok := msg["id"]; ok {
			delete(pending, fmt.Sprint(id))
		}
		out.Write(env.normalize(body))
		out.WriteByte('\n')
	}
	drain := func() {
		deadline := time.After(20 * time.Second)
		for len(pending) > 0 {
			select {
			case body, ok := <-frames:
				if !ok {
					return
				}
				record(body)
			case <-deadline:
				t.Fatalf("no answer to calls %v", pending)
			}
		}
	}
	send := func(body string) {
		if _, err := fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			t.Fatalf("write frame: %v", err)
		}
	}
	statusID := 0
	sc := bufio.NewScanner(bytes.NewReader(in))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case line == "close":
			drain()
			stdin.Close()
		case line == "wait-idle":
			drain()
			waitIdle(t, send, frames, &statusID)
		case strings.HasPrefix(line, "raw "):
			send(strings.TrimPrefix(line, "raw "))
			pending["<nil>"] = true // a malformed frame is answered with id null
			drain()
		default:
			var msg map[string]any
			if err := json.Unmarshal([]byte(line), &msg); err != nil {
				t.Fatalf("transcript line %q: %v", line, err)
			}
			send(env.expand(line))
			if id, ok := msg["id"]; ok {
				pending[fmt.Sprint(id)] = true
				drain()
			}
		}
	}
	drain()
	stdin.Close()
	for body := range frames {
		record(body)
	}
	err := cmd.Wait()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("server: %v", err)
	}
	fmt.Fprintf(&out, "exit status %d\n", code)
	return out.Bytes()
}

// waitIdle polls mnemo/status (with ids the transcript does not use) until
// no event is queued and no knowledge is pending; those frames are not
// recorded.
func waitIdle(t *testing.T, send func(string), frames <-chan []byte, n *int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		*n++
		id := fmt.Sprintf("wait-idle-%d", *n)
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"mnemo/status"}`, id))
		for body := range frames {
			var msg struct {
				ID     string `json:"id"`
				Result struct {
					Counts struct {
						Queued int `json:"queued"`
					} `json:"counts"`
					Embedder         string `json:"embedder"`
					KnowledgePending int    `json:"knowledgePending"`
				} `json:"result"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.ID == id {
				if msg.Result.Counts.Queued == 0 && !strings.Contains(msg.Result.Embedder, "(loading") && msg.Result.KnowledgePending == 0 {
					return
				}
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the index did not load or the queue did not drain")
}

func readFrame(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(strings.ToLower(line), "content-length:"); ok {
			length, err = strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return nil, err
			}
		}
	}
	if length < 0 {
		return nil, errors.New("frame without Content-Length")
	}
	body := make([]byte, length)
	_, err := io.ReadFull(r, body)
	return body, err
}

var (
	reRFC3339 = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	reClock   = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d`)
	reDate    = regexp.MustCompile(`\b\d{4}-\d\d-\d\d\b`) // a day (project knowledge's "last run")
	reUUID    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	rePID     = regexp.MustCompile(`"pid":\d+`)
	// The group sync's counts and lags depend on timing.
	reSync    = regexp.MustCompile(`"sync":\{[^{}]*\}`)
	reVersion = regexp.MustCompile(`"(version|serverVersion)":"[^"]*"`)
)

// normalize sorts keys and replaces what changes from run to run.
func (e *testEnv) normalize(body []byte) []byte {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return body
	}
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	s := string(b)
	s = strings.ReplaceAll(s, e.project, "$PROJECT")
	s = strings.ReplaceAll(s, e.home, "$MNEMO_HOME")
	s = reRFC3339.ReplaceAllString(s, "<time>")
	s = reClock.ReplaceAllString(s, "<clock>")
	s = reDate.ReplaceAllString(s, "<date>")
	s = reUUID.ReplaceAllString(s, "<uuid>")
	s = rePID.ReplaceAllString(s, `"pid":<pid>`)
	s = reSync.ReplaceAllString(s, `"sync":<sync>`)
	s = reVersion.ReplaceAllString(s, `"$1":"<version>"`)
	return []byte(s)
}

// expand puts the test's folders into a client message.
func (e *testEnv) expand(line string) string {
	return strings.NewReplacer("$PROJECT", e.project, "$MNEMO_HOME", e.home).Replace(line)
}
