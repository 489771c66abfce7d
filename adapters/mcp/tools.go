package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc"
)

// Limits of the tools' arguments, tighter than the daemon's: an agent's
// context is the budget.
const (
	MaxSearchLimit  = 100 // rows of one search
	MaxTimelineSide = 50  // observations before or after an anchor
	MaxGetIDs       = 50  // full records in one get_observations
	MaxForgetIDs    = 100 // ids in one forget
	MaxPinIDs       = 100 // ids in one pin_memory
	DefaultSide     = 5   // timeline before/after when not given
)

// SearchInput is the input of the search tool.
type SearchInput struct {
	Query   string   `json:"query,omitempty" jsonschema:"Words to look for (an error, a file name, a question): keywords and meaning, ranked together."`
	Project string   `json:"project,omitempty" jsonschema:"Only this project (a repository or folder name)."`
	Types   []string `json:"types,omitempty" jsonschema:"Only these types: bugfix, feature, refactor, change, discovery, decision, security_note, note."`
	Files   []string `json:"files,omitempty" jsonschema:"Only observations of a file whose path contains one of these (e.g. store.go)."`
	Host    string   `json:"host,omitempty" jsonschema:"Only one coding agent's sessions."`
	Author  string   `json:"author,omitempty" jsonschema:"Team memory: one person's name; mine (this machine's) or team (the others')."`
	Since   string   `json:"since,omitempty" jsonschema:"From this time: 2026-05-01T09:00:00Z, 2026-05-01, 90m, 36h, 7d, 2w, today, yesterday."`
	Until   string   `json:"until,omitempty" jsonschema:"Up to this time, as since (a date: its whole day)."`
	Limit   int      `json:"limit,omitempty" jsonschema:"At most this many rows."`
}

// TimelineInput is the input of the timeline tool.
type TimelineInput struct {
	Anchor  json.RawMessage `json:"anchor" jsonschema:"An observation id (12 or \"#12\"), or a time as search's since."`
	Before  *int            `json:"before,omitempty" jsonschema:"Observations before the anchor."`
	After   *int            `json:"after,omitempty" jsonschema:"Observations after the anchor."`
	Project string          `json:"project,omitempty" jsonschema:"Only this project (default: the anchor's; all for a time)."`
}

// GetInput is the input of the get_observations tool.
type GetInput struct {
	IDs []uint64 `json:"ids" jsonschema:"Ids from search or timeline, all in one call, e.g. [12, 15]."`
}

// SaveInput is the input of the save_memory tool.
type SaveInput struct {
	Text    string   `json:"text" jsonschema:"The memory, self-contained: what and why. <private>…</private> is not stored; secrets are redacted."`
	Title   string   `json:"title,omitempty" jsonschema:"A short title (default: the text's first line)."`
	Type    string   `json:"type,omitempty" jsonschema:"note (default), decision, discovery, bugfix, feature, refactor, change or security_note."`
	Project string   `json:"project,omitempty" jsonschema:"Its project (default: the current one)."`
	Files   []string `json:"files,omitempty" jsonschema:"Files it is about."`
}

// ForgetInput is the input of the forget tool.
type ForgetInput struct {
	IDs []uint64 `json:"ids" jsonschema:"Ids to delete, e.g. [12]."`
}

// CorrectInput is the input of the correct_memory tool.
type CorrectInput struct {
	ID    uint64 `json:"id" jsonschema:"The observation's id, e.g. 12."`
	Title string `json:"title,omitempty" jsonschema:"The new title (left out: kept)."`
	Text  string `json:"text,omitempty" jsonschema:"The new text, self-contained; it replaces narrative, subtitle and facts (left out: kept)."`
}

