// Package rpc is Mnemo's JSON-RPC 2.0 layer: LSP base framing over any byte
// stream, a method table with typed handlers and one error table, the
// per-user Unix socket with its peer check and version handshake, a client,
// and the stdio-to-daemon forwarder.
//
// rpc imports no other package of this module but rpc/socket, the
// client's side of the socket with the standard library only: the socket's
// path and dial, the daemon's start under its lock, the hello and one
// framed call (socket.CallOnce, which the hook calls without this package),
// and the error codes. The names below that are socket's are aliases or
// thin wrappers here.
//
// The parts, over go.lsp.dev/jsonrpc2 v1:
//
//   - NewStream: Content-Length framing that answers a bad body itself
//     (-32700, -32600) instead of letting jsonrpc2 end the connection.
//   - Mux, Handle, HandleNotify: typed handlers; params decode with json/v2
//     and a failure names the field (-32602); unknown calls get -32601;
//     panics and internal errors become -32603 "internal error" with the
//     details in the log only; $/cancelRequest cancels a call's context.
//   - Error, Code, CodeOf: the one boundary error and its table of wire codes.
//   - Serve, ServeListener, Client: the two ends of a connection.
//   - SocketPath, Listen, DialSocket: the per-user socket, 0600 in a 0700
//     folder, with a peer-uid check (on Windows: in a folder whose ACL
//     grants this user alone; Windows has no peer credentials); the path
//     and the dial are socket's, Listen is here;
//     RequireHello and Client.Hello: the version handshake that must open
//     every socket connection.
//   - Connect, ConnectConn: how every client reaches the daemon: dial or
//     start it (socket.DialOrStart, under a start lock), say hello, and dial again
//     when a dying daemon drops the connection during the hello.
//   - Forward, Handshake, Stdio: the `mnemo serve` forwarder from an
//     editor's stdio to the daemon.
//
// Concurrency: a connection's handlers run one at a time in wire order unless
// registered Concurrent.
//
// The operating system's part is in *_unix.go and *_windows.go: the socket's
// folder and peer check (socket_*), the Accept errors worth a retry
// (sys_*), and Stdio (stdio_*); the socket's path, the file lock, the
// daemon's detached start and the I/O errors that mean a peer is gone are
// rpc/socket's. Unix sockets on Windows need Windows 10 1803 or later.
package rpc
