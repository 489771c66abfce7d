//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"time"

	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

// measureViewer starts the daemon's memory viewer (mnemo/viewer, as `mnemo
// ui` does), opens it with its token as a browser would, and times its
// API over loopback HTTP, after five warm-up calls each: the first page of
// the newest records (what the page shows as it opens), a search (the
// benchmark's queries), and the first page of sessions.
func measureViewer(ctx context.Context, rc *rpc.Client, ds *dataSet, res *sizeResult) error {
	v, err := client.New(rc).Viewer(ctx)
	if err != nil {
		return err
	}
	u, err := url.Parse(v.URL)
	if err != nil {
		return err
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	get := func(path string) (time.Duration, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", path, nil)
		if err != nil {
			return 0, err
		}
		t0 := time.Now()
		r, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		took := time.Since(t0)
		if err == nil && r.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %s", path, r.Status)
		}
		return took, err
	}
	if _, err := get(v.URL); err != nil { // the login: the cookie
		return err
	}
	base := u.Scheme + "://" + u.Host
	timeIt := func(n int, path func(i int) string, into *dist) error {
		for i := range 5 + n {
			took, err := get(base + path(i))
			if err != nil {
				return err
			}
			if i >= 5 {
				*into = append(*into, took)
			}
		}
		return nil
	}
	if err := timeIt(50, func(int) string { return "/api/records?limit=50" }, &res.viewerPage); err != nil {
		return err
	}
	if err := timeIt(len(ds.queries), func(i int) string {
		return "/api/records?limit=50&q=" + url.QueryEscape(ds.queries[i%len(ds.queries)].Text)
	}, &res.viewerSearch); err != nil {
		return err
	}
	return timeIt(20, func(int) string { return "/api/sessions?limit=50" }, &res.viewerSessions)
}
