package vscode_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/mnemo-dev/mnemo/adapters/vscode"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc"
)

func TestEditorStartsTheSessionOnInitializeAndAnswersWithItsContext(t *testing.T) {
	c := newEditorConn(t)
	res := c.mustInitialize("vscode-1")

	var caps map[string]any
	if err := json.Unmarshal(res.Capabilities, &caps); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"textDocumentSync": map[string]any{
		"openClose": true, "change": 0.0, "save": map[string]any{"includeText": true},
	}}
	if !reflect.DeepEqual(caps, want) {
		t.Errorf("capabilities = %s, want open, close and save with the text, no changes", res.Capabilities)
	}
	if res.ServerInfo.Name != "mnemo" || res.ServerInfo.Version != "test" {
		t.Errorf("serverInfo = %+v", res.ServerInfo)
	}
	s := c.session("vscode-1")
	if res.Mnemo == nil || res.Mnemo.SessionID != s.ID || res.Mnemo.Project != project ||
		!strings.Contains(res.Mnemo.Context, `<mnemo-context project="billing-api">`) {
		t.Errorf("mnemo = %+v, want the context of session %d in %s", res.Mnemo, s.ID, project)
	}
	// An editor has no prompts.
	if s.Project != project || s.Cwd != root || s.Platform != "vscode" || s.Status != memory.StatusInitialized || s.PromptCounter != 0 {
		t.Errorf("session = %+v", s)
	}
}

func TestEditorTakesTheSessionFromTheOptionsThenFromLSPsParams(t *testing.T) {
	tests := []struct {
		name   string
		params func(*protocol.InitializeParams)
		opts   vscode.InitOptions
		// the stored session; an empty csid wants one made up by the editor
		csid, cwd, platform string
	}{
		{name: "the options win",
			opts: vscode.InitOptions{ClientKind: "neovim", ContentSessionID: " nvim-7 ", Cwd: root + "/billing", Project: project},
			csid: "nvim-7", cwd: root + "/billing", platform: "neovim"},
		{name: "the first file workspace folder is the cwd",
			params: func(p *protocol.InitializeParams) {
				p.WorkspaceFolders = protocol.NewNullable([]protocol.WorkspaceFolder{
					{URI: "vscode-vfs://github/acme/billing-api", Name: "remote"},
					workspace,
				})
			},
			opts: vscode.InitOptions{ContentSessionID: "code-1", Project: project},
			csid: "code-1", cwd: root, platform: "Visual Studio Code"},
		{name: "without workspace folders the root URI is the cwd",
			params: func(p *protocol.InitializeParams) {
				p.WorkspaceFolders = protocol.NullNullable[[]protocol.WorkspaceFolder]()
				u := workspace.URI
				p.RootURI = &u
			},
			opts: vscode.InitOptions{ContentSessionID: "code-2", Project: project},
			csid: "code-2", cwd: root, platform: "Visual Studio Code"},
		{name: "a client without a name is lsp, and a session id is made up when none is given",
			params: func(p *protocol.InitializeParams) { p.ClientInfo = protocol.ClientInfo{} },
			opts:   vscode.InitOptions{Project: project},
			cwd:    root, platform: "lsp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newEditorConn(t)
			p := initParams(t, tt.opts)
			if tt.params != nil {
				tt.params(p)
			}
			if _, err := c.initialize(p); err != nil {
				t.Fatal(err)
			}
			ss := c.sessions()
			if len(ss) != 1 {
				t.Fatalf("%d sessions, want 1", len(ss))
			}
			s := ss[0]
			switch {
			case tt.csid == "" && !strings.HasPrefix(s.ContentSessionID, "editor-"):
				t.Errorf("contentSessionId = %q, want one made up (editor-…)", s.ContentSessionID)
			case tt.csid != "" && s.ContentSessionID != tt.csid:
				t.Errorf("contentSessionId = %q, want %q", s.ContentSessionID, tt.csid)
			}
			if s.Cwd != tt.cwd || s.Platform != tt.platform || s.Project != project {
				t.Errorf("session cwd %q, platform %q, project %q; want %q, %q, %q", s.Cwd, s.Platform, s.Project, tt.cwd, tt.platform, project)
			}
		})
	}
}

