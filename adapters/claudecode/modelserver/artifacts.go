package modelserver

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// ArtifactsEnv names the folder where end-to-end tests keep what a failed
// run needs to be read: each test's files go in a subfolder named after it.
const ArtifactsEnv = "MNEMO_E2E_ARTIFACTS"

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// ArtifactDir is t's artifact folder, or "" when ArtifactsEnv is not set.
func ArtifactDir(t testing.TB) string {
	dir := os.Getenv(ArtifactsEnv)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, unsafeName.ReplaceAllString(t.Name(), "_"))
}

// SaveArtifact writes data as name in t's artifact folder when there is
// one. A failure to write is logged: artifacts never fail a test.
func SaveArtifact(t testing.TB, name string, data []byte) {
	dir := ArtifactDir(t)
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("artifacts: %v", err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Logf("artifacts: %v", err)
	}
}

// SaveRequests saves the requests s received (WriteRequests) as
// server-requests.jsonl among t's artifacts, when there is a folder for them.
func (s *Server) SaveRequests(t testing.TB) {
	if ArtifactDir(t) == "" {
		return
	}
	var b bytes.Buffer
	if err := s.WriteRequests(&b); err != nil {
		t.Logf("artifacts: %v", err)
	}
	SaveArtifact(t, "server-requests.jsonl", b.Bytes())
}
