package vscode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/privacy"
)

// The documents' events. A document's text, as the editor last had it on
// disk, is kept from didOpen and from each save (the client sends it:
// save.includeText; a client that does not is read from disk). A save
// starts a window for its file; the saves within it become one observation
// of the net change when it ends, shaped as a Claude Code Edit (the file
// and the old and new text of each changed hunk) so that the memory agent
// describes it the way it describes an agent's edit. Texts are stripped of
// private parts and redacted before they are kept.

// originalLimit is the largest text sent along as the edit's originalFile
// (where the agent finds the declaration each hunk sits in).
const originalLimit = 128 << 10

// contentLimit bounds a new file's content in its event.
const contentLimit = 64 << 10

// What a period remembers for its Stop: at most this many files, and
// declarations per file.
const (
	maxPeriodFiles   = 64
	maxPeriodSymbols = 16
)

// changed is what one observation of the period changed, for the Stop.
type changed struct {
	file    string // relative to the workspace
	symbols []string
	created bool
}

func (e *Editor) didOpen(ctx context.Context, p lsp[protocol.DidOpenTextDocumentParams]) error {
	path, ok := filePath(string(p.v.TextDocument.URI))
	if !ok {
		return nil
	}
	cwd := e.workspace()
	text, keep := p.v.TextDocument.Text, false
	if skipPath(cwd, path) == skipNone && skipText(text) == skipNone {
		text, keep = privacy.Clean(text), true
	}
	e.mu.Lock()
	seen := e.opened[path]
	e.opened[path] = true
	if keep {
		d := e.docs.add(path)
		if !d.pending {
			// Reopened: what the editor shows now is what later saves
			// change. (A waiting window keeps the text it started from.)
			e.docs.update(d, func(d *doc) { d.base, d.known, d.created = text, true, false })
		}
	}
	e.mu.Unlock()
	if seen {
		return nil // reads are deduplicated per session
	}
	return e.event(ctx, "Open", map[string]any{"file_path": path}, nil)
}

func (e *Editor) didSave(ctx context.Context, p lsp[protocol.DidSaveTextDocumentParams]) error {
	_, cwd, _, err := e.ready()
	if err != nil {
		return err
	}
	path, ok := filePath(string(p.v.TextDocument.URI))
	if !ok {
		return nil
	}
	var text string
	has := p.v.Text != nil
	if has {
		text = *p.v.Text
	}
	why := skipPath(cwd, path)
	if why == skipNone && !has {
		text, why, has = readSaved(path)
	}
	if why == skipNone && has {
		why = skipText(text)
	}
	if why == skipNone && e.ignored(ctx, path) {
		why = skipIgnored
	}
	if why != skipNone {
		e.mu.Lock()
		if d := e.docs.get(path); d != nil {
			// Its texts go, and a window of it ends with nothing to say;
			// what git said of it stays.
			if d.timer != nil {
				d.timer.Stop()
				d.timer = nil
			}
			e.docs.update(d, func(d *doc) {
				d.base, d.known, d.cur, d.curKnown, d.created, d.pending = "", false, "", false, false, false
			})
		}
		e.mu.Unlock()
		e.log.Debug("save not remembered", "file", path, "because", string(why))
		e.touch(false)
		return nil
	}
	if has {
		text = privacy.Clean(text)
	}

	// A file never seen: what it was is what git has in HEAD.
	e.mu.Lock()
	d := e.docs.get(path)
	needBase := d == nil || !d.known && !d.pending && !d.created
	e.mu.Unlock()
	var head string
	state := gitUnknown
	if needBase {
		head, state = gitHead(ctx, path)
		if state == gitCommitted {
			if skipText(head) != skipNone {
				state = gitUnknown
			} else {
				head = privacy.Clean(head)
			}
		}
	}

	e.mu.Lock()
	d = e.docs.add(path)
	e.docs.update(d, func(d *doc) {
		if !d.pending && !d.known {
			switch state {
			case gitCommitted:
				d.base, d.known = head, true
			case gitNew:
				d.created = true
			}
		}
		d.cur, d.curKnown = text, has
	})
	start := !d.pending
	d.pending = true
	if start {
		d.gen++
	}
	gen, window := d.gen, e.window
	if start && window > 0 {
		d.timer = e.afterFunc(window, func() { e.windowEnd(path, gen) })
	}
	e.mu.Unlock()
	e.touch(true)
	if window <= 0 {
		return e.flush(ctx, path)
	}
	return nil
}

