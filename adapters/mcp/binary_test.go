package mcp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemo-dev/mnemo/adapters/mcp"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

var (
	buildOnce sync.Once
	buildDir  string
	builtBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// mnemoBin is $MNEMO_BIN, else a mnemo built once for this test run.
func mnemoBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MNEMO_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "mnemo-mcp-bin-"); buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "mnemo")
		out, err := exec.Command("go", "build", "-o", builtBin, "github.com/mnemo-dev/mnemo/cmd/mnemo").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// mnemoEnv is an environment whose home and Mnemo home are temp folders;
// the daemon exits on its own after a minute idle even if a test leaks it.
func mnemoEnv(t *testing.T) (env []string, mnemoHome string) {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	mnemoHome = filepath.Join(root, "mnemo")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(k, "MNEMO_") || k == "HOME" || k == "XDG_DATA_HOME"
	})
	env = append(env, "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"MNEMO_HOME="+mnemoHome, "MNEMO_IDLE_TIMEOUT=1m")
	return env, mnemoHome
}

// stopDaemon runs `mnemo daemon stop`, which returns once the daemon has
// exited (and closed Badger).
func stopDaemon(t *testing.T, bin string, env []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "daemon", "stop")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("mnemo daemon stop: %v\n%s", err, out)
	}
}

// startMCP runs `mnemo mcp` in the folder cwd and connects the Go SDK's
// client to it over its stdio.
func startMCP(t *testing.T, bin string, env []string, cwd string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, "mcp")
	cmd.Env, cmd.Dir = env, cwd
	client := sdk.NewClient(&sdk.Implementation{Name: "mnemo-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to mnemo mcp: %v", err)
	}
	return cs
}

func marker(t *testing.T) string {
	b := make([]byte, 8)
	rand.Read(b)
	return "zq" + hex.EncodeToString(b)
}

// filesHolding lists the files under dir whose bytes contain s.
func filesHolding(t *testing.T, dir, s string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// The store compresses its values: look inside every value frame
		// too, inflated.
		n, framed := bytes.Count(b, []byte(s)), 0
		for _, f := range store.Frames(b) {
			framed += bytes.Count(f, []byte(s))
		}
		if n+framed > 0 {
			rel, _ := filepath.Rel(dir, path)
			found = append(found, fmt.Sprintf("%s (%s file, %d bytes, %d copies, %d of them in value frames)", rel, kindOf(rel), len(b), n+framed, framed))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func kindOf(path string) string {
	if ext := filepath.Ext(path); ext != "" {
		return ext
	}
	return filepath.Base(path)
}

// TestForgetLeavesNoTrace saves two memories through the real `mnemo mcp`
// and its daemon, forgets one, stops the daemon (which closes Badger),
// and reads every file under $MNEMO_HOME, with the value frames of the
// store inflated: the forgotten memory's unique word is in none of them,
// while the kept one's is (so the check can see).
func TestForgetLeavesNoTrace(t *testing.T) {
	bin := mnemoBin(t)
	env, home := mnemoEnv(t)
	t.Cleanup(func() { stopDaemon(t, bin, env) })
	start := time.Now()
	cs := startMCP(t, bin, env, projectDir(t, "billing-api"))
	t.Logf("mnemo mcp (and its daemon) up in %v", time.Since(start).Round(time.Millisecond))

	gone, kept := marker(t), marker(t)
	var goneID uint64
	for _, m := range []string{gone, kept} {
		_, res := mustOK(t, cs, mcp.ToolSaveMemory, map[string]any{
			"text":  fmt.Sprintf("The staging credentials rotate through %s every Monday.\nAsk ops before touching it.", m),
			"files": []string{"ops/" + m + ".conf"},
		})
		var out mcp.SaveOutput
		remarshal(t, res.StructuredContent, &out)
		if m == gone {
			goneID = out.ID
		}
	}
	for _, args := range []map[string]any{{"query": gone}, {"files": []string{gone}}} {
		txt, _ := mustOK(t, cs, mcp.ToolSearch, args)
		if ids := rowIDs(t, txt); len(ids) == 0 || ids[0] != goneID {
			t.Fatalf("search %v before forget: %v, want #%d first:\n%s", args, ids, goneID, txt)
		}
	}
	txt, res := mustOK(t, cs, mcp.ToolForget, map[string]any{"ids": []uint64{goneID}})
	var out memory.ForgetResult
	remarshal(t, res.StructuredContent, &out)
	if !slices.Equal(out.Deleted, []uint64{goneID}) {
		t.Fatalf("forget: %s", txt)
	}
	if txt, _ := mustOK(t, cs, mcp.ToolSearch, map[string]any{"files": []string{gone}}); len(rowIDs(t, txt)) != 0 {
		t.Errorf("a file search still finds the forgotten memory:\n%s", txt)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close mnemo mcp: %v", err)
	}
	start = time.Now()
	stopDaemon(t, bin, env)
	t.Logf("daemon stopped in %v", time.Since(start).Round(time.Millisecond))

	found := filesHolding(t, home, kept)
	if len(found) == 0 {
		t.Fatalf("the kept memory's word %s is in no file under $MNEMO_HOME: the check cannot see stored text", kept)
	}
	t.Logf("the kept memory's word is in:\n  %s", strings.Join(found, "\n  "))
	if found := filesHolding(t, home, gone); len(found) > 0 {
		t.Errorf("the forgotten memory's word %s is still in:\n  %s", gone, strings.Join(found, "\n  "))
	}
}
