package main

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/vector"
)

// setupCommand is `mnemo setup`: the one command a person runs after
// getting the binaries. It installs the sentence encoder's weights when
// they are missing, finds the coding agents and editors on the machine,
// wires each one the person confirms for their user (the installers of
// `mnemo install`), says what it changed and where, and records it in
// <home>/setup.json, so that `mnemo setup --undo` takes back exactly that.
func setupCommand() *cli.Command {
	return &cli.Command{
		Name:  "setup",
		Usage: "install the model and wire Mnemo into the coding agents found on this machine (--undo takes it back)",
		Description: "Asks for each agent or editor found (y/N) on a terminal; --yes wires every one found,\n" +
			"--host only those named. What it changed is recorded in <home>/setup.json.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "wire every agent found, without asking"},
			&cli.StringSliceFlag{Name: "host", Usage: "wire this host only (repeatable): " + installerNames()},
			&cli.BoolFlag{Name: "undo", Usage: "take back what setup did: the agents' files as they were, the model if setup fetched it"},
			&cli.BoolFlag{Name: "no-model", Usage: "do not install the sentence encoder's weights"},
			&cli.StringFlag{Name: "hook", Usage: "path of the mnemo-hook binary (default: next to mnemo, else on PATH)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("setup takes no arguments, not %q: name hosts with --host", c.Args().First())
			}
			home, err := homeDir(c)
			if err != nil {
				return err
			}
			if c.Bool("undo") {
				if c.Bool("yes") || len(c.StringSlice("host")) > 0 {
					return errors.New("--undo takes back the whole setup; it takes no --yes or --host")
				}
				return undoSetup(c.App.Writer, home)
			}
			return runSetup(c, home)
		},
	}
}

// setupRecord is <home>/setup.json: what setup did, for --undo.
type setupRecord struct {
	// Version is the record's format.
	Version int       `json:"version"`
	Time    time.Time `json:"time"`
	// Mnemo is the version of the mnemo that wrote it.
	Mnemo string `json:"mnemo"`
	// Model is the folder setup installed the weights into; "" when they
	// were there already (or not installed).
	Model string `json:"model,omitempty"`
	// Hosts lists the hosts setup wired for the user, with what it added:
	// a host's hooks or MCP server there before setup stay after --undo.
	Hosts []setupHostRec `json:"hosts"`
	// Files lists every file setup changed, in order.
	Files []setupFile `json:"files"`
	// Dirs lists the folders setup created, parents first.
	Dirs []string `json:"dirs,omitempty"`
}

// setupHostRec is what setup added to one host.
type setupHostRec struct {
	Host  string `json:"host"`
	Hooks bool   `json:"hooks,omitempty"`
	MCP   bool   `json:"mcp,omitempty"`
}

// setupFile is one file setup changed: whether it was there, and the
// SHA-256 of its bytes before and after (not the bytes: settings hold
// people's tokens, and the uninstallers give the bytes back).
type setupFile struct {
	Host    string `json:"host"`
	Path    string `json:"path"`
	Existed bool   `json:"existed"`
	Before  string `json:"before,omitempty"`
	After   string `json:"after,omitempty"`
}

const setupFileName = "setup.json"

func setupPath(home string) string { return filepath.Join(home, setupFileName) }

// readSetup reads the record; ok is false when there is none.
func readSetup(home string) (rec setupRecord, ok bool, err error) {
	data, err := os.ReadFile(setupPath(home))
	if errors.Is(err, fs.ErrNotExist) {
		return setupRecord{Version: 1}, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, false, fmt.Errorf("%s is not a setup record (%v); remove it, then run `mnemo setup` again", setupPath(home), err)
	}
	return rec, true, nil
}

func writeSetup(home string, rec setupRecord) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	return daemon.ReplaceFile(setupPath(home), func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	})
}

// fileHash is the SHA-256 of the file at path, and whether it exists.
func fileHash(path string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), true
}

