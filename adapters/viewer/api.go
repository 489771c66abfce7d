package viewer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc"
)

// The API, under /api: JSON in and out, every list paged.
//
//	GET    /api/status                  the memory's status and the doctor's findings
//	GET    /api/records?q=&project=&type=&host=&file=&since=&until=&limit=&mode=
//	                                    a search, or with no q the newest records (until pages)
//	GET    /api/records/{id}            one observation, whole
//	DELETE /api/records/{id}            forget it
//	POST   /api/records/{id}/correct    {"title", "text"}: correct it (its earlier text is kept)
//	PUT    /api/records/{id}/pin        pin it into every context of its project
//	DELETE /api/records/{id}/pin        unpin it
//	PUT    /api/records/{id}/wrong      mark it wrong (kept, never given as a fact)
//	DELETE /api/records/{id}/wrong      take the mark back
//	GET    /api/records/{id}/timeline   the observations around it
//	GET    /api/review?project=&limit=  the records that need review (their file changed, nothing confirmed them)
//	PUT    /api/records/{id}/keep       keep it: a person's word that it still holds, until its file changes again
//	GET    /api/sessions?project=&host=&offset=&limit=
//	                                    sessions, newest first, with the projects and hosts known
//	GET    /api/sessions/{id}           one session with its prompts, observations and summaries
//	GET    /api/context?project=        the context the next session of a project would be given, and why
//	GET    /api/knowledge?project=&refresh=
//	                                    what a project's records add up to, each line with its records
//	GET    /api/injections?project=     the contexts given, newest first
//	GET    /api/stream                  server-sent events: change (memory.Change), status
func (s *Server) api(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/status", s.status)
	mux.HandleFunc("GET /api/records", s.records)
	mux.HandleFunc("GET /api/records/{id}", s.record)
	mux.HandleFunc("DELETE /api/records/{id}", s.forget)
	mux.HandleFunc("POST /api/records/{id}/correct", s.correct)
	mux.HandleFunc("PUT /api/records/{id}/pin", s.pin)
	mux.HandleFunc("DELETE /api/records/{id}/pin", s.pin)
	mux.HandleFunc("PUT /api/records/{id}/wrong", s.pin)
	mux.HandleFunc("DELETE /api/records/{id}/wrong", s.pin)
	mux.HandleFunc("GET /api/records/{id}/timeline", s.timeline)
	mux.HandleFunc("GET /api/review", s.review)
	mux.HandleFunc("PUT /api/records/{id}/keep", s.keep)
	mux.HandleFunc("GET /api/sessions", s.sessions)
	mux.HandleFunc("GET /api/sessions/{id}", s.session)
	mux.HandleFunc("GET /api/context", s.context)
	mux.HandleFunc("GET /api/knowledge", s.knowledge)
	mux.HandleFunc("GET /api/injections", s.injections)
	mux.HandleFunc("GET /api/stream", s.stream)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "404: no such API", http.StatusNotFound)
	})
}

// DefaultPage and MaxPage bound a page of a list.
const (
	DefaultPage = 50
	MaxPage     = 200
)

// badRequest is an error in the request itself.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

// reply writes v as JSON, or the error with its status: 400 for bad
// input (the memory's own words naming the field), 404 for a record that
// is not there, 500 otherwise (logged, not shown).
func (s *Server) reply(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		status, msg := http.StatusInternalServerError, "the memory could not answer; the daemon's log says why"
		var bad *badRequest
		var field *memory.FieldError
		rerr, isRPC := errors.AsType[*rpc.Error](err)
		switch {
		case errors.As(err, &bad):
			status, msg = http.StatusBadRequest, bad.msg
		case errors.As(err, &field):
			status, msg = http.StatusBadRequest, field.Error()
		case isRPC && rerr.Code == rpc.CodeInvalidParams:
			status, msg = http.StatusBadRequest, rerr.Message
		case errors.Is(err, memory.ErrNotFound) || isRPC && rerr.Code == rpc.CodeNotFound:
			status, msg = http.StatusNotFound, "not found"
		case errors.Is(err, context.Canceled):
			return // the page went away
		default:
			s.log.Error("viewer", "path", r.URL.Path, "err", err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func pathID(r *http.Request) (uint64, error) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		return 0, &badRequest{fmt.Sprintf("%q is not a record id", r.PathValue("id"))}
	}
	return id, nil
}

// page reads limit (1..MaxPage, default DefaultPage) and offset.
func page(r *http.Request) (limit, offset int, err error) {
	q := r.URL.Query()
	limit, offset = DefaultPage, 0
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > MaxPage {
			return 0, 0, &badRequest{fmt.Sprintf("limit %q: want 1 to %d", v, MaxPage)}
		}
	}
	if v := q.Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			return 0, 0, &badRequest{fmt.Sprintf("offset %q: want 0 or more", v)}
		}
	}
	return limit, offset, nil
}