func TestEditorRefusesASecondInitializeAndStartsNoSession(t *testing.T) {
	c := newEditorConn(t)
	c.mustInitialize("vscode-1")
	_, err := c.initialize(initParams(t, vscodeOptions("vscode-2")))
	if rpc.CodeOf(err) != rpc.CodeInvalidRequest {
		t.Fatalf("second initialize: %v (%v), want invalid request", err, rpc.CodeOf(err))
	}
	ss := c.sessions()
	if len(ss) != 1 || ss[0].ContentSessionID != "vscode-1" {
		t.Fatalf("sessions = %+v, want only vscode-1", ss)
	}
	// The connection goes on with the first session.
	c.save(invoice)
	c.endWindows()
	if obs := c.observations(); len(obs) != 1 || obs[0].ContentSessionID != "vscode-1" {
		t.Fatalf("observations = %+v, want the save in vscode-1", obs)
	}
}

func TestEditorRefusesAnotherProtocolVersionBeforeTheSessionStarts(t *testing.T) {
	c := newEditorConn(t)
	opts := vscodeOptions("vscode-1")
	opts.ProtocolVersion = rpc.ProtocolVersion + 1
	_, err := c.initialize(initParams(t, opts))
	if rpc.CodeOf(err) != rpc.CodeVersionMismatch {
		t.Fatalf("initialize: %v (%v), want a version mismatch", err, rpc.CodeOf(err))
	}
	if both := fmt.Sprintf("protocol %d, this server %d", rpc.ProtocolVersion+1, rpc.ProtocolVersion); !strings.Contains(err.Error(), both) {
		t.Errorf("the error %q does not name both versions (%q)", err, both)
	}
	if ss := c.sessions(); len(ss) != 0 {
		t.Fatalf("sessions = %+v, want none", ss)
	}
	// The refused initialize did not count: an editor of this version may
	// initialize.
	c.mustInitialize("vscode-1")
	if ss := c.sessions(); len(ss) != 1 {
		t.Fatalf("%d sessions, want 1", len(ss))
	}
}

func TestEditorRefusesShutdownBeforeInitialize(t *testing.T) {
	c := newEditorConn(t)
	err := c.call(protocol.MethodShutdown, nil, nil)
	if rpc.CodeOf(err) != rpc.CodeNotInitialized {
		t.Fatalf("shutdown: %v (%v), want not initialized", err, rpc.CodeOf(err))
	}
	if c.editor.ShutDown() {
		t.Error("ShutDown() = true after a refused shutdown")
	}
}

func TestEditorRecordsAFileAsReadOncePerSession(t *testing.T) {
	c := newEditorConn(t)
	c.mustInitialize("vscode-1")
	c.open(invoice)
	reopened := invoice
	reopened.Version = 2
	c.open(reopened)
	c.close(invoice)
	c.open(invoice)
	c.open(untitled) // not a file
	c.open(tax)

	wantEvents := []string{"Open " + root + "/billing/invoice.go", "Open " + root + "/billing/tax.go"}
	if got := c.events(); !slices.Equal(got, wantEvents) {
		t.Fatalf("queued %q, want %q", got, wantEvents)
	}
	obs := c.observations()
	var read [][]string
	for _, o := range obs {
		if o.Tool != "Open" || o.ContentSessionID != "vscode-1" || len(o.FilesModified) != 0 {
			t.Errorf("observation %d: tool %q, session %q, modified %v; want a read in vscode-1", o.ID, o.Tool, o.ContentSessionID, o.FilesModified)
		}
		read = append(read, o.FilesRead)
	}
	want := [][]string{{"billing/invoice.go"}, {"billing/tax.go"}}
	if fmt.Sprint(read) != fmt.Sprint(want) {
		t.Fatalf("files read = %v, want %v", read, want)
	}
}

