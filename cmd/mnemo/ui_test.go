package main_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `mnemo ui --no-open` starts the daemon's viewer and prints its address
// alone, on one line; the address is the same the next time, also after
// the daemon restarted (the port and the token are kept, 0600); the page
// refuses a request without the token and serves one with it.
func TestUINoOpen(t *testing.T) {
	env := newTestEnv(t)
	t.Cleanup(func() { stopDaemon(t, env) })
	out := mnemo(t, env, "ui", "--no-open")
	if strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "http://127.0.0.1:") || !strings.Contains(out, "/?token=") {
		t.Fatalf("mnemo ui --no-open printed %q", out)
	}
	addr := strings.TrimSpace(out)
	if again := strings.TrimSpace(mnemo(t, env, "ui", "--no-open")); again != addr {
		t.Errorf("a second call: %q, then %q", addr, again)
	}
	fi, err := os.Stat(filepath.Join(env.home, "viewer.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("viewer.json: %v %v", fi, err)
	}

	u, _ := url.Parse(addr)
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := client.Get(u.Scheme + "://" + u.Host + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d", res.StatusCode)
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err = client.Get(addr)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cookies := res.Cookies()
	if res.StatusCode != http.StatusSeeOther || len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("with the token: %d %+v", res.StatusCode, cookies)
	}
	req, _ := http.NewRequest("GET", u.Scheme+"://"+u.Host+"/api/status", nil)
	req.AddCookie(cookies[0])
	res, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"dataDir"`) {
		t.Errorf("with the cookie: %d %s", res.StatusCode, body)
	}

	stopDaemon(t, env)
	if restarted := strings.TrimSpace(mnemo(t, env, "ui", "--no-open")); restarted != addr {
		t.Errorf("after a restart: %q, before %q", restarted, addr)
	}
}
