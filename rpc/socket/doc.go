// Package socket is the client's side of the daemon's per-user socket,
// with the standard library only (and golang.org/x/sys for the file lock):
// what the hook links to reach the daemon, and what package rpc builds its
// client on, so that there is one of each of these:
//
//   - Home, Path: the Mnemo home and the daemon's socket in it (a short
//     private path named by a hash of the home when that is too long for
//     a socket).
//   - Dial: a connection to the socket, as an *os.File on Unix (no
//     package net; the runtime's poller serves its reads, writes and
//     deadlines), a net.Conn on Windows. ErrNoDaemon when nobody listens.
//   - Running, ListenLock: the lock a listening daemon holds for its
//     life, which a client reads without connecting.
//   - DialOrStart, StartDetached, StartFor: the daemon's start under the
//     start lock <home>/run/start.lock, detached from the client, and the
//     remembered failed start (StartOptions.FailPath).
//   - Hello, Handshake, CompareVersions, ReleaseVersion: the version
//     handshake that opens every connection, and the hand-over of an
//     older daemon to a newer client's (Options.Version).
//   - Connect, CallOnce: a connection after its hello, and one framed
//     JSON-RPC 2.0 call with the hello in the same write, for a client
//     that makes one call per process.
//   - Code, Error: the boundary error and its one table of wire codes
//     (package rpc names them too).
//
// The frames are LSP base framing (Content-Length), the messages JSON-RPC
// 2.0 as go.lsp.dev/jsonrpc2 writes them, encoded with encoding/json: the
// bytes the daemon's rpc.Serve reads. A refused hello is read from its
// words (ProtocolMismatch), without package regexp.
//
// Costs: the hook starts in a few milliseconds, most of them the
// process's, and every package linked adds its inits and its pages.
// Without rpc's JSON-RPC machinery (go.lsp.dev/jsonrpc2,
// go-json-experiment), package net and package regexp, the hook's
// PostToolUse went from 1.28–1.37× an empty Go program to 1.16–1.23×, in
// one loop at load ~4 (docs/decisions.md, "The hook links rpc/socket, not
// rpc"). Keep it so: what this package imports, the hook links.
package socket
