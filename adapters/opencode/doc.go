// Package opencode connects OpenCode to Mnemo. OpenCode has no command
// hooks: it loads JavaScript plugins in process, from
// ~/.config/opencode/plugins/ (every project of the user) and
// <project>/.opencode/plugins/. Mnemo's plugin, plugin/mnemo.js (plain ES
// module, no dependencies), runs `mnemo-hook --host opencode <EVENT>` for
// each session event with a Claude-Code-like payload on stdin
// (testdata/payloads/ has one of each, recorded from OpenCode 1.18.33),
// never blocking OpenCode, and puts the context the hook answers into the
// session's system prompt. The hook (adapters/hosts/hook) reads those
// payloads.
//
// This package holds the plugin's file (Plugin, embedded); `mnemo install
// opencode` writes a copy with the hook's absolute path in it
// (adapters/hosts/install).
//
// The plugin's own tests run with node (`node --test` in plugin/); the
// offline end-to-end test of the real OpenCode CLI with Mnemo's daemon and
// hook is in e2e/ (build tag e2e, run.sh).
package opencode
