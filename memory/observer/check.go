package observer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// checkTimeout bounds each probe of Check.
const checkTimeout = 10 * time.Second

var versionRE = regexp.MustCompile(`^\d+\.\d+\.\d+ \(Claude Code\)`)

// Check tells whether the agent of the given kind can run with o, for
// `mnemo doctor`: for claude, that the binary is found and `claude
// --version` answers as Claude Code does, that its folders can be made,
// and (where logins live in files) that it has credentials; for
// openai-compatible, that the endpoint lists its models, o.Model among
// them. The local agent always can.
func Check(ctx context.Context, kind string, o Options) error {
	o.defaults()
	switch kind {
	case KindLocal, "":
		return nil
	case KindClaude:
		return checkClaude(ctx, o)
	case KindOpenAI:
		return checkOpenAI(ctx, o)
	}
	return fmt.Errorf("%w: unknown agent %q (want %s, %s or %s)", ErrConfig, kind, KindLocal, KindClaude, KindOpenAI)
}

func checkClaude(ctx context.Context, o Options) error {
	c, err := NewClaude(o)
	if err != nil {
		return err
	}
	bin, err := c.binary()
	if err != nil {
		return fmt.Errorf("claude binary not found: %w (install Claude Code, or set the path of its binary)", err)
	}
	for _, dir := range []string{o.WorkDir, o.ConfigDir} {
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("claude agent folder: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Dir = o.WorkDir
	cmd.Env = c.env()
	cmd.WaitDelay = time.Second
	noWindow(cmd)
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w", bin, err)
	}
	if v := strings.TrimSpace(string(out)); !versionRE.MatchString(v) {
		return fmt.Errorf("%s --version answered %q, not a Claude Code version", bin, clipLine(v, 80))
	}
	return checkCredentials(o, c.env())
}

// checkCredentials looks for a login the CLI can use when the agent has a
// configuration folder of its own: a key or token in the environment, or
// the credentials file of a login in that folder. On macOS logins live in
// the keychain, which is not looked at.
func checkCredentials(o Options, env []string) error {
	if o.ConfigDir == "" || runtime.GOOS == "darwin" {
		return nil
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
			"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY":
			if v != "" {
				return nil
			}
		}
	}
	if _, err := os.Stat(filepath.Join(o.ConfigDir, ".credentials.json")); err == nil {
		return nil
	}
	return fmt.Errorf("%w: set ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN (from `claude setup-token`) for the daemon, "+
		"or log in once with `CLAUDE_CONFIG_DIR=%s claude /login`", ErrNoCredentials, o.ConfigDir)
}

func checkOpenAI(ctx context.Context, o Options) error {
	if o.BaseURL == "" {
		return fmt.Errorf("%w: the openai-compatible agent needs a base URL", ErrConfig)
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	url := endpoint(o.BaseURL, "models")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("endpoint %s: %w", o.BaseURL, err)
	}
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	client := o.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("endpoint %s not answering: %w", o.BaseURL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("endpoint %s: %w", o.BaseURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("GET %s: not a model list: %w", url, err)
	}
	if o.Model == "" {
		return errors.New("the openai-compatible agent needs a model; the endpoint serves " + modelNames(list.Data))
	}
	for _, m := range list.Data {
		if m.ID == o.Model || m.ID == o.Model+":latest" || strings.TrimSuffix(m.ID, ":latest") == o.Model {
			return nil
		}
	}
	return fmt.Errorf("model %q is not served by %s; it serves %s", o.Model, o.BaseURL, modelNames(list.Data))
}

func modelNames(data []struct {
	ID string `json:"id"`
}) string {
	if len(data) == 0 {
		return "no models"
	}
	names := make([]string, 0, len(data))
	for _, m := range data {
		names = append(names, m.ID)
	}
	return strings.Join(names, ", ")
}
