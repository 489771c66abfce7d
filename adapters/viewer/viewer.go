// Package viewer is Mnemo's memory viewer: a small web application the
// daemon serves on 127.0.0.1, for a person to see what Mnemo remembers as
// it is made, search it, read a record whole with its evidence, preview
// the context the next session will be given and why, correct a record
// (its earlier text kept), pin it into every context of its project, mark
// it wrong, and forget it.
//
// Every read and every change goes through the memory API (Memory: the
// methods memory/client calls), as the command line's and MCP's do; the
// live stream comes from the memory's change feed (Options.Watch).
//
// The page is for the user alone. It listens on the loopback interface
// only; every request must carry the user's secret token, given once in
// the URL `mnemo ui` prints and then kept in a cookie (HttpOnly,
// SameSite=Strict) the browser sends back; the Host header must name the
// loopback address and port (against DNS rebinding), an Origin header
// must be the page's own, and a change must carry a header no other
// page can send without a CORS preflight, which is never answered. The
// page itself is built from TypeScript (web/) and embedded, with a strict
// Content-Security-Policy: its own script and style only.
package viewer

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// Memory is what the viewer reads and changes: the memory API, as
// memory/client.Client calls it.
type Memory interface {
	Search(ctx context.Context, p memory.SearchParams) (memory.SearchResult, error)
	Timeline(ctx context.Context, p memory.TimelineParams) (memory.TimelineResult, error)
	GetObservations(ctx context.Context, p memory.IDsParams) (memory.ObservationsResult, error)
	Context(ctx context.Context, p memory.ContextParams) (memory.ContextResult, error)
	Knowledge(ctx context.Context, p memory.KnowledgeParams) (memory.Knowledge, error)
	Injections(ctx context.Context, p memory.InjectionsParams) (memory.InjectionsResult, error)
	Forget(ctx context.Context, p memory.IDsParams) (memory.ForgetResult, error)
	Correct(ctx context.Context, p memory.CorrectParams) (memory.CorrectResult, error)
	Pin(ctx context.Context, p memory.IDsParams) (memory.PinResult, error)
	Unpin(ctx context.Context, p memory.IDsParams) (memory.PinResult, error)
	MarkWrong(ctx context.Context, p memory.IDsParams) (memory.PinResult, error)
	UnmarkWrong(ctx context.Context, p memory.IDsParams) (memory.PinResult, error)
	Review(ctx context.Context, p memory.ReviewParams) (memory.ReviewResult, error)
	Keep(ctx context.Context, p memory.IDsParams) (memory.PinResult, error)
	Status(ctx context.Context) (memory.Status, error)
	Sessions(ctx context.Context) (memory.SessionsResult, error)
	Session(ctx context.Context, p memory.SessionParams) (memory.SessionResult, error)
	Doctor(ctx context.Context) (memory.DoctorResult, error)
}

// Options are a Server's inputs.
type Options struct {
	Memory Memory
	// Watch returns the memory's changes from now until ctx ends
	// (store.Memory.Watch).
	Watch func(ctx context.Context) <-chan memory.Change
	// Token is the user's secret; at least 32 characters.
	Token string
	// Hold, if set, is called as a live stream opens, and what it returns
	// as the stream closes: the daemon counts an open viewer as a client,
	// so it does not exit idle under it.
	Hold func() (release func())
	// StatusEvery is how often a live stream sends the status (the queue,
	// the agent); default 2 s.
	StatusEvery time.Duration
	Logger      *slog.Logger
}

// MinTokenLen is the shortest token New accepts.
const MinTokenLen = 32

// Server serves the viewer on one listener.
type Server struct {
	o      Options
	log    *slog.Logger
	port   int
	cookie string // the cookie's name: one per port, since cookies ignore ports
	hosts  map[string]bool
	mux    *http.ServeMux
}

//go:embed web/index.html web/style.css web/dist/app.js
var webFiles embed.FS

// New checks the options and returns a server; Serve starts it.
func New(o Options) (*Server, error) {
	if o.Memory == nil || o.Watch == nil {
		return nil, errors.New("viewer: no memory")
	}
	if len(o.Token) < MinTokenLen {
		return nil, fmt.Errorf("viewer: the token is %d characters, want at least %d", len(o.Token), MinTokenLen)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StatusEvery <= 0 {
		o.StatusEvery = 2 * time.Second
	}
	return &Server{o: o, log: o.Logger}, nil
}

// URL is the address that opens the viewer on port with its token: the
// one `mnemo ui` prints.
func URL(port int, token string) string {
	return fmt.Sprintf("http://127.0.0.1:%d/?token=%s", port, url.QueryEscape(token))
}

// Serve serves the viewer on ln, a loopback listener, until ctx ends;
// then it closes the live streams and returns within a few seconds.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !addr.IP.IsLoopback() {
		return fmt.Errorf("viewer: %s is not a loopback address", ln.Addr())
	}
	s.port = addr.Port
	s.cookie = "mnemo-viewer-" + strconv.Itoa(s.port)
	s.hosts = map[string]bool{}
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]"} {
		s.hosts[h+":"+strconv.Itoa(s.port)] = true
	}
	s.mux = s.routes()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shut, stop := context.WithTimeout(context.Background(), 3*time.Second)
		defer stop()
		srv.Shutdown(shut)
	}()
	err := srv.Serve(ln)
	cancel()
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// ServeHTTP checks every request before it reaches the routes: the
// loopback Host, a same-origin Origin, the token (from the URL once, then
// the cookie), and the header every change must carry.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")

	if !s.hosts[strings.ToLower(r.Host)] {
		http.Error(w, "403: this page answers at 127.0.0.1 only (the Host header names another address)", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !s.hosts[strings.TrimPrefix(strings.ToLower(o), "http://")] {
		http.Error(w, "403: a request from another page", http.StatusForbidden)
		return
	}
	if t := r.URL.Query().Get("token"); t != "" && r.Method == http.MethodGet && r.URL.Path == "/" {
		if !s.tokenOK(t) {
			http.Error(w, "401: the token in the address is not this user's; open the address `mnemo ui` prints", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.o.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		// The token leaves the address bar and the history.
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	c, err := r.Cookie(s.cookie)
	if err != nil || !s.tokenOK(c.Value) {
		http.Error(w, "401: open the address `mnemo ui` prints (it carries this user's token)", http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Header.Get("X-Mnemo") != "1" {
		http.Error(w, "403: a change must come from the viewer's own page", http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.o.Token)) == 1
}

// routes maps the page's files and the API.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	web, _ := fs.Sub(webFiles, "web")
	file := func(name, ctype string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, err := fs.ReadFile(web, name)
			if err != nil {
				http.Error(w, "500: "+name+" is missing from this build", http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", ctype)
			w.Write(b)
		}
	}
	mux.HandleFunc("GET /{$}", file("index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET /style.css", file("style.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /app.js", file("dist/app.js", "text/javascript; charset=utf-8"))
	s.api(mux)
	return mux
}