func TestEditorRecordsASaveWhoseTextItCannotHaveAsAModificationOfTheFile(t *testing.T) {
	c := newEditorConn(t)
	c.mustInitialize("vscode-1")
	c.open(invoice)
	// No text with the saves, and none on disk to read: that the files
	// were saved is all there is to remember.
	c.save(invoice)
	c.save(invoice)
	c.save(tax) // never opened
	c.save(untitled)
	if got := c.events(); len(got) != 1 {
		t.Fatalf("queued %q before the save window ended, want only the open", got)
	}
	c.endWindows()

	// The saves of a file within the window are one event; the untitled
	// document is no file.
	wantEvents := []string{
		"Open " + root + "/billing/invoice.go",
		"Save " + root + "/billing/invoice.go",
		"Save " + root + "/billing/tax.go",
	}
	if got := c.events(); !slices.Equal(got, wantEvents) {
		t.Fatalf("queued %q, want %q", got, wantEvents)
	}
	var saved []string
	for _, o := range c.observations() {
		if o.Tool != "Save" {
			continue
		}
		if o.ContentSessionID != "vscode-1" || o.Project != project {
			t.Errorf("observation %d is in session %q of %q", o.ID, o.ContentSessionID, o.Project)
		}
		saved = append(saved, o.FilesModified...)
	}
	if want := []string{"billing/invoice.go", "billing/tax.go"}; !slices.Equal(saved, want) {
		t.Fatalf("files modified by saves = %v, want %v", saved, want)
	}
}

func TestEditorSummarizesIdleWorkWithExactlyOneStop(t *testing.T) {
	c := newEditorConn(t)
	c.mustInitialize("vscode-1")
	c.open(invoice)
	c.save(invoice)
	c.settle()

	c.clock.Advance(vscode.DefaultIdle - time.Nanosecond)
	if n := c.stops(); n != 0 {
		t.Fatalf("%d Stops before the idle delay, want 0", n)
	}
	c.clock.Advance(time.Nanosecond)
	if n := c.stops(); n != 1 {
		t.Fatalf("%d Stops after the idle delay, want 1", n)
	}
	sums := c.summaries("vscode-1")
	if len(sums) != 1 || !slices.Contains(sums[0].FilesModified, "billing/invoice.go") {
		t.Fatalf("summaries after the idle delay = %+v, want one of the save", sums)
	}
	c.clock.Advance(24 * time.Hour)
	if n := c.stops(); n != 1 {
		t.Fatalf("%d Stops a day later with nothing new, want 1", n)
	}
	// Nothing new since the idle Stop: shutdown only ends the session.
	c.shutdown()
	if n := c.stops(); n != 1 {
		t.Fatalf("%d Stops after shutdown, want 1", n)
	}
	if n := len(c.summaries("vscode-1")); n != 1 {
		t.Fatalf("%d summaries after shutdown, want 1", n)
	}
	if s := c.session("vscode-1"); s.Status != memory.StatusCompleted {
		t.Fatalf("status %q after shutdown, want completed", s.Status)
	}
}

func TestEditorRestartsTheIdleDelayOnEveryEvent(t *testing.T) {
	c := newEditorConn(t)
	c.mustInitialize("vscode-1")
	c.open(invoice)
	c.settle()
	c.clock.Advance(vscode.DefaultIdle - time.Minute)
	c.save(invoice)
	c.settle()
	c.clock.Advance(vscode.DefaultIdle - time.Minute)
	c.notify(protocol.MethodTextDocumentDidChange, &protocol.DidChangeTextDocumentParams{
		TextDocument: protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: invoice.URI}, Version: 2},
	})
	c.settle()
	c.clock.Advance(vscode.DefaultIdle - time.Minute)
	if n := c.stops(); n != 0 {
		t.Fatalf("%d Stops while events kept coming, want 0", n)
	}
	c.clock.Advance(time.Minute)
	if n := c.stops(); n != 1 {
		t.Fatalf("%d Stops once quiet for the idle delay, want 1", n)
	}
}