// CorrectOutput is the structured result of correct_memory: the
// observation as it now reads, and how many times it was corrected.
type CorrectOutput struct {
	ID      uint64 `json:"id"`
	Project string `json:"project"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	Changed bool   `json:"changed"`
	Edits   int    `json:"edits"`
}

// PinInput is the input of the pin_memory tool.
type PinInput struct {
	IDs   []uint64 `json:"ids" jsonschema:"Ids to pin or unpin, e.g. [12]."`
	Unpin bool     `json:"unpin,omitempty" jsonschema:"true: take the pin off."`
}

// PinOutput is the structured result of pin_memory.
type PinOutput struct {
	Pinned    bool     `json:"pinned"`
	Changed   []uint64 `json:"changed"`
	Unchanged []uint64 `json:"unchanged"`
}

// A Row is one observation in a timeline's compact index.
type Row struct {
	ID      uint64    `json:"id"`
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	Title   string    `json:"title"`
	Project string    `json:"project"`
	Files   []string  `json:"files,omitempty"`
	// State is how what it saw compares with its files now: current,
	// changed or gone ("" when it has no anchors); or superseded,
	// reverted, wrong.
	State string `json:"state,omitempty"`
	// SupersededBy is the later observation that superseded it.
	SupersededBy uint64 `json:"supersededBy,omitzero"`
	// Count and LastSeen: how many times the same fact was seen, and
	// when last (absent when seen once).
	Count    int       `json:"count,omitzero"`
	LastSeen time.Time `json:"lastSeen,omitzero"`
}

// TimelineOutput is the structured result of timeline, oldest first.
type TimelineOutput struct {
	AnchorID     uint64 `json:"anchorId,omitzero"`
	Observations []Row  `json:"observations"`
}

// SaveOutput is the structured result of save_memory: the stored
// observation.
type SaveOutput struct {
	ID      uint64 `json:"id"`
	Project string `json:"project"`
	Type    string `json:"type"`
	Title   string `json:"title"`
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func intRange(lo, hi float64) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Minimum: &lo, Maximum: &hi}
}

func (s *Server) addTools() {
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	one, nonEmpty := 1, 1

	addTool(s, &sdk.Tool{
		Name:  ToolSearch,
		Title: "Search memory",
		Description: "Search the memory of past sessions; start here. A compact index, one line per observation " +
			"(#id · time · type · title); then timeline around an id, and get_observations for the few that " +
			"matter. No query: the filters alone, newest first.",
		Annotations: readOnly,
		InputSchema: inputSchema[SearchInput](func(p map[string]*jsonschema.Schema) {
			p["limit"].Minimum, p["limit"].Maximum = new(1.0), new(float64(MaxSearchLimit))
			p["limit"].Default = json.RawMessage(strconv.Itoa(memory.DefaultLimit))
			p["types"].Items.MinLength = &nonEmpty
			p["files"].Items.MinLength = &nonEmpty
			if hosts := s.opts.Hosts; len(hosts) > 0 {
				p["host"].Description = strings.TrimSuffix(p["host"].Description, ".") + ": " + orList(hosts) + "."
			}
		}),
	}, s.search)

	addTool(s, &sdk.Tool{
		Name:  ToolTimeline,
		Title: "Memory timeline",
		Description: "The observations just before and after an anchor (an id from search, or a time), oldest first, " +
			"the anchor marked >: what led to a hit and what followed. Then get_observations for full records.",
		Annotations: readOnly,
		InputSchema: inputSchema[TimelineInput](func(p map[string]*jsonschema.Schema) {
			desc := p["anchor"].Description
			*p["anchor"] = jsonschema.Schema{Types: []string{"integer", "string"}, Description: desc, Minimum: new(1.0), MinLength: &nonEmpty}
			p["before"].Minimum, p["before"].Maximum = new(0.0), new(float64(MaxTimelineSide))
			p["after"].Minimum, p["after"].Maximum = new(0.0), new(float64(MaxTimelineSide))
			p["before"].Default = json.RawMessage(strconv.Itoa(DefaultSide))
			p["after"].Default = json.RawMessage(strconv.Itoa(DefaultSide))
		}),
	}, s.timeline)

	addTool(s, &sdk.Tool{
		Name:  ToolGetObservations,
		Title: "Get observations",
		Description: "Full records by id (~500-1,000 tokens each): narrative, facts, files, the request it served, " +
			"its history. Call it last, with the few ids from search or timeline that matter, in one call.",
		Annotations: readOnly,
		InputSchema: inputSchema[GetInput](func(p map[string]*jsonschema.Schema) {
			p["ids"].MinItems, p["ids"].MaxItems = &one, new(MaxGetIDs)
			p["ids"].Items.Minimum = new(1.0)
		}),
	}, s.get)

	addTool(s, &sdk.Tool{
		Name:  ToolSaveMemory,
		Title: "Save a memory",
		Description: "Save what later sessions should know: a decision and why, a gotcha, a fact about the codebase, " +
			"a preference of the user. search finds it from now on; the same text is stored once. No secrets.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(false)},
		InputSchema: inputSchema[SaveInput](func(p map[string]*jsonschema.Schema) {
			p["text"].MinLength = &nonEmpty
			p["files"].Items.MinLength = &nonEmpty
		}),
	}, s.save)

	addTool(s, &sdk.Tool{
		Name:  ToolForget,
		Title: "Forget memories",
		Description: "Delete observations for good by id (wrong, outdated or sensitive): gone from search, timeline " +
			"and get_observations. Says which ids went and which did not exist.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)},
		InputSchema: inputSchema[ForgetInput](func(p map[string]*jsonschema.Schema) {
			p["ids"].MinItems, p["ids"].MaxItems = &one, new(MaxForgetIDs)
			p["ids"].Items.Minimum = new(1.0)
		}),
	}, s.forget)

	addTool(s, &sdk.Tool{
		Name:  ToolCorrectMemory,
		Title: "Correct a memory",
		Description: "Correct a wrong or outdated observation by id: a new title, text, or both. Its history is " +
			"kept (get_observations shows it); search finds the new words. Better than forget for one worth keeping.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(false)},
		InputSchema: inputSchema[CorrectInput](func(p map[string]*jsonschema.Schema) {
			p["id"].Minimum = new(1.0)
		}),
	}, s.correct)

	addTool(s, &sdk.Tool{
		Name:  ToolPinMemory,
		Title: "Pin memories",
		Description: "Pin observations by id (from search): they open every new session's context in their project, " +
			"whatever their age: a rule every session must see. Pin few; unpin=true takes the pin off.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(false)},
		InputSchema: inputSchema[PinInput](func(p map[string]*jsonschema.Schema) {
			p["ids"].MinItems, p["ids"].MaxItems = &one, new(MaxPinIDs)
			p["ids"].Items.Minimum = new(1.0)
		}),
	}, s.pin)
}

// SearchOutput is the structured result of search: the compact index.
// Claude Code hands the structured result, not the text, to the model, so
// it is as compact as the text: no snippets, no scores.
type SearchOutput struct {
	Hits  []Row `json:"hits"`
	Total int   `json:"total"`
}

func (s *Server) search(ctx context.Context, in SearchInput) (string, SearchOutput, error) {
	text, res, err := s.searchFull(ctx, in)
	out := SearchOutput{Hits: make([]Row, 0, len(res.Hits)), Total: res.Total}
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, Row{ID: h.ID, Time: h.Time, Type: h.Type, Title: h.Title, Project: h.Project, Files: h.Files, State: h.State,
			SupersededBy: h.SupersededBy, Count: h.Count, LastSeen: h.LastSeen})
	}
	return text, out, err
}

func (s *Server) searchFull(ctx context.Context, in SearchInput) (string, memory.SearchResult, error) {
	p := memory.SearchParams{Query: strings.TrimSpace(in.Query), Project: strings.TrimSpace(in.Project), Types: in.Types, Files: in.Files, Host: strings.TrimSpace(in.Host), Author: strings.TrimSpace(in.Author), Limit: in.Limit}
	now := s.opts.Now()
	var err error
	if in.Since != "" {
		if p.Since, err = memory.ParseTime(in.Since, false, now); err != nil {
			return "", memory.SearchResult{}, fmt.Errorf("%w: argument \"since\": %v", ErrArguments, err)
		}
	}
	if in.Until != "" {
		if p.Until, err = memory.ParseTime(in.Until, true, now); err != nil {
			return "", memory.SearchResult{}, fmt.Errorf("%w: argument \"until\": %v", ErrArguments, err)
		}
	}
	if !p.Since.IsZero() && !p.Until.IsZero() && p.Until.Before(p.Since) {
		return "", memory.SearchResult{}, fmt.Errorf("%w: \"until\" (%s) is before \"since\" (%s)", ErrArguments, fmtTime(p.Until), fmtTime(p.Since))
	}
	res, err := s.daemon.Search(ctx, p)
	if err != nil {
		return "", memory.SearchResult{}, err
	}
	if res.Hits == nil {
		res.Hits = []memory.Hit{}
	}
	return searchText(p, res), res, nil
}

func searchText(p memory.SearchParams, res memory.SearchResult) string {
	var b strings.Builder
	if len(res.Hits) == 0 {
		b.WriteString("No observation found" + describeFilters(p))
		b.WriteString(". Try other words, drop a filter, or leave out the query to list the newest observations.\n")
		return b.String()
	}
	if res.Closest {
		b.WriteString("No observation holds these words; the closest in meaning, which may not be relevant: ")
	}
	b.WriteString(memory.Count(len(res.Hits), "observation", "observations"))
	b.WriteString(describeFilters(p))
	switch {
	case res.Closest:
		b.WriteString(":\n")
	case p.Query != "":
		b.WriteString(", best match first:\n")
	default:
		b.WriteString(", newest first:\n")
	}
	mixed := p.Project == "" && spansProjects(res.Hits)
	for _, h := range res.Hits {
		line := row(h.ID, h.Time, h.Type, h.Title) + memory.StateMark(h.State) + memory.SeenMark(h.Count, h.LastSeen)
		if mixed {
			line += " · " + h.Project
		}
		if sn := snippetBeyond(h); p.Query != "" && sn != "" {
			line += " — " + clip(sn, 100)
		}
		b.WriteString(line + "\n")
	}
	if res.More {
		b.WriteString("(More match; narrow the search or raise limit.)\n")
	}
	fmt.Fprintf(&b, "Next: timeline(anchor=%d) for what happened around a hit; get_observations(ids=[%s]) for full records.\n", res.Hits[0].ID, idList(hitIDs(res.Hits, 3)))
	return b.String()
}

// snippetBeyond is the part of a hit's snippet that its title does not
// already say.
func snippetBeyond(h memory.Hit) string {
	body, cut := strings.CutPrefix(strings.TrimSpace(h.Snippet), "…")
	if rest, ok := strings.CutPrefix(body, h.Title); ok {
		return strings.TrimSpace(rest)
	}
	if cut {
		return "…" + body
	}
	return body
}

// describeFilters says what a search asked for, e.g. ` for "pdf" in
// project billing-api since 2026-05-01 00:00`.
func describeFilters(p memory.SearchParams) string {
	var b strings.Builder
	if p.Query != "" {
		fmt.Fprintf(&b, " for %q", p.Query)
	}
	if p.Project != "" {
		b.WriteString(" in project " + p.Project)
	}
	if len(p.Types) > 0 {
		b.WriteString(" of type " + strings.Join(p.Types, "|"))
	}
	if len(p.Files) > 0 {
		b.WriteString(" touching " + strings.Join(p.Files, "|"))
	}
	if p.Host != "" {
		b.WriteString(" from " + p.Host)
	}
	if !p.Since.IsZero() {
		b.WriteString(" since " + fmtTime(p.Since))
	}
	if !p.Until.IsZero() {
		b.WriteString(" until " + fmtTime(p.Until))
	}
	return b.String()
}

func spansProjects(hits []memory.Hit) bool {
	for _, h := range hits[1:] {
		if h.Project != hits[0].Project {
			return true
		}
	}
	return false
}

func hitIDs(hits []memory.Hit, n int) []uint64 {
	var ids []uint64
	for _, h := range hits[:min(n, len(hits))] {
		ids = append(ids, h.ID)
	}
	return ids
}

func (s *Server) timeline(ctx context.Context, in TimelineInput) (string, TimelineOutput, error) {
	p := memory.TimelineParams{Project: strings.TrimSpace(in.Project), Before: DefaultSide, After: DefaultSide}
	if in.Before != nil {
		p.Before = *in.Before
	}
	if in.After != nil {
		p.After = *in.After
	}
	var (
		anchorID   uint64
		anchorTime time.Time
	)
	var raw any
	if err := json.Unmarshal(in.Anchor, &raw); err != nil {
		return "", TimelineOutput{}, fmt.Errorf("%w: argument \"anchor\": %v", ErrArguments, err)
	}
	switch a := raw.(type) {
	case float64:
		id, err := strconv.ParseUint(string(in.Anchor), 10, 64)
		if err != nil || id == 0 {
			return "", TimelineOutput{}, fmt.Errorf("%w: argument \"anchor\": %s is not an observation id", ErrArguments, in.Anchor)
		}
		anchorID = id
	case string:
		a = strings.TrimSpace(a)
		if id, err := strconv.ParseUint(strings.TrimPrefix(a, "#"), 10, 64); err == nil && id > 0 {
			anchorID = id
			break
		}
		t, err := memory.ParseTime(a, false, s.opts.Now())
		if err != nil {
			return "", TimelineOutput{}, fmt.Errorf("%w: argument \"anchor\": %q is neither an observation id (12 or \"#12\") nor a time (%s)", ErrArguments, a, memory.TimeForms)
		}
		anchorTime = t
	}
	if anchorID != 0 {
		p.Anchor, _ = json.Marshal(anchorID)
	} else {
		p.Anchor, _ = json.Marshal(anchorTime.Format(time.RFC3339Nano))
	}
	if p.Before == 0 && p.After == 0 && anchorID == 0 {
		return "", TimelineOutput{}, fmt.Errorf("%w: before and after are both 0; ask for at least one observation around a time", ErrArguments)
	}
	res, err := s.daemon.Timeline(ctx, p)
	if re, ok := errors.AsType[*rpc.Error](err); ok && re.Code == rpc.CodeNotFound && anchorID != 0 {
		return "", TimelineOutput{}, failf("timeline: no observation #%d exists (forgotten, or never recorded). Use search to find existing ids.", anchorID)
	}
	if err != nil {
		return "", TimelineOutput{}, err
	}
	out := TimelineOutput{AnchorID: res.AnchorID, Observations: []Row{}}
	for _, o := range res.Observations {
		if p.Before == 0 && p.After == 0 && o.ID != anchorID {
			continue // the anchor alone (the daemon reads 0, 0 as its default)
		}
		out.Observations = append(out.Observations, Row{ID: o.ID, Time: o.Time, Type: o.Type, Title: o.Title, Project: o.Project, Files: o.Files(), State: o.State,
			SupersededBy: o.SupersededBy, Count: o.Count, LastSeen: o.LastSeen})
	}
	var b strings.Builder
	what := "#" + strconv.FormatUint(anchorID, 10)
	if anchorID == 0 {
		what = fmtTime(anchorTime)
	}
	scope := "all projects"
	if p.Project != "" {
		scope = "project " + p.Project
	} else if len(res.Observations) > 0 && anchorID != 0 {
		for _, o := range res.Observations {
			if o.ID == anchorID {
				scope = "project " + o.Project
			}
		}
	}
	if len(out.Observations) == 0 {
		fmt.Fprintf(&b, "Nothing recorded around %s (%s).\n", what, scope)
		return b.String(), out, nil
	}
	fmt.Fprintf(&b, "Timeline around %s (%s), oldest first:\n", what, scope)
	var ids []uint64
	for _, r := range out.Observations {
		mark := "  "
		if r.ID == res.AnchorID {
			mark = "> "
		}
		b.WriteString(mark + row(r.ID, r.Time, r.Type, r.Title) + memory.StateMark(r.State) + memory.SeenMark(r.Count, r.LastSeen) + "\n")
		ids = append(ids, r.ID)
	}
	fmt.Fprintf(&b, "Next: get_observations(ids=[%s]) for the full records of the ones that matter.\n", idList(ids[:min(3, len(ids))]))
	return b.String(), out, nil
}

func (s *Server) get(ctx context.Context, in GetInput) (string, memory.ObservationsResult, error) {
	res, err := s.daemon.GetObservations(ctx, memory.IDsParams{IDs: in.IDs})
	if err != nil {
		return "", memory.ObservationsResult{}, err
	}
	if len(res.Observations) == 0 {
		return "", memory.ObservationsResult{}, failf("get_observations: no observation %s exists (forgotten, or never recorded). Use search to find existing ids.", hashList(res.Missing))
	}
	var b strings.Builder
	for i := range res.Observations {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(res.Observations[i].Markdown())
	}
	if len(res.Missing) > 0 {
		fmt.Fprintf(&b, "\nNot found: %s (forgotten, or never recorded).\n", hashList(res.Missing))
	}
	return b.String(), res, nil
}

func (s *Server) save(ctx context.Context, in SaveInput) (string, SaveOutput, error) {
	p := memory.SaveParams{Text: in.Text, Title: strings.TrimSpace(in.Title), Type: strings.TrimSpace(in.Type), Project: strings.TrimSpace(in.Project), Cwd: s.opts.Cwd, Files: in.Files}
	if p.Project == "" {
		p.Project = s.opts.Project
	}
	res, err := s.daemon.Save(ctx, p)
	if err != nil {
		return "", SaveOutput{}, err
	}
	out := SaveOutput{ID: res.ID, Project: p.Project, Type: p.Type, Title: p.Title}
	// Read back what was stored: its title, type and project as the
	// daemon settled them (defaults, redaction).
	if got, err := s.daemon.GetObservations(ctx, memory.IDsParams{IDs: []uint64{res.ID}}); err == nil && len(got.Observations) == 1 {
		o := got.Observations[0]
		out.Project, out.Type, out.Title = o.Project, o.Type, o.Title
	} else if err != nil {
		s.log.Warn("read back a saved memory", "id", res.ID, "err", err)
	}
	text := fmt.Sprintf("Saved as #%d (%s, project %s): %s\nsearch finds it from now on; forget(ids=[%d]) deletes it.\n", out.ID, orDash(out.Type), orDash(out.Project), orDash(out.Title), out.ID)
	if res.Truncated {
		text += fmt.Sprintf("Its text was cut at %d KB, the most one memory keeps.\n", memory.MaxMessageBytes>>10)
	}
	return text, out, nil
}

func (s *Server) forget(ctx context.Context, in ForgetInput) (string, memory.ForgetResult, error) {
	// Fetch the titles first, to say exactly what is removed.
	titles := map[uint64]string{}
	if got, err := s.daemon.GetObservations(ctx, memory.IDsParams{IDs: in.IDs}); err == nil {
		for _, o := range got.Observations {
			titles[o.ID] = fmt.Sprintf("%q (%s, %s)", o.Title, o.Type, o.Project)
		}
	}
	res, err := s.daemon.Forget(ctx, memory.IDsParams{IDs: in.IDs})
	if err != nil {
		return "", memory.ForgetResult{}, err
	}
	if res.Deleted == nil {
		res.Deleted = []uint64{}
	}
	if res.Missing == nil {
		res.Missing = []uint64{}
	}
	if len(res.Deleted) == 0 {
		return "", memory.ForgetResult{}, failf("forget: nothing removed: no observation %s exists (already forgotten, or never recorded). Use search to find existing ids.", hashList(res.Missing))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Forgot %s, removed from every index:\n", memory.Count(len(res.Deleted), "observation", "observations"))
	for _, id := range res.Deleted {
		fmt.Fprintf(&b, "- #%d", id)
		if t := titles[id]; t != "" {
			b.WriteString(" " + t)
		}
		b.WriteString("\n")
	}
	if len(res.Missing) > 0 {
		fmt.Fprintf(&b, "Did not exist, nothing removed: %s.\n", hashList(res.Missing))
	}
	return b.String(), res, nil
}

func (s *Server) correct(ctx context.Context, in CorrectInput) (string, CorrectOutput, error) {
	if strings.TrimSpace(in.Title) == "" && strings.TrimSpace(in.Text) == "" {
		return "", CorrectOutput{}, fmt.Errorf("%w: give title, text or both; an empty correction changes nothing", ErrArguments)
	}
	res, err := s.daemon.Correct(ctx, memory.CorrectParams{ID: in.ID, Title: in.Title, Text: in.Text})
	if re, ok := errors.AsType[*rpc.Error](err); ok && re.Code == rpc.CodeNotFound {
		return "", CorrectOutput{}, failf("correct_memory: no observation #%d exists (forgotten, or never recorded); nothing changed. Use search to find existing ids.", in.ID)
	}
	if err != nil {
		return "", CorrectOutput{}, err
	}
	o := res.Observation
	out := CorrectOutput{ID: o.ID, Project: o.Project, Type: o.Type, Title: o.Title, Changed: res.Changed, Edits: len(o.Edits)}
	if !res.Changed {
		return fmt.Sprintf("#%d already says that; nothing changed.\n", o.ID), out, nil
	}
	text := fmt.Sprintf("Corrected #%d (%s, project %s): %s\nWhat it said before is kept as its history (%d correction(s); get_observations(ids=[%d]) shows them); search finds it by its new words from now on.\n",
		o.ID, orDash(o.Type), orDash(o.Project), orDash(o.Title), len(o.Edits), o.ID)
	return text, out, nil
}

func (s *Server) pin(ctx context.Context, in PinInput) (string, PinOutput, error) {
	// Unknown ids are named, and nothing is pinned: the daemon refuses
	// the whole call; asking first says which.
	got, err := s.daemon.GetObservations(ctx, memory.IDsParams{IDs: in.IDs})
	if err != nil {
		return "", PinOutput{}, err
	}
	verb := "pin"
	call := s.daemon.Pin
	if in.Unpin {
		verb, call = "unpin", s.daemon.Unpin
	}
	if len(got.Missing) > 0 {
		return "", PinOutput{}, failf("pin_memory: no observation %s exists (forgotten, or never recorded); nothing was %sned. Use search to find existing ids.", hashList(got.Missing), verb)
	}
	res, err := call(ctx, memory.IDsParams{IDs: in.IDs})
	if err != nil {
		return "", PinOutput{}, err
	}
	out := PinOutput{Pinned: !in.Unpin, Changed: res.Changed, Unchanged: res.Unchanged}
	if out.Changed == nil {
		out.Changed = []uint64{}
	}
	if out.Unchanged == nil {
		out.Unchanged = []uint64{}
	}
	projects := map[uint64]string{}
	for _, o := range got.Observations {
		projects[o.ID] = o.Project
	}
	var b strings.Builder
	for _, id := range out.Changed {
		if in.Unpin {
			fmt.Fprintf(&b, "Unpinned #%d: it competes for the context of project %s by its worth and age again.\n", id, orDash(projects[id]))
		} else {
			fmt.Fprintf(&b, "Pinned #%d: it opens the context of every new session in project %s.\n", id, orDash(projects[id]))
		}
	}
	if len(out.Unchanged) > 0 {
		fmt.Fprintf(&b, "Already %sned: %s.\n", verb, hashList(out.Unchanged))
	}
	return b.String(), out, nil
}

// row is one line of a compact index: #id · time · type · title.
func row(id uint64, t time.Time, typ, title string) string {
	return fmt.Sprintf("#%d · %s · %s · %s", id, fmtTime(t), orDash(typ), orDash(clip(title, 120)))
}

func fmtTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04") }

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}

func idList(ids []uint64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatUint(id, 10)
	}
	return strings.Join(parts, ", ")
}

func hashList(ids []uint64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "#" + strconv.FormatUint(id, 10)
	}
	return strings.Join(parts, ", ")
}