func runSetup(c *cli.Context, home string) error {
	w := c.App.Writer
	rec, _, err := readSetup(home)
	if err != nil {
		return err
	}
	rec.Version, rec.Mnemo = 1, daemon.Version
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}

	// The model first: it is what a fresh machine most likely lacks.
	if !c.Bool("no-model") {
		dir := daemon.ModelsDir(home)
		_, notice := vector.DefaultEmbedder(dir)
		switch err := vector.InstallModel(c.Context, dir, func(msg string) { fmt.Fprintln(c.App.ErrWriter, msg) }); {
		case err != nil:
			fmt.Fprintf(w, "model: not installed: %v\n  Mnemo searches with its keyword-hashing embedder until `mnemo model install` succeeds.\n", err)
		case notice != "":
			fmt.Fprintf(w, "model: installed in %s\n", dir)
			if rec.Model == "" {
				rec.Model = dir
			}
		default:
			fmt.Fprintf(w, "model: already installed in %s\n", dir)
		}
	}

	hosts, err := chooseHosts(c)
	if err != nil {
		return err
	}
	if len(hosts) == 0 {
		fmt.Fprintln(w, "no agent wired. `mnemo install` lists the agents Mnemo knows and where each is wired.")
		return writeSetup(home, rec)
	}
	hook, err := hookPath(c.String("hook"))
	if err != nil {
		return err
	}
	userHome, err := os.UserHomeDir()
	if err != nil {
		return err
	}
	p := hostPaths{scope: install.ScopeUser, dir: mustGetwd(), home: userHome}
	var failed []string
	for _, in := range hosts {
		added, err := setupHost(c, in, p, hook, &rec)
		// What setup added is setup's to take back, and nothing else: a
		// host's hooks or server wired before stay wired after --undo.
		i := slices.IndexFunc(rec.Hosts, func(h setupHostRec) bool { return h.Host == in.Host })
		if i < 0 && (added.Hooks || added.MCP) {
			rec.Hosts = append(rec.Hosts, setupHostRec{Host: in.Host})
			i = len(rec.Hosts) - 1
		}
		if i >= 0 {
			rec.Hosts[i].Hooks = rec.Hosts[i].Hooks || added.Hooks
			rec.Hosts[i].MCP = rec.Hosts[i].MCP || added.MCP
		}
		if err != nil {
			fmt.Fprintf(w, "%s: not wired: %v\n", in.Title, err)
			failed = append(failed, in.Host)
		}
	}
	if err := writeSetup(home, rec); err != nil {
		return fmt.Errorf("record the setup: %w", err)
	}
	fmt.Fprintf(w, "recorded in %s: `mnemo setup --undo` takes it back; `mnemo doctor` checks it.\n", setupPath(home))
	if len(failed) > 0 {
		return fmt.Errorf("not wired: %s", strings.Join(failed, ", "))
	}
	return nil
}

// chooseHosts is the hosts to wire: those named with --host, every one
// found with --yes, else those the person says yes to on the terminal.
func chooseHosts(c *cli.Context) ([]install.Installer, error) {
	all := install.Installers
	if named := c.StringSlice("host"); len(named) > 0 {
		var out []install.Installer
		for _, name := range named {
			i := slices.IndexFunc(all, func(in install.Installer) bool { return in.Host == name })
			if i < 0 {
				return nil, fmt.Errorf("unknown host %q: one of %s", name, installerNames())
			}
			if !slices.ContainsFunc(out, func(in install.Installer) bool { return in.Host == name }) {
				out = append(out, all[i])
			}
		}
		return out, nil
	}
	rows, err := hostRows(mustGetwd())
	if err != nil {
		return nil, err
	}
	w := c.App.Writer
	var found []hostRow
	for _, r := range rows {
		if r.found != "" {
			found = append(found, r)
		}
	}
	if len(found) == 0 {
		fmt.Fprintf(w, "no coding agent found (looked for %s)\n", installerNames())
		return nil, nil
	}
	var out []install.Installer
	if c.Bool("yes") {
		for _, r := range found {
			out = append(out, r.in)
		}
		return out, nil
	}
	if !askable(c.App.Reader) {
		names := make([]string, len(found))
		for i, r := range found {
			names[i] = r.in.Host
		}
		return nil, fmt.Errorf("found %s, and no terminal to ask on: pass --yes to wire them all, or --host <host> for some", strings.Join(names, ", "))
	}
	in := bufio.NewReader(c.App.Reader)
	for _, r := range found {
		fmt.Fprintf(w, "Wire Mnemo into %s (found %s; Mnemo for your user: %s)? [y/N] ", r.in.Title, r.found, wiringState(r.user, r.userErr))
		line, err := in.ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
			out = append(out, r.in)
		}
		if err != nil {
			fmt.Fprintln(w)
			break
		}
	}
	return out, nil
}

