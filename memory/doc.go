// Package memory is Mnemo's domain: sessions, prompts, observations,
// summaries, the durable queue between the five lifecycle stages and the
// memory agent, the privacy rules, and the Badger store that holds them.
//
// memory never imports rpc or an adapter; clients reach it through the
// handlers that cmd/mnemo wires.
package memory
