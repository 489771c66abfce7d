package vector_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/vector"
)

// writeTinyModel writes a tfjs model with every tensor the encoder reads, at
// its real size (an embedding table of 8 pieces), with values that differ
// from tensor to tensor, into 1 MB shards that tensors straddle; an int32
// tensor and an unused float32 one sit between them, as in the real
// package. It returns the models folder (the model is in its use-lite/).
func writeTinyModel(tb testing.TB) string {
	tb.Helper()
	models := tb.TempDir()
	dir := filepath.Join(models, "use-lite")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	type weight struct {
		Name  string `json:"name"`
		Shape []int  `json:"shape"`
		Dtype string `json:"dtype"`
	}
	var ws []weight
	var buf []byte
	put := func(name, dtype string, n int, seed int) {
		ws = append(ws, weight{name, []int{n}, dtype})
		for i := range n {
			v := float32(math.Sin(float64(seed*7919+i))) * 0.05
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	put("unused/int32", "int32", 3, 0)
	for i, t := range vector.USELiteTensors() {
		n := t.Size
		if n == 0 {
			n = 8 * 256
		}
		put(t.Name, "float32", n, i+1)
		if i == 3 {
			put("unused/float32", "float32", 1000, 99)
		}
	}
	var paths []string
	for i := 0; len(buf) > 0; i++ {
		n := min(len(buf), 1<<20)
		name := fmt.Sprintf("group1-shard%d", i+1)
		if err := os.WriteFile(filepath.Join(dir, name), buf[:n], 0o644); err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, name)
		buf = buf[n:]
	}
	man := map[string]any{"weightsManifest": []any{map[string]any{"paths": paths, "weights": ws}}}
	raw, _ := json.Marshal(man)
	if err := os.WriteFile(filepath.Join(dir, "model.json"), raw, 0o644); err != nil {
		tb.Fatal(err)
	}
	vocab := `[["?",0],["<s>",0],["</s>",0],["x1",0],["x2",0],["x3",0],["▁a",-1],["▁b",-2]]`
	if err := os.WriteFile(filepath.Join(dir, "vocab.json"), []byte(vocab), 0o644); err != nil {
		tb.Fatal(err)
	}
	return models
}

// openInfo opens the encoder in models and returns what LoadInfo says.
func openInfo(t *testing.T, models string) (*vector.USELite, string) {
	t.Helper()
	e, err := vector.OpenUSELite(models)
	if err != nil {
		t.Fatal(err)
	}
	m := e.(*vector.USELite)
	return m, m.LoadInfo()
}

// sameTensors checks that the weights file holds the shards' tensors bit
// for bit.
func sameTensors(t *testing.T, dir string) {
	t.Helper()
	got, mapped, err := vector.ReadWeightsFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := runtime.GOOS == "linux" || runtime.GOOS == "darwin"; mapped != want {
		t.Errorf("mapped %v on %s", mapped, runtime.GOOS)
	}
	shards, err := vector.ReadShards(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range vector.USELiteTensors() {
		a, b := got[ts.Name], shards[ts.Name]
		if len(a) != len(b) || len(a) == 0 {
			t.Fatalf("%s: %d values in the file, %d in the shards", ts.Name, len(a), len(b))
		}
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("%s[%d]: %v in the file, %v in the shards", ts.Name, i, a[i], b[i])
			}
		}
	}
	if _, ok := got["unused/float32"]; ok {
		t.Error("the file holds a tensor the encoder does not read")
	}
}