// askable reports whether r is a terminal (a character device) that a
// person answers on.
func askable(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	// The null device is a character device too, and no one answers there.
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// setupHost wires one host for the user, recording the files it changes;
// added says which parts it added or changed (hooks, MCP server).
func setupHost(c *cli.Context, in install.Installer, p hostPaths, hook string, rec *setupRecord) (added setupHostRec, err error) {
	w := c.App.Writer
	hooks, err := in.HooksPath(p.scope, p.dir, p.home)
	if err != nil {
		return added, err
	}
	mcp, why, err := in.MCPPath(p.scope, p.dir, p.home)
	if err != nil {
		return added, err
	}
	// Every file the host's install may change: its hooks, its MCP
	// servers, and Codex's config.toml (the trust of its hooks).
	paths := []string{hooks, mcp}
	if in.Host == hosts.Codex {
		paths = append(paths, filepath.Join(filepath.Dir(hooks), "config.toml"))
	}
	type state struct {
		hash    string
		existed bool
	}
	before := map[string]state{}
	for _, path := range paths {
		if path == "" {
			continue
		}
		h, ok := fileHash(path)
		before[path] = state{h, ok}
		rec.Dirs = appendMissingDirs(rec.Dirs, filepath.Dir(path))
	}
	fmt.Fprintf(w, "%s:\n", in.Title)
	res, ierr := in.Install(hooks, install.Options{HookPath: hook, Home: p.home})
	printResult(c, res, cmp.Or(res.Label, "hooks")+" installed", hook, ierr)
	added.Hooks = res.Changed || slices.ContainsFunc(res.Also, func(r install.Result) bool { return r.Changed })
	if ierr == nil && in.Note != nil {
		if note := in.Note(p.scope); note != "" {
			fmt.Fprintf(w, "  note: %s\n", note)
		}
	}
	if ierr == nil {
		if mcp == "" {
			fmt.Fprintf(w, "MCP server not installed: %s\n", why)
		} else {
			var r install.Result
			r, ierr = installHostMCP(c, in, p)
			added.MCP = r.Changed
		}
	}
	if in.NeedsRules {
		fmt.Fprintf(w, "  note: %s takes no context from its hooks; in a project, `mnemo install %s --scope project` also keeps %s up to date with its memory\n", in.Title, in.Host, in.Rules)
	}
	// What changed is recorded even when a later step failed: --undo
	// takes back what was done.
	for _, path := range paths {
		b, seen := before[path]
		if !seen {
			continue
		}
		after, _ := fileHash(path)
		if after == b.hash {
			continue
		}
		i := slices.IndexFunc(rec.Files, func(f setupFile) bool { return f.Path == path })
		if i < 0 {
			rec.Files = append(rec.Files, setupFile{Host: in.Host, Path: path, Existed: b.existed, Before: b.hash})
			i = len(rec.Files) - 1
		}
		rec.Files[i].After = after
	}
	return added, ierr
}

// appendMissingDirs adds dir and those of its parents that do not exist
// yet to dirs, parents first.
func appendMissingDirs(dirs []string, dir string) []string {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append(missing, d)
	}
	for _, d := range slices.Backward(missing) {
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// undoSetup takes back what the setup record says: each host's hooks and
// MCP server out of its files (the uninstallers, which give a person's
// file back byte for byte), a file setup created deleted once it holds
// nothing else, the folders it created if empty, the model if setup
// fetched it; then the record goes.
func undoSetup(w io.Writer, home string) error {
	rec, ok, err := readSetup(home)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintf(w, "nothing to undo: no setup recorded in %s\n", home)
		return nil
	}
	userHome, err := os.UserHomeDir()
	if err != nil {
		return err
	}
	all := install.Installers
	var failed []string
	for _, h := range rec.Hosts {
		i := slices.IndexFunc(all, func(in install.Installer) bool { return in.Host == h.Host })
		if i < 0 {
			failed = append(failed, h.Host)
			fmt.Fprintf(w, "%s: unknown to this mnemo; take its hooks out by hand\n", h.Host)
			continue
		}
		if err := unwireHost(w, all[i], userHome, h); err != nil {
			fmt.Fprintf(w, "%s: %v\n", all[i].Title, err)
			failed = append(failed, h.Host)
		}
	}
	for _, f := range rec.Files {
		now, exists := fileHash(f.Path)
		back := false
		switch {
		case !exists && !f.Existed:
			// The uninstaller deleted what held only Mnemo's.
			fmt.Fprintf(w, "%s: deleted (setup created it)\n", f.Path)
			back = true
		case !exists:
			fmt.Fprintf(w, "%s: gone since setup\n", f.Path)
		case !f.Existed && emptySettings(f.Path):
			if err := os.Remove(f.Path); err != nil {
				return err
			}
			fmt.Fprintf(w, "%s: deleted (setup created it)\n", f.Path)
			back = true
		case f.Existed && now == f.Before:
			fmt.Fprintf(w, "%s: as it was before setup, byte for byte\n", f.Path)
			back = true
		default:
			fmt.Fprintf(w, "%s: Mnemo's entries taken out; the file changed otherwise since setup, and those changes are kept (so are its backups)\n", f.Path)
		}
		if back {
			removeBackups(f.Path, rec.Time)
		}
	}
	for _, d := range slices.Backward(rec.Dirs) {
		// Only when empty; an uninstaller that deleted the file it held
		// may have removed it already.
		if err := os.Remove(d); err == nil || errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(w, "%s: folder removed (setup created it)\n", d)
		}
	}
	if rec.Model != "" {
		dir := filepath.Join(rec.Model, vector.ModelDirName)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: model removed (setup installed it)\n", dir)
	}
	if len(failed) > 0 {
		return fmt.Errorf("not taken back: %s; %s is kept", strings.Join(failed, ", "), setupPath(home))
	}
	if err := os.Remove(setupPath(home)); err != nil {
		return err
	}
	fmt.Fprintln(w, "setup undone")
	return nil
}