// didClose ends the file's window and forgets its text.
func (e *Editor) didClose(ctx context.Context, p lsp[protocol.DidCloseTextDocumentParams]) error {
	path, ok := filePath(string(p.v.TextDocument.URI))
	if !ok {
		return nil
	}
	if _, _, _, err := e.ready(); err != nil {
		return nil
	}
	err := e.flush(ctx, path)
	e.mu.Lock()
	e.docs.remove(path)
	e.mu.Unlock()
	return err
}

// didChange is activity: it restarts the idle timer, and records nothing.
func (e *Editor) didChange(context.Context, json.RawMessage) error {
	e.touch(false)
	return nil
}

// workspace is the session's folder ("" before initialize).
func (e *Editor) workspace() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cwd
}

// ignored reports whether git ignores path, asking git once per document.
func (e *Editor) ignored(ctx context.Context, path string) bool {
	e.mu.Lock()
	d := e.docs.get(path)
	if d != nil && d.checked {
		defer e.mu.Unlock()
		return d.ignored
	}
	e.mu.Unlock()
	ignored := gitIgnored(ctx, path)
	e.mu.Lock()
	defer e.mu.Unlock()
	d = e.docs.add(path)
	d.checked, d.ignored = true, ignored
	return ignored
}

// windowEnd is the timer of a file's window.
func (e *Editor) windowEnd(path string, gen int) {
	e.emitMu.Lock()
	defer e.emitMu.Unlock()
	e.mu.Lock()
	d := e.docs.get(path)
	current := d != nil && d.pending && d.gen == gen && !e.closed
	e.mu.Unlock()
	if !current {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.flushLocked(ctx, path); err != nil {
		e.log.Warn("remember a save", "file", path, "err", err)
	}
}

// flush ends the window of path now, if one waits.
func (e *Editor) flush(ctx context.Context, path string) error {
	e.emitMu.Lock()
	defer e.emitMu.Unlock()
	return e.flushLocked(ctx, path)
}

// flushAll ends every waiting window, oldest document first; emitMu is
// held.
func (e *Editor) flushAll(ctx context.Context) {
	e.mu.Lock()
	var paths []string
	for el := e.docs.lru.Back(); el != nil; el = el.Prev() {
		if d := el.Value.(*doc); d.pending {
			paths = append(paths, d.path)
		}
	}
	e.mu.Unlock()
	for _, path := range paths {
		if err := e.flushLocked(ctx, path); err != nil {
			e.log.Warn("remember a save", "file", path, "err", err)
		}
	}
}

// flushLocked ends the window of path: the net change of its saves
// becomes one event, and the text saved last is what the next saves
// change. emitMu is held.
func (e *Editor) flushLocked(ctx context.Context, path string) error {
	e.mu.Lock()
	d := e.docs.get(path)
	if d == nil || !d.pending {
		e.mu.Unlock()
		return nil
	}
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	base, known, cur, curKnown, created := d.base, d.known, d.cur, d.curKnown, d.created
	e.docs.update(d, func(d *doc) {
		d.pending = false
		d.base, d.known, d.cur, d.curKnown = cur, curKnown, "", false
		d.created = false
	})
	cwd := e.cwd
	e.mu.Unlock()

	rel := memory.RelPath(cwd, path)
	switch {
	case !curKnown || !known && !created:
		// What the file was, or is, is not known: that it was saved is.
		e.note(changed{file: rel})
		return e.event(ctx, "Save", map[string]any{"file_path": path}, nil)
	case created:
		content := clipText(cur, contentLimit)
		e.note(changed{file: rel, created: true, symbols: e.mem.EditSymbols(rel, "", [][2]string{{"", content}})})
		return e.event(ctx, "Write", map[string]any{"file_path": path, "content": content},
			map[string]any{"type": "create", "filePath": path})
	}
	if sameButSpace(base, cur) {
		return nil // unchanged, or only reformatted
	}
	oldLines, newLines := splitLines(base), splitLines(cur)
	hs := hunks(oldLines, newLines)
	pairs := pairsOf(oldLines, newLines, hs)
	if len(pairs) == 0 {
		return nil
	}
	two := make([][2]string, len(pairs))
	for i, p := range pairs {
		two[i] = [2]string{p.Old, p.New}
	}
	e.note(changed{file: rel, symbols: e.mem.EditSymbols(rel, base, two)})

	input := map[string]any{"file_path": path}
	tool := "Edit"
	if len(pairs) == 1 {
		input["old_string"], input["new_string"] = pairs[0].Old, pairs[0].New
	} else {
		tool = "MultiEdit"
		input["edits"] = pairs
	}
	response := map[string]any{"filePath": path, "structuredPatch": patchOf(oldLines, newLines, hs, pairs)}
	if len(base) <= originalLimit {
		response["originalFile"] = base
	}
	return e.event(ctx, tool, input, response)
}

// hunkPatch is one hunk of a structuredPatch, as Claude Code's Edit
// response has it.
type hunkPatch struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// patchOf renders the hunks that became pairs as a structured patch:
// context lines start with a space, removed ones with -, added ones with +.
func patchOf(old, new []string, hs []hunk, pairs []pair) []hunkPatch {
	var out []hunkPatch
	for _, h := range hs {
		if len(out) == len(pairs) {
			break
		}
		changedOld := strings.Join(old[h.changeOld[0]:h.changeOld[1]], "")
		changedNew := strings.Join(new[h.changeNew[0]:h.changeNew[1]], "")
		if sameButSpace(changedOld, changedNew) {
			continue
		}
		p := hunkPatch{OldStart: h.oldStart + 1, OldLines: h.oldEnd - h.oldStart, NewStart: h.newStart + 1, NewLines: h.newEnd - h.newStart}
		line := func(prefix, l string) { p.Lines = append(p.Lines, prefix+strings.TrimSuffix(l, "\n")) }
		for _, l := range old[h.oldStart:h.changeOld[0]] {
			line(" ", l)
		}
		for _, l := range old[h.changeOld[0]:h.changeOld[1]] {
			line("-", l)
		}
		for _, l := range new[h.changeNew[0]:h.changeNew[1]] {
			line("+", l)
		}
		for _, l := range old[h.changeOld[1]:h.oldEnd] {
			line(" ", l)
		}
		out = append(out, p)
	}
	return out
}

// note records what a window's observation changed, for the period's
// Stop.
func (e *Editor) note(c changed) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.period {
		if p := &e.period[i]; p.file == c.file {
			p.symbols = dedupe(append(p.symbols, c.symbols...))
			if len(p.symbols) > maxPeriodSymbols {
				p.symbols = p.symbols[:maxPeriodSymbols]
			}
			p.created = p.created || c.created
			return
		}
	}
	if len(e.period) < maxPeriodFiles {
		e.period = append(e.period, c)
	}
}