// TestWeightsFile covers the converted weights file: written at the first
// open of an install that lacks it, the shards' bits exactly, used as is
// afterwards, and refused with a clear error, then rebuilt, whenever it is
// damaged, truncated or stale, never used silently.
func TestWeightsFile(t *testing.T) {
	skipUnderRace(t)
	models := writeTinyModel(t)
	dir := filepath.Join(models, "use-lite")
	path := filepath.Join(dir, vector.WeightsFileName)
	m, info := openInfo(t, models)
	if !strings.Contains(info, "rebuilt: no "+vector.WeightsFileName) {
		t.Errorf("first open: %q, want the file written", info)
	}
	want, err := m.Embed(context.Background(), "a b a")
	if err != nil {
		t.Fatal(err)
	}
	sameTensors(t, dir)
	if _, info := openInfo(t, models); strings.Contains(info, "rebuilt") || !strings.Contains(info, path) {
		t.Errorf("second open: %q, want the file used as it is", info)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		damage func(t *testing.T)
		why    string
	}{
		{"a flipped byte in a tensor", func(t *testing.T) {
			b := append([]byte(nil), good...)
			b[len(b)-5] ^= 0x40
			write(t, path, b)
		}, "checksum mismatch"},
		{"a flipped byte in the table", func(t *testing.T) {
			b := append([]byte(nil), good...)
			b[100] ^= 0x01
			write(t, path, b)
		}, "checksum mismatch"},
		{"truncated", func(t *testing.T) { write(t, path, good[:len(good)-4096]) }, "truncated or appended to"},
		{"truncated in the header", func(t *testing.T) { write(t, path, good[:40]) }, "truncated header"},
		{"appended to", func(t *testing.T) { write(t, path, append(append([]byte(nil), good...), 0)) }, "truncated or appended to"},
		{"empty", func(t *testing.T) { write(t, path, nil) }, "truncated header"},
		{"not a weights file", func(t *testing.T) { write(t, path, []byte(strings.Repeat("x", 200))) }, "not a weights file"},
		{"another format version", func(t *testing.T) {
			b := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(b[8:], 99)
			write(t, path, b)
		}, "format version 99"},
		{"converted from another model.json", func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, "model.json"))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, "model.json"), append(raw, '\n'))
		}, "converted from another model.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.damage(t)
			_, _, err := vector.ReadWeightsFile(dir)
			if !errors.Is(err, vector.ErrWeightsFile) || !strings.Contains(err.Error(), tt.why) || !strings.Contains(err.Error(), path) {
				t.Fatalf("reading the damaged file: %v, want ErrWeightsFile saying %q and naming the file", err, tt.why)
			}
			m, info := openInfo(t, models)
			if !strings.Contains(info, "rebuilt: ") || !strings.Contains(info, tt.why) {
				t.Errorf("open: %q, want the file rebuilt saying %q", info, tt.why)
			}
			sameTensors(t, dir)
			got, err := m.Embed(context.Background(), "a b a")
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("vector[%d] %v after the rebuild, %v before", i, got[i], want[i])
				}
			}
			good, _ = os.ReadFile(path)
		})
	}

	t.Run("a folder that cannot take the file", func(t *testing.T) {
		// A non-empty folder where the file goes: it can be neither read
		// nor replaced, so the encoder reads the shards into the heap.
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		m, info := openInfo(t, models)
		if !strings.Contains(info, "into the heap") || !strings.Contains(info, "rewriting") {
			t.Errorf("open: %q, want the shards read into the heap, saying why", info)
		}
		got, err := m.Embed(context.Background(), "a b a")
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("vector[%d] %v from the shards, %v from the file", i, got[i], want[i])
			}
		}
	})
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUSELiteWeightsFileSameVectors checks, on the real model, that the
// vectors from the memory-mapped weights file are the bits the shards gave.
func TestUSELiteWeightsFileSameVectors(t *testing.T) {
	mapped := openUSELite(t)
	heap, err := vector.OpenUSELiteShards(os.Getenv("MNEMO_MODELS"))
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"Fixed the login bug in auth.ts where the session token expired too early",
		"schema upgrade broke the prod DB\nrolled back the migration\nadded an index",
		"Ünïcödé ✓ 日本語 and an unknown char \u0000",
	}
	for _, s := range texts {
		a, err := mapped.Embed(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := heap.Embed(context.Background(), s)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("%q: vector[%d] %v from the weights file, %v from the shards", s, i, a[i], b[i])
			}
		}
	}
}
