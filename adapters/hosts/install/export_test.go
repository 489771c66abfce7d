package install

// CodexTrust exposes the trust records Codex CLI would need for Mnemo's
// handlers of a hooks.json, to check them against what Codex computes.
var CodexTrust = codexTrust

// SpliceJSON is spliceJSON over stripJSONC, for the fuzz test.
func SpliceJSON(data []byte, want []byte) ([]byte, bool) {
	return spliceJSON(data, stripJSONC(data), want)
}

// EqualJSONC reports whether two JSON-with-comments texts hold the same value.
func EqualJSONC(a, b []byte) bool { return equalJSON(stripJSONC(a), stripJSONC(b)) }

// OpenCodePlugin is the plugin the installer writes for the hook at
// hookPath.
var OpenCodePlugin = openCodePlugin
