package install_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
)

// InstallMCP registers mnemo in ~/.claude.json next to everything Claude
// Code keeps there; a second install changes nothing; uninstall removes
// only mnemo.
func TestInstallMCPKeepsTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude.json")
	orig := `{"numStartups": 3, "projects": {"/src/x": {"hasTrustDialogAccepted": true}}, "mcpServers": {"other": {"type": "stdio", "command": "other-server"}}}`
	os.WriteFile(path, []byte(orig), 0o600)
	r, err := install.InstallMCP(path, "/opt/mnemo/bin/mnemo", nil)
	if err != nil || !r.Changed || len(r.Added) != 1 || r.Backup == "" {
		t.Fatalf("install = %+v, %v", r, err)
	}
	var got struct {
		NumStartups int            `json:"numStartups"`
		Projects    map[string]any `json:"projects"`
		MCPServers  map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.NumStartups != 3 || len(got.Projects) != 1 || got.MCPServers["other"].Command != "other-server" ||
		got.MCPServers["mnemo"].Command != "/opt/mnemo/bin/mnemo" || len(got.MCPServers["mnemo"].Args) != 1 {
		t.Fatalf("after install:\n%s", b)
	}
	if r, err := install.InstallMCP(path, "/opt/mnemo/bin/mnemo", nil); err != nil || r.Changed {
		t.Fatalf("second install = %+v, %v", r, err)
	}
	if r, err := install.UninstallMCP(path); err != nil || len(r.Removed) != 1 {
		t.Fatalf("uninstall = %+v, %v", r, err)
	}
	b, _ = os.ReadFile(path)
	got.MCPServers = nil
	json.Unmarshal(b, &got)
	if _, still := got.MCPServers["mnemo"]; still || got.MCPServers["other"].Command != "other-server" || got.NumStartups != 3 {
		t.Fatalf("after uninstall:\n%s", b)
	}
	if _, err := install.InstallMCP(path, "relative/mnemo", nil); err == nil {
		t.Fatal("a relative mnemo path was accepted")
	}
}

// An MCP file the install made for Mnemo's server alone goes at
// uninstall, with the folder it leaves empty; a file with nothing of
// Mnemo's in it is not touched, however empty.
func TestUninstallMCPDeletesWhatHeldMnemoAlone(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, ".vscode", "mcp.json")
	if r, err := install.InstallMCP(path, "/opt/mnemo/bin/mnemo", nil); err != nil || !r.Changed {
		t.Fatalf("install = %+v, %v", r, err)
	}
	r, err := install.UninstallMCP(path)
	if err != nil || !r.Deleted || r.Backup != "" {
		t.Fatalf("uninstall = %+v, %v; want the file deleted, with no backup", r, err)
	}
	if entries, err := os.ReadDir(project); err != nil || len(entries) != 0 {
		t.Fatalf("the project holds %v (%v), want nothing (and to be kept itself)", entries, err)
	}
	// A person's own empty file stays.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := install.UninstallMCP(path); err != nil || r.Changed {
		t.Fatalf("uninstall of a file without Mnemo = %+v, %v", r, err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "{}\n" {
		t.Fatalf("the person's file: %q, %v", b, err)
	}
}