// unwireHost takes Mnemo's hooks and MCP server, those setup added (h),
// out of a host's user files.
func unwireHost(w io.Writer, in install.Installer, home string, h setupHostRec) error {
	if h.Hooks {
		hooks, err := in.HooksPath(install.ScopeUser, mustGetwd(), home)
		if err != nil {
			return err
		}
		r, err := in.Uninstall(hooks, install.Options{Home: home})
		if err != nil {
			return err
		}
		if r.Changed {
			fmt.Fprintf(w, "%s: %s of %s uninstalled\n", r.Path, cmp.Or(r.Label, "hooks"), in.Title)
		}
	}
	mcp, _, err := in.MCPPath(install.ScopeUser, mustGetwd(), home)
	if err != nil || mcp == "" || !h.MCP {
		return err
	}
	r, err := in.UninstallMCP(mcp)
	if err == nil && r.Changed {
		fmt.Fprintf(w, "%s: MCP server of %s uninstalled\n", r.Path, in.Title)
	}
	return err
}

// emptySettings reports whether the file at path holds no setting: only
// whitespace, an empty object, or a hooks file's version alone.
func emptySettings(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return true
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(data, &v) != nil {
		return false
	}
	delete(v, "version")
	return len(v) == 0
}

// removeBackups deletes the copies the installers made of the file at
// path (<path>.bak-<time>) since the setup at since: the file is back as
// it was, and they hold only what setup and its undo wrote over.
func removeBackups(path string, since time.Time) {
	baks, _ := filepath.Glob(path + ".bak-*")
	from := since.UTC().Format("20060102T150405Z")
	for _, b := range baks {
		if stamp := strings.TrimPrefix(b, path+".bak-"); stamp >= from {
			os.Remove(b)
		}
	}
}
