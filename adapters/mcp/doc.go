// Package mcp is Mnemo's MCP server: memory tools for a coding agent,
// served by `mnemo mcp` over stdio with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// The tools follow the progressive disclosure of docs/architecture.md §7, and their
// descriptions teach it to the agent:
//
//	search            a compact index, one line per observation: #id · time · type · title
//	timeline          the observations just before and after an id or a time
//	get_observations  full records, batched
//	save_memory       a note worth keeping, stored as an observation marked "saved"
//	correct_memory    a new title or text for an observation; its history is kept on the record
//	pin_memory        put observations first in every context of their project (unpin: true takes it off)
//	forget            delete observations from every index; says what was removed
//
// Every tool is a thin client of the daemon's mnemo/* methods: it calls
// them with memory/client over a Caller, each call bounded by
// Options.CallTimeout. DaemonClient is the Caller `mnemo mcp` uses: one
// socket connection, dialed on first use and again after it drops.
// Arguments are checked against each tool's published JSON schema before
// anything is called, and every failure (bad arguments, unknown ids, an
// unreachable daemon) comes back as a tool error whose text says what to
// do, never as a protocol error: the server keeps serving.
package mcp
