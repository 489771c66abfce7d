package daemon

import (
	"os"
	"path/filepath"
	"testing"
)

// The model is looked for in the home, then in the .cache/models of the
// checkout whose bin/ holds the binary (where `just demo` puts it); the
// home's folder is named when neither holds one.
func TestModelsDir(t *testing.T) {
	root := t.TempDir()
	home, checkout := filepath.Join(root, "home"), filepath.Join(root, "checkout")
	exe := filepath.Join(checkout, "bin", "mnemo")
	homeModels, cacheModels := filepath.Join(home, "models"), filepath.Join(checkout, ".cache", "models")
	if got := modelsDir(home, exe); got != homeModels {
		t.Errorf("no model anywhere: %s, want %s", got, homeModels)
	}
	if err := os.MkdirAll(filepath.Join(cacheModels, "use-lite"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := modelsDir(home, exe); got != cacheModels {
		t.Errorf("the checkout's model: %s, want %s", got, cacheModels)
	}
	if got := modelsDir(home, ""); got != homeModels {
		t.Errorf("no binary: %s, want %s", got, homeModels)
	}
	if err := os.MkdirAll(filepath.Join(homeModels, "use-lite"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := modelsDir(home, exe); got != homeModels {
		t.Errorf("both: %s, want the home's %s", got, homeModels)
	}
}