// takePeriod returns what the saves of the period changed, one sentence
// per file naming the declarations, and starts a new period; mu is held.
func (e *Editor) takePeriod() string {
	var b strings.Builder
	for _, c := range e.period {
		syms := dedupe(c.symbols)
		switch {
		case c.created && len(syms) > 0:
			fmt.Fprintf(&b, "Created %s with %s.\n", c.file, nameList(syms))
		case c.created:
			fmt.Fprintf(&b, "Created %s.\n", c.file)
		case len(syms) > 0:
			fmt.Fprintf(&b, "Changed %s in %s.\n", nameList(syms), c.file)
		default:
			fmt.Fprintf(&b, "Changed %s.\n", c.file)
		}
	}
	e.period = nil
	return b.String()
}

// event records a document event as a PostToolUse of tool, from the
// editor.
func (e *Editor) event(ctx context.Context, tool string, input, response map[string]any) error {
	csid, cwd, platform, err := e.ready()
	if err != nil {
		return err
	}
	in, err := json.Marshal(input)
	if err != nil {
		return err
	}
	p := memory.ToolUseParams{
		ContentSessionID: csid, Cwd: cwd, ToolName: tool, ToolInput: in, Platform: platform, Source: memory.SourceEditor,
	}
	if response != nil {
		if p.ToolResponse, err = json.Marshal(response); err != nil {
			return err
		}
	}
	_, err = e.mem.PostToolUse(ctx, p)
	if tool == "Open" {
		e.touch(true)
	}
	return err
}

// nameList names up to four names: "a", "a and b", "a, b and c", "a, b, c and
// 2 more".
func nameList(names []string) string {
	switch n := len(names); {
	case n == 1:
		return names[0]
	case n <= 3:
		return strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	default:
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", n-3)
	}
}

func dedupe(items []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range items {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// clipText cuts text to at most n bytes, at a line end when there is one.
func clipText(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := text[:n]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		return cut[:i+1]
	}
	for len(cut) > 0 && !utf8.RuneStart(text[len(cut)]) {
		cut = cut[:len(cut)-1]
	}
	return cut
}
