package vscode_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/vscode"
	"github.com/mnemo-dev/mnemo/memory"
)

// cart.py as committed, and as saved after its total gained a discount.
const (
	cartPy = `"""The shopping cart."""


def order_total(items):
    amount = sum(i.price for i in items)
    return amount


def checkout(cart):
    return cart.order_total()
`
	cartPyDiscount = `"""The shopping cart."""


def order_total(items):
    amount = sum(i.price for i in items)
    return applyLoyaltyDiscount(amount)


def checkout(cart):
    return cart.order_total()
`
)

// edits are the observations made from edits (not opens), oldest first.
func edits(obs []memory.Observation) []memory.Observation {
	var out []memory.Observation
	for _, o := range obs {
		if o.Tool != "Open" {
			out = append(out, o)
		}
	}
	return out
}

func mustOne(t *testing.T, obs []memory.Observation) memory.Observation {
	t.Helper()
	if len(obs) != 1 {
		var titles []string
		for _, o := range obs {
			titles = append(titles, fmt.Sprintf("%s %q", o.Tool, o.Title))
		}
		t.Fatalf("%d observations of edits, want 1: %s", len(obs), strings.Join(titles, "; "))
	}
	return obs[0]
}

func TestEditorDescribesASaveByTheFunctionItChangedAndTheIdentifierItAdded(t *testing.T) {
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, false)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
	cart := docIn(dir, "cart.py", "python", cartPy)
	c.open(cart)
	c.saveText(cart, cartPyDiscount)
	c.endWindows()

	o := mustOne(t, edits(c.observations()))
	if o.Tool != "Edit" || o.Source != memory.SourceEditor {
		t.Errorf("tool %q, source %q; want an Edit from the editor", o.Tool, o.Source)
	}
	if !strings.Contains(o.Title, "order_total in cart.py") || !slices.Contains(o.Facts, "symbols: order_total") {
		t.Errorf("title %q, facts %q: want the function order_total named", o.Title, o.Facts)
	}
	if !slices.Equal(o.FilesModified, []string{"cart.py"}) {
		t.Errorf("files modified %q, want cart.py", o.FilesModified)
	}
	if !strings.Contains(o.Evidence, "added: applyLoyaltyDiscount") {
		t.Errorf("evidence %q does not name the identifier the change added", o.Evidence)
	}
	if ids := c.search("applyLoyaltyDiscount"); !slices.Contains(ids, o.ID) {
		t.Errorf("searching applyLoyaltyDiscount finds %v, not the save #%d", ids, o.ID)
	}
	if s := c.session("vscode-1"); s.Platform != "vscode" {
		t.Errorf("session platform %q, want vscode", s.Platform)
	}
	// The event is a Claude Code Edit: the file and the hunk's old and new
	// text, with the original file and a structured patch in the response.
	var ev memory.Event
	for _, e := range c.rawEvents() {
		if e.ToolName == "Edit" {
			ev = e
		}
	}
	var in struct {
		FilePath  string `json:"file_path"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	}
	var out struct {
		OriginalFile    string `json:"originalFile"`
		StructuredPatch []struct {
			Lines []string `json:"lines"`
		} `json:"structuredPatch"`
	}
	if err := json.Unmarshal(ev.ToolInput, &in); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ev.ToolResponse, &out); err != nil {
		t.Fatal(err)
	}
	wantOld := "def order_total(items):\n    amount = sum(i.price for i in items)\n    return amount"
	if in.FilePath != filepath.Join(dir, "cart.py") || in.OldString != wantOld || in.NewString != strings.Replace(wantOld, "return amount", "return applyLoyaltyDiscount(amount)", 1) {
		t.Errorf("edit input = %+v; want the hunk with the context above it, not the next function", in)
	}
	if out.OriginalFile != cartPy || len(out.StructuredPatch) != 1 || !slices.Contains(out.StructuredPatch[0].Lines, "+    return applyLoyaltyDiscount(amount)") {
		t.Errorf("edit response = %+v", out)
	}
	if ev.Source != memory.SourceEditor || ev.Platform != "vscode" {
		t.Errorf("event source %q, platform %q; want the editor's", ev.Source, ev.Platform)
	}
}

func TestEditorNamesTheFunctionsEachHunkSitsInFarFromTheirFirstLines(t *testing.T) {
	long := func(name, last string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "func %s(lines []Line) int {\n", name)
		for i := range 8 {
			fmt.Fprintf(&b, "\t%s%d := len(lines) * %d\n\t_ = %s%d\n", strings.ToLower(name), i, i, strings.ToLower(name), i)
		}
		fmt.Fprintf(&b, "\treturn %s\n}\n", last)
		return b.String()
	}
	before := "package billing\n\n" + long("Invoice", "0") + "\n" + long("Refund", "0")
	after := "package billing\n\n" + long("Invoice", "roundCents(1)") + "\n" + long("Refund", "clampNegative(2)")
	dir := newFolder(t, map[string]string{"billing.go": before}, false)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
	doc := docIn(dir, "billing.go", "go", before)
	c.open(doc)
	c.saveText(doc, after)
	c.endWindows()

	o := mustOne(t, edits(c.observations()))
	if o.Tool != "MultiEdit" || !slices.Contains(o.Facts, "symbols: Invoice, Refund") {
		t.Errorf("%s %q, facts %q: want a MultiEdit naming Invoice and Refund", o.Tool, o.Title, o.Facts)
	}
	for _, id := range []string{"roundCents", "clampNegative"} {
		if !strings.Contains(o.Evidence, id) {
			t.Errorf("evidence %q lacks %s", o.Evidence, id)
		}
	}
}

func TestEditorGathersTheSavesOfOneFileWithinTheWindowIntoOneObservationOfTheNetChange(t *testing.T) {
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, false)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
	cart := docIn(dir, "cart.py", "python", cartPy)
	c.open(cart)
	// Auto-save: ten saves, five seconds apart, as the change is typed.
	text := cartPy
	for i := range 10 {
		text = strings.Replace(text, "    return amount\n", fmt.Sprintf("    amount = round(amount, %d)\n    return amount\n", i), 1)
		c.saveText(cart, text)
		c.settle()
		c.clock.Advance(5 * time.Second)
	}
	if got := c.events(); len(got) != 1 {
		t.Fatalf("queued %q within the window, want only the open", got)
	}
	c.clock.Advance(vscode.DefaultSaveWindow - 50*time.Second)
	o := mustOne(t, edits(c.observations()))
	var ev memory.Event
	for _, e := range c.rawEvents() {
		if e.ToolName == "Edit" {
			ev = e
		}
	}
	var in struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	}
	if err := json.Unmarshal(ev.ToolInput, &in); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(in.OldString, "round(") || strings.Count(in.NewString, "round(") != 10 {
		t.Errorf("the edit is not the net change of the ten saves:\nold %q\nnew %q", in.OldString, in.NewString)
	}
	if !slices.Contains(o.Facts, "symbols: order_total") {
		t.Errorf("facts %q do not name order_total", o.Facts)
	}
	// The next save starts a new window, from the text the last one saved.
	c.saveText(cart, strings.Replace(text, "def checkout(cart):\n    return", "def checkout(cart):\n    audit(cart)\n    return", 1))
	c.endWindows()
	if n := len(edits(c.observations())); n != 2 {
		t.Fatalf("%d observations of edits after a second window, want 2", n)
	}
}

func TestEditorEndsAWindowWithinTheIdleDelayWhenThatIsShorter(t *testing.T) {
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, false)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{IdleMinutes: 0.5})
	cart := docIn(dir, "cart.py", "python", cartPy)
	c.open(cart)
	c.saveText(cart, cartPyDiscount)
	c.settle()
	c.clock.Advance(30*time.Second - time.Nanosecond)
	if n := len(edits(c.observations())); n != 0 {
		t.Fatalf("%d observations before 30 s, want 0", n)
	}
	c.clock.Advance(time.Nanosecond)
	mustOne(t, edits(c.observations()))
	if got := c.events(); !slices.Equal(got[1:], []string{"Edit " + filepath.Join(dir, "cart.py"), "Stop"}) {
		t.Fatalf("events %q: want the edit, then the idle Stop", got)
	}
}

func TestEditorRemembersEverySaveOnItsOwnWhenTheClientTurnsTheWindowOff(t *testing.T) {
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, false)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{SaveWindowSeconds: -1})
	cart := docIn(dir, "cart.py", "python", cartPy)
	c.open(cart)
	c.saveText(cart, cartPyDiscount)
	c.saveText(cart, strings.Replace(cartPyDiscount, "cart.order_total()", "cart.order_total() + shippingFee(cart)", 1))
	if n := len(edits(c.observations())); n != 2 {
		t.Fatalf("%d observations of two saves without a window, want 2", n)
	}
}

func TestEditorRemembersNothingOfASaveThatOnlyReformats(t *testing.T) {
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, false)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
	cart := docIn(dir, "cart.py", "python", cartPy)
	c.open(cart)
	reformatted := strings.ReplaceAll(strings.ReplaceAll(cartPy, "    ", "\t"), "(items):", "( items ):  ") + "\n\n"
	c.saveText(cart, reformatted)
	c.saveText(cart, reformatted) // and saved again unchanged
	c.endWindows()
	if obs := edits(c.observations()); len(obs) != 0 {
		t.Fatalf("a reformatting save made %d observations, want none: %q", len(obs), obs[0].Title)
	}

	// A real change with a reformatting elsewhere: only the change.
	changed := strings.Replace(reformatted, "return cart.order_total()", "return cart.order_total() - couponValue(cart)", 1)
	changed = strings.Replace(changed, `"""The shopping cart."""`, `"""The shopping cart."""   `, 1)
	c.saveText(cart, changed)
	c.endWindows()
	o := mustOne(t, edits(c.observations()))
	if o.Tool != "Edit" || !strings.Contains(o.Title, "checkout") {
		t.Errorf("%s %q: want one Edit of checkout, without the whitespace hunk", o.Tool, o.Title)
	}
}

func TestEditorRemembersNothingOfIgnoredGeneratedBinaryOrHugeFiles(t *testing.T) {
	huge := strings.Repeat("x = 1  # a line of a file of five megabytes\n", 5<<20/44+1)
	tests := []struct {
		name, file, text, saved string
		onDisk                  bool // saved without text: the server reads it
	}{
		{name: "ignored by .gitignore", file: "debug/trace.py", text: "def a():\n    pass\n", saved: "def a():\n    return tracedValue\n"},
		{name: "under node_modules", file: "node_modules/lib/index.js", text: "function a() {}\n", saved: "function a() { return vendoredThing }\n"},
		{name: "under vendor", file: "vendor/x/y.go", text: "package y\n", saved: "package y\n\nfunc Vendored() {}\n"},
		{name: "generated", file: "pb/cart.pb.go", text: "// Code generated by protoc-gen-go. DO NOT EDIT.\n\npackage pb\n", saved: "// Code generated by protoc-gen-go. DO NOT EDIT.\n\npackage pb\n\nfunc GeneratedThing() {}\n"},
		{name: "binary", file: "logo.txt", text: "plain\n", saved: "plain\x00binary\n"},
		// Sent, it arrives with U+FFFD where the bytes were (JSON is UTF-8).
		{name: "not UTF-8, sent", file: "latin1.txt", text: "plain\n", saved: "caf\xe9 cr\xe8me\n"},
		{name: "not UTF-8, on disk", file: "latin2.txt", text: "plain\n", saved: "caf\xe9 cr\xe8me\n", onDisk: true},
		{name: "five megabytes, sent", file: "big.py", text: "x = 0\n", saved: huge},
		{name: "five megabytes, on disk", file: "big2.py", text: "x = 0\n", saved: huge, onDisk: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := newFolder(t, map[string]string{".gitignore": "debug/\n", "cart.py": cartPy}, true)
			writeFile(t, filepath.Join(dir, tt.file), tt.text)
			c := newEditorConn(t)
			c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
			doc := docIn(dir, tt.file, "plaintext", tt.text)
			c.open(doc)
			if tt.onDisk {
				writeFile(t, filepath.Join(dir, tt.file), tt.saved)
				c.save(doc)
			} else {
				c.saveText(doc, tt.saved)
			}
			c.endWindows()
			if obs := edits(c.observations()); len(obs) != 0 {
				t.Fatalf("%d observations, want none: %s %q", len(obs), obs[0].Tool, obs[0].Title)
			}
			// The connection goes on: a save of another file is remembered.
			cart := docIn(dir, "cart.py", "python", cartPy)
			c.saveText(cart, cartPyDiscount)
			c.endWindows()
			mustOne(t, edits(c.observations()))
		})
	}
}

func TestEditorReadsWhatAFileWasFromGitAtTheFirstSaveOfAFileItNeverOpened(t *testing.T) {
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, true)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
	writeFile(t, filepath.Join(dir, "cart.py"), cartPyDiscount)
	c.saveText(docIn(dir, "cart.py", "python", ""), cartPyDiscount)
	rates := "def vat_rate(country):\n    return 0.2\n"
	writeFile(t, filepath.Join(dir, "rates.py"), rates)
	c.saveText(docIn(dir, "rates.py", "python", ""), rates) // not in HEAD: a new file
	c.endWindows()

	obs := edits(c.observations())
	if len(obs) != 2 {
		t.Fatalf("%d observations, want the edit of cart.py and the new rates.py", len(obs))
	}
	if o := obs[0]; o.Tool != "Edit" || !strings.Contains(o.Title, "order_total in cart.py") || !strings.Contains(o.Evidence, "applyLoyaltyDiscount") {
		t.Errorf("%s %q (%q): want the change of order_total against HEAD", o.Tool, o.Title, o.Evidence)
	}
	if o := obs[1]; o.Tool != "Write" || o.Type != memory.TypeFeature || o.Title != "Created rates.py with vat_rate" {
		t.Errorf("%s %s %q: want rates.py created with vat_rate", o.Tool, o.Type, o.Title)
	}
}

func TestEditorReadsTheSavedFileFromDiskWhenTheClientSendsNoText(t *testing.T) {
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, false)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
	cart := docIn(dir, "cart.py", "python", cartPy)
	c.open(cart)
	writeFile(t, filepath.Join(dir, "cart.py"), cartPyDiscount)
	c.save(cart)
	c.endWindows()
	if o := mustOne(t, edits(c.observations())); !strings.Contains(o.Title, "order_total") || !strings.Contains(o.Evidence, "applyLoyaltyDiscount") {
		t.Errorf("%q (%q): want the change read from disk", o.Title, o.Evidence)
	}
}

func TestEditorKeepsNoPrivatePartOfASavedFile(t *testing.T) {
	const marker = "pinmark7f3a"
	saved := strings.Replace(cartPy, "    return amount\n", "    # <private>the admin pin is "+marker+"</private>\n    return withTax(amount)\n", 1)
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, false)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
	cart := docIn(dir, "cart.py", "python", cartPy)
	c.open(cart)
	c.saveText(cart, saved)
	c.endWindows()
	o := mustOne(t, edits(c.observations()))
	if !strings.Contains(o.Evidence, "withTax") {
		t.Errorf("evidence %q: the public part of the change is lost", o.Evidence)
	}
	for _, ev := range c.rawEvents() {
		if strings.Contains(string(ev.ToolInput)+string(ev.ToolResponse), marker) {
			t.Fatalf("the queued %s event holds the private marker: %s", ev.ToolName, ev.ToolInput)
		}
	}
	b, _ := json.Marshal(c.observations())
	if strings.Contains(string(b), marker) {
		t.Fatalf("an observation holds the private marker: %s", b)
	}
}

func TestEditorRemembersTheWaitingSavesBeforeTheIdleStopAndItsSummaryNamesTheFunctions(t *testing.T) {
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, false)
	c := newEditorConn(t)
	// The window is as long as the idle delay: both end at once.
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{IdleMinutes: 1})
	cart := docIn(dir, "cart.py", "python", cartPy)
	c.open(cart)
	c.saveText(cart, cartPyDiscount)
	c.settle()
	c.clock.Advance(time.Minute)
	path := filepath.Join(dir, "cart.py")
	if got := c.events(); !slices.Equal(got, []string{"Open " + path, "Edit " + path, "Stop"}) {
		t.Fatalf("events %q: want the edit before the Stop", got)
	}
	sums := c.summaries("vscode-1")
	if len(sums) != 1 || !strings.Contains(sums[0].Completed, "Changed order_total in cart.py.") {
		t.Fatalf("summaries %+v: want one naming order_total in cart.py", sums)
	}
}

func TestEditorRemembersTheWaitingSavesBeforeTheClientsStopAndTellsItWhatChanged(t *testing.T) {
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, false)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
	cart := docIn(dir, "cart.py", "python", cartPy)
	c.open(cart)
	c.saveText(cart, cartPyDiscount)
	c.settle()
	p := memory.StopParams{ContentSessionID: "vscode-1"}
	c.editor.Stop(ctxT(t), &p) // what cmd/mnemo does on mnemo/stop
	if p.LastAssistantMessage != "Changed order_total in cart.py.\n" {
		t.Errorf("the Stop's message = %q, want the function the saves changed", p.LastAssistantMessage)
	}
	mustOne(t, edits(c.observations()))
	// Another session's Stop through the same connection changes nothing.
	other := memory.StopParams{ContentSessionID: "claude-1"}
	c.editor.Stop(ctxT(t), &other)
	if other.LastAssistantMessage != "" {
		t.Errorf("another session's Stop got %q", other.LastAssistantMessage)
	}
}

func TestEditorRemembersTheWaitingSavesBeforeSessionEndOnShutdown(t *testing.T) {
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, false)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
	cart := docIn(dir, "cart.py", "python", cartPy)
	c.open(cart)
	c.saveText(cart, cartPyDiscount)
	c.shutdown()
	path := filepath.Join(dir, "cart.py")
	if got := c.events(); !slices.Equal(got, []string{"Open " + path, "Edit " + path, "Stop"}) {
		t.Fatalf("events %q: want the edit, then the Stop", got)
	}
	if s := c.session("vscode-1"); s.Status != memory.StatusCompleted {
		t.Fatalf("status %q, want completed", s.Status)
	}
	if sums := c.summaries("vscode-1"); len(sums) != 1 || !strings.Contains(sums[0].Completed, "order_total") {
		t.Fatalf("summaries %+v: want one naming order_total", sums)
	}
}

func TestEditorRemembersTheWaitingSavesWhenTheConnectionEndsWithoutShutdown(t *testing.T) {
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, false)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
	cart := docIn(dir, "cart.py", "python", cartPy)
	c.open(cart)
	c.saveText(cart, cartPyDiscount)
	c.exit()
	mustOne(t, edits(c.observations()))
	if n := c.stops(); n != 0 {
		t.Fatalf("%d Stops without shutdown, want none", n)
	}
}

func TestEditorRemembersTheSavesOfADocumentWhenItClosesAndForgetsItsText(t *testing.T) {
	dir := newFolder(t, map[string]string{"cart.py": cartPy}, false)
	c := newEditorConn(t)
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
	cart := docIn(dir, "cart.py", "python", cartPy)
	c.open(cart)
	c.settle()
	kept := c.editor.TextBytes()
	c.saveText(cart, cartPyDiscount)
	c.close(cart)
	mustOne(t, edits(c.observations()))
	if n := c.editor.TextBytes(); n != 0 || kept < len(cartPy) {
		t.Fatalf("kept %d bytes while open and %d after close, want the text then nothing", kept, n)
	}
}

func TestEditorKeepsTheTextsOfManyDocumentsWithinItsBudget(t *testing.T) {
	const budget = 64 << 10
	dir := newFolder(t, nil, false)
	c := newEditorConnWith(t, vscode.Options{TextBytes: budget})
	c.initializeIn(dir, "vscode-1", vscode.InitOptions{})
	body := strings.Repeat("x = 1\n", 400) // 2.4 KB
	for i := range 200 {
		c.open(docIn(dir, fmt.Sprintf("m%03d.py", i), "python", body))
	}
	c.settle()
	if n := c.editor.TextBytes(); n > budget || n < budget/2 {
		t.Fatalf("200 open documents keep %d bytes, want at most the budget %d (and use it)", n, budget)
	}
	// The most recent documents keep their text: a save of one is an edit.
	last := docIn(dir, "m199.py", "python", body)
	c.saveText(last, body+"def addedLater():\n    pass\n")
	c.endWindows()
	if o := mustOne(t, edits(c.observations())); o.Tool != "Edit" {
		t.Fatalf("%s %q: the newest document lost its text", o.Tool, o.Title)
	}
}
