// Package local is Mnemo's default memory agent: a deterministic
// compressor that turns tool events into observations and turns into
// summaries, offline, in microseconds per event.
//
// It reads the event itself (the tool, its input and its response) and
// the turn so far, the way a person taking notes would:
//
//   - an edit that follows a failing test or command of the same turn is a
//     bugfix ("Fixed roundCents in billing/rounding.go: math.Round →
//     math.RoundToEven"), and the run that passes afterwards says what it
//     confirms;
//   - a new file is a feature, a rename or a move a refactor, reads and
//     searches a discovery, a security-relevant edit a security note;
//   - a choice stated in the prompt ("use X instead of Y", "we decided",
//     "let's go with") becomes a decision observation of its own, once per
//     turn;
//   - facts carry commands and exit codes, the most telling error line,
//     failing test names and the symbols an edit touched; concepts are
//     topic words from files, symbols and tests;
//   - a run passed or failed as its runner says: where the exit code is
//     another command's (`go test ./... | tail -5`, `npm test || true`,
//     `cargo test; echo done`, `make &`), the runner's own verdict in the
//     output decides (FAIL, "2 failed", "test result: FAILED", "error
//     TS2322", BUILD FAILURE…), and a run that shows none is said to have
//     run ("go test ./... (outcome not shown)"), never to pass.
//
// A Stop event becomes a summary of the turn: what was investigated,
// learned and completed, the next steps (a failing run never followed by a
// pass), and the files read and modified. A reply that says the tests pass
// where the turn's last run failed is not listed as completed.
//
// The files follow an event through the agent: agent.go (Agent.Run and
// the limits), event.go (decoding the tool event), observe.go (one
// observation per tool), edit.go and diff.go (edits and what they
// changed), shell.go and command.go (parsing and describing shell
// commands), outcome.go (how a run ended: whose exit code the host
// reported, and the runners' verdicts), output.go (errors and test
// results in command output), turn.go (the runs of the turn so far),
// decision.go (choices stated in the prompt), summary.go (the turn's
// summary), decl.go (declarations in code of any common language) and
// words.go (topic words, files and small text helpers).
package local