func timeParam(r *http.Request, name string) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, &badRequest{fmt.Sprintf("%s %q: want an RFC 3339 time", name, v)}
	}
	return t, nil
}

// statusResult is /api/status.
type statusResult struct {
	Status memory.Status       `json:"status"`
	Doctor memory.DoctorResult `json:"doctor"`
	// StoreBytes is what the memory's store (<home>/db) takes on disk,
	// HomeBytes what the whole home does (the store, its snapshot, the
	// logs, the model when it is there); -1 when it cannot be read (the
	// viewer runs beside it, in the daemon). They count what du counts,
	// the blocks the files take: Badger preallocates its value log and
	// memtable as sparse files, whose apparent sizes (64 and 16 MB for a
	// store of a few kilobytes) say nothing of the disk.
	StoreBytes int64 `json:"storeBytes"`
	HomeBytes  int64 `json:"homeBytes"`
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	st, err := s.o.Memory.Status(r.Context())
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	doc, err := s.o.Memory.Doctor(r.Context())
	res := statusResult{Status: st, Doctor: doc, StoreBytes: -1, HomeBytes: dirBytes(st.DataDir)}
	if st.DataDir != "" {
		res.StoreBytes = dirBytes(filepath.Join(st.DataDir, "db"))
	}
	s.reply(w, r, res, err)
}

// dirBytes adds up what the files under dir take on disk (diskBytes);
// -1 when dir cannot be read.
func dirBytes(dir string) int64 {
	if dir == "" {
		return -1
	}
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil && path == dir {
			return err
		}
		if err != nil {
			return nil // a file removed meanwhile
		}
		if fi, ierr := d.Info(); ierr == nil && fi.Mode().IsRegular() {
			n += diskBytes(fi)
		}
		return nil
	})
	if err != nil {
		return -1
	}
	return n
}

func (s *Server) records(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, _, err := page(r)
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	p := memory.SearchParams{Query: strings.TrimSpace(q.Get("q")), Project: q.Get("project"), Host: q.Get("host"), Limit: limit, Mode: q.Get("mode")}
	if t := q.Get("type"); t != "" {
		p.Types = []string{t}
	}
	if f := q.Get("file"); f != "" {
		p.Files = []string{f}
	}
	if p.Since, err = timeParam(r, "since"); err == nil {
		p.Until, err = timeParam(r, "until")
	}
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	res, err := s.o.Memory.Search(r.Context(), p)
	if res.Hits == nil {
		res.Hits = []memory.Hit{}
	}
	s.reply(w, r, res, err)
}

func (s *Server) record(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	res, err := s.o.Memory.GetObservations(r.Context(), memory.IDsParams{IDs: []uint64{id}})
	if err == nil && len(res.Observations) == 0 {
		err = memory.ErrNotFound
	}
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	s.reply(w, r, res.Observations[0], nil)
}

func (s *Server) forget(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	res, err := s.o.Memory.Forget(r.Context(), memory.IDsParams{IDs: []uint64{id}})
	if err == nil && len(res.Deleted) == 0 {
		err = memory.ErrNotFound
	}
	s.reply(w, r, res, err)
}

// MaxBody bounds a request's body.
const MaxBody = 64 << 10

