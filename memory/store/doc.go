// Package store is Mnemo's memory engine: Open returns a *Memory that
// serves the five stages and recall (search, timeline, get, context, save,
// forget) over one Badger database, with the durable queue between the
// stages and the memory agent, the worker that drains it, the search index
// kept beside it, and maintenance (doctor, export and import, the audit of
// agent runs and of context injections). The types it takes and returns are
// the domain's, in package memory.
//
// Exactly one process opens a data directory (ErrLocked otherwise): the
// daemon, or `mnemo serve --stdio --remote=none`. Every other process is a
// client of it over rpc.
//
// # What Badger's transactions promise
//
// Badger is used directly, not behind an interface, because the promises
// below are properties of its transactions:
//
//   - an acknowledged write is held by the operating system (Badger's
//     write-ahead log is written through a shared mapping), so it survives
//     a kill of any process; a group sync, shared by the writers of the
//     moment and started at once, carries it to disk within SyncWindow
//     (100 ms), after which it survives a crash of the machine too
//     (groupsync.go; docs/architecture.md §2);
//   - an event is queued in the transaction that acknowledges it, and the
//     agent's observations are stored, indexed and the event dequeued in
//     one transaction, so an event is processed once or not at all;
//   - an idempotency key is stored with the effect of its call;
//   - forget deletes a record with its index entries and vector, and
//     compacts, so forgotten text is gone from disk. Badger's blocks are
//     stored uncompressed for that reason; the store compresses each value
//     itself, in frames an audit finds and inflates (codec.go, Frames).
//
// The key layout is documented in store.go; the search index (vector and
// keyword) is derived data, rebuilt from Badger at start.
package store