func TestEditorWaitsTheIdleMinutesTheClientAsksFor(t *testing.T) {
	tests := []struct {
		name        string
		idleMinutes float64
		delay       time.Duration // 0: never
	}{
		{name: "absent is the default", idleMinutes: 0, delay: vscode.DefaultIdle},
		{name: "fractions count", idleMinutes: 1.5, delay: 90 * time.Second},
		{name: "negative turns it off", idleMinutes: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newEditorConn(t)
			opts := vscodeOptions("vscode-1")
			opts.IdleMinutes = tt.idleMinutes
			c.mustInitializeWith(opts)
			c.save(invoice)
			c.settle()
			if tt.delay == 0 {
				c.clock.Advance(365 * 24 * time.Hour)
				if n := c.stops(); n != 0 {
					t.Fatalf("%d Stops a year later, want none", n)
				}
				return
			}
			c.clock.Advance(tt.delay - time.Nanosecond)
			if n := c.stops(); n != 0 {
				t.Fatalf("%d Stops just before %v, want 0", n, tt.delay)
			}
			c.clock.Advance(time.Nanosecond)
			if n := c.stops(); n != 1 {
				t.Fatalf("%d Stops after %v, want 1", n, tt.delay)
			}
		})
	}
}

func TestEditorMakesNoIdleStopAfterTheClientsOwnStopUntilTheNextEvent(t *testing.T) {
	c := newEditorConn(t)
	c.mustInitialize("vscode-1")
	c.save(invoice)
	c.settle()
	c.editor.Stop(ctxT(t), &memory.StopParams{ContentSessionID: "vscode-1"}) // what cmd/mnemo does on mnemo/stop
	c.clock.Advance(vscode.DefaultIdle)
	if n := c.stops(); n != 0 {
		t.Fatalf("%d idle Stops after the client's own Stop, want 0", n)
	}
	c.save(tax)
	c.settle()
	c.clock.Advance(vscode.DefaultIdle)
	if n := c.stops(); n != 1 {
		t.Fatalf("%d idle Stops after a new save went quiet, want 1", n)
	}
}

func TestEditorSummarizesTheWorkAndEndsTheSessionOnceOnShutdown(t *testing.T) {
	c := newEditorConn(t)
	c.mustInitialize("vscode-1")
	c.open(invoice)
	c.save(invoice)
	c.shutdown()

	if !c.editor.ShutDown() {
		t.Error("ShutDown() = false after shutdown")
	}
	s := c.session("vscode-1")
	if s.Status != memory.StatusCompleted || s.CompletedAt.IsZero() {
		t.Fatalf("session status %q, completed at %v; want completed", s.Status, s.CompletedAt)
	}
	sums := c.summaries("vscode-1")
	if len(sums) != 1 || !slices.Contains(sums[0].FilesModified, "billing/invoice.go") {
		t.Fatalf("summaries = %+v, want one of the save", sums)
	}
	// The idle timer is off, and a second shutdown does nothing more.
	c.clock.Advance(24 * time.Hour)
	c.shutdown()
	if n := c.stops(); n != 1 {
		t.Fatalf("%d Stops, want 1", n)
	}
	if again := c.session("vscode-1"); !again.CompletedAt.Equal(s.CompletedAt) {
		t.Fatalf("completed again at %v, first at %v", again.CompletedAt, s.CompletedAt)
	}
	c.exit()
}

func TestEditorLeavesTheSessionOpenAndUnsummarizedOnExitWithoutShutdown(t *testing.T) {
	c := newEditorConn(t)
	c.mustInitialize("vscode-1")
	c.open(invoice)
	c.save(invoice)
	c.exit()

	if c.editor.ShutDown() {
		t.Error("ShutDown() = true without shutdown (the process must exit with 1)")
	}
	c.clock.Advance(24 * time.Hour) // the connection is gone: no idle Stop either
	if s := c.session("vscode-1"); s.Status != memory.StatusInitialized || !s.CompletedAt.IsZero() {
		t.Fatalf("session status %q, completed at %v; want it still open", s.Status, s.CompletedAt)
	}
	if n, sums := c.stops(), len(c.summaries("vscode-1")); n != 0 || sums != 0 {
		t.Fatalf("%d Stops and %d summaries, want none", n, sums)
	}
	if n := len(c.observations()); n != 2 {
		t.Fatalf("%d observations, want the open and the save", n)
	}
}