func (s *Server) correct(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	var body struct {
		Title string `json:"title"`
		Text  string `json:"text"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBody)).Decode(&body); err != nil {
		s.reply(w, r, nil, &badRequest{"the body must be a JSON object {\"title\", \"text\"}: " + err.Error()})
		return
	}
	res, err := s.o.Memory.Correct(r.Context(), memory.CorrectParams{ID: id, Title: body.Title, Text: body.Text})
	s.reply(w, r, res, err)
}

// pin sets a record's pin or its mark of wrong (PUT) or takes it off
// (DELETE).
func (s *Server) pin(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	p := memory.IDsParams{IDs: []uint64{id}}
	set := map[[2]bool]func(context.Context, memory.IDsParams) (memory.PinResult, error){
		{true, true}: s.o.Memory.Pin, {true, false}: s.o.Memory.Unpin,
		{false, true}: s.o.Memory.MarkWrong, {false, false}: s.o.Memory.UnmarkWrong,
	}[[2]bool{strings.HasSuffix(r.URL.Path, "/pin"), r.Method == http.MethodPut}]
	res, err := set(r.Context(), p)
	s.reply(w, r, res, err)
}

func (s *Server) timeline(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	res, err := s.o.Memory.Timeline(r.Context(), memory.TimelineParams{Anchor: json.RawMessage(strconv.FormatUint(id, 10)), Before: 5, After: 5})
	s.reply(w, r, res, err)
}

// sessionsResult is /api/sessions: a page of sessions and what the
// filters can choose from.
type sessionsResult struct {
	Sessions []memory.Session `json:"sessions"`
	Total    int              `json:"total"`
	Projects []string         `json:"projects"`
	Hosts    []string         `json:"hosts"`
}

func (s *Server) sessions(w http.ResponseWriter, r *http.Request) {
	limit, offset, err := page(r)
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	all, err := s.o.Memory.Sessions(r.Context())
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	project, host := r.URL.Query().Get("project"), r.URL.Query().Get("host")
	res := sessionsResult{Sessions: []memory.Session{}, Projects: []string{}, Hosts: []string{}}
	seenP, seenH := map[string]bool{}, map[string]bool{}
	var kept []memory.Session
	for _, ss := range all.Sessions {
		if !seenP[ss.Project] {
			seenP[ss.Project] = true
			res.Projects = append(res.Projects, ss.Project)
		}
		if !seenH[ss.Platform] {
			seenH[ss.Platform] = true
			res.Hosts = append(res.Hosts, ss.Platform)
		}
		if (project == "" || ss.Project == project) && (host == "" || ss.Platform == host) {
			kept = append(kept, ss)
		}
	}
	slices.Sort(res.Projects)
	slices.Sort(res.Hosts)
	slices.SortStableFunc(kept, func(a, b memory.Session) int { return cmp.Compare(lastActive(b).UnixNano(), lastActive(a).UnixNano()) })
	res.Total = len(kept)
	if offset < len(kept) {
		res.Sessions = kept[offset:min(len(kept), offset+limit)]
	}
	s.reply(w, r, res, nil)
}

// lastActive is when a session last did something.
func lastActive(s memory.Session) time.Time {
	t := s.CreatedAt
	for _, u := range []time.Time{s.UpdatedAt, s.CompletedAt} {
		if u.After(t) {
			t = u
		}
	}
	return t
}

func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	res, err := s.o.Memory.Session(r.Context(), memory.SessionParams{ContentSessionID: r.PathValue("id")})
	s.reply(w, r, res, err)
}

func (s *Server) context(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	res, err := s.o.Memory.Context(r.Context(), memory.ContextParams{Project: q.Get("project"), Cwd: q.Get("cwd")})
	s.reply(w, r, res, err)
}

func (s *Server) knowledge(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	res, err := s.o.Memory.Knowledge(r.Context(), memory.KnowledgeParams{Project: q.Get("project"), Cwd: q.Get("cwd"), Refresh: q.Get("refresh") == "1"})
	s.reply(w, r, res, err)
}

func (s *Server) injections(w http.ResponseWriter, r *http.Request) {
	limit, _, err := page(r)
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	res, err := s.o.Memory.Injections(r.Context(), memory.InjectionsParams{Project: r.URL.Query().Get("project"), Limit: limit})
	s.reply(w, r, res, err)
}

// stream sends the memory's changes as server-sent events ("change",
// memory.Change) as they are made, the status ("status", memory.Status)
// every StatusEvery, and a comment now and then so that an idle
// connection stays open.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	flush, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "500: no streaming here", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	if s.o.Hold != nil {
		defer s.o.Hold()()
	}
	changes := s.o.Watch(ctx)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		flush.Flush()
		return true
	}
	status := func() bool {
		st, err := s.o.Memory.Status(ctx)
		return err != nil || send("status", st)
	}
	// The page knows it is live once the first status comes.
	if !status() {
		return
	}
	tick := time.NewTicker(s.o.StatusEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case c, ok := <-changes:
			if !ok || !send("change", c) {
				return
			}
		case <-tick.C:
			if !status() {
				return
			}
		}
	}
}

// review lists the records that need review (memory/review.go).
func (s *Server) review(w http.ResponseWriter, r *http.Request) {
	limit, _, err := page(r)
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	res, err := s.o.Memory.Review(r.Context(), memory.ReviewParams{Project: r.URL.Query().Get("project"), Limit: limit})
	s.reply(w, r, res, err)
}

// keep records a person's word that a record still holds.
func (s *Server) keep(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	res, err := s.o.Memory.Keep(r.Context(), memory.IDsParams{IDs: []uint64{id}})
	s.reply(w, r, res, err)
}
