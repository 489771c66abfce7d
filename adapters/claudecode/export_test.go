package claudecode

// CodexTrust exposes the trust records Codex CLI would need for Mnemo's
// handlers of a hooks.json, to check them against what Codex computes.
var CodexTrust = codexTrust
