// Package daemon is Mnemo's runtime: what owns a Mnemo home's memory and
// serves it. cmd/mnemo's commands start it (`mnemo daemon`, `mnemo serve
// --remote=none`, `mnemo demo`) and are otherwise its clients, as every
// other program is.
//
// # What runs
//
// Main.Open opens a home: it reads the settings (Config: settings.json,
// then the MNEMO_* variables), makes the embedder and the memory agent
// they name, and opens the store (memory/store), waiting up to LockWait
// for a daemon it replaces. Beside the store run the rules refresher
// (rules.go: a session's end rewrites Mnemo's block in the project's
// marked rules files, at most once every 30 s), team memory's push and
// pull once a server is set (team.go, memory/team), and, from the first
// mnemo/viewer on, the memory viewer on 127.0.0.1 (viewer.go,
// adapters/viewer).
//
// Each client connection gets the method table (handler.go): every mnemo/*
// method of package memory, mapped onto the store through one error table
// (wireError); an editor's LSP session (adapters/vscode); the change feed
// once asked (watch.go); export and import, whose files the daemon writes
// and reads (export.go). Main.ServeConn serves one connection in this
// process (`mnemo serve --remote=none`); Main.Connect gives a client over
// an in-memory pipe (the demo, the viewer, the hook spool's replay, the
// benchmarks).
//
// Daemon.Run is the daemon: it listens on the home's socket (rpc.Listen:
// one daemon per home), requires each client's hello with its Version
// (rpc.RequireHello), replays the hook spool at start and every
// SpoolInterval, and keeps its resident set close to what it holds (gc.go,
// pages_linux.go).
//
// # What it owns
//
// The home's files: db/ (Badger, through the store), agents/ and state/
// (the memory agent's), settings.json (pause and team memory write theirs
// there, every other key kept), viewer.json (the viewer's token and port),
// and the exports it is asked to write. The socket's listener. Every
// goroutine it starts, each with an owner that waits for it.
//
// # How it stops
//
// Run returns when its context ends (SIGTERM or SIGINT: `mnemo daemon
// stop`); after IdleTimeout with no client, nothing queued and no team push
// waiting; or once its binary was replaced (an upgrade) and no client is
// connected. It stops accepting, ends its watchers, gives queued work 3 s
// (what is left is processed at the next start) and closes. Main.Close
// stops the viewer, team memory and the rules refresher, then the store's
// worker and the store. A Conn is closed before its Main; ServeConn ends
// with its client.
//
// # For the commands
//
// Version is Mnemo's version. LoadConfig, SettingsFile, ModelsDir and
// CheckAgent tell `mnemo doctor` what is in force; SplitList and
// ReplaceFile are the commands' too.
package daemon
