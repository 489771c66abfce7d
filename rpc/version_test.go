package rpc_test

import (
	"net"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/rpc"
)

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		cmp  int
		ok   bool
	}{
		{"0.2.0", "0.1.0", 1, true},
		{"0.1.0", "0.2.0", -1, true},
		{"1.0.0", "0.9.9", 1, true},
		{"0.10.0", "0.9.0", 1, true},
		{"v0.2.0", "0.2.0", 0, true},
		{"0.2.0+abc", "0.2.0+def", 0, true}, // build metadata is not a version
		{"0.2.0", "0.2.0-rc.1", 1, true},    // a release is newer than its pre-releases
		{"0.2.0-rc.2", "0.2.0-rc.10", -1, true},
		{"0.2.0-alpha", "0.2.0-alpha.1", -1, true},
		{"0.2.0-1", "0.2.0-alpha", -1, true},
		// Development builds and unstamped ones compare with nothing.
		{"0.1.0-dev", "0.2.0", 0, false},
		{"0.2.0", "0.1.0-dev+84d2f22", 0, false},
		{"", "0.1.0", 0, false},
		{"0.1", "0.1.0", 0, false},
		{"0.1.x", "0.1.0", 0, false},
		{"0.9.0-test", "0.9.0", -1, true},
	} {
		cmp, ok := rpc.CompareVersions(tc.a, tc.b)
		if cmp != tc.cmp || ok != tc.ok {
			t.Errorf("CompareVersions(%q, %q) = %d, %v; want %d, %v", tc.a, tc.b, cmp, ok, tc.cmp, tc.ok)
		}
	}
}

// A client of an older version is refused at the hello with a message
// naming both versions, unless it resumes a session; a newer one, a
// development build, or one that sends no version (a client from before
// versions were sent) is served.
func TestHelloRefusesAnOlderClient(t *testing.T) {
	d := startDaemon(t) // testServerVersion, 0.9.0-test
	hello := func(h rpc.Hello) error {
		nc, err := net.Dial("unix", d.path)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_, err = rpc.HandshakeWith(ctxT(t), nc, h)
		return err
	}
	err := hello(rpc.Hello{Client: rpc.ClientHook, Version: "0.8.1"})
	if e, ok := err.(*rpc.Error); !ok || e.Code != rpc.CodeVersionMismatch ||
		!strings.Contains(e.Message, "this client is mnemo 0.8.1, older than the running daemon (mnemo 0.9.0-test, pid ") {
		t.Fatalf("older client: %v", err)
	}
	for _, h := range []rpc.Hello{
		{Client: rpc.ClientServe, Version: "0.8.1", Resume: true},
		{Client: rpc.ClientCLI, Version: "0.9.0"},
		{Client: rpc.ClientCLI, Version: "0.8.0-dev"},
		{Client: rpc.ClientCLI},
	} {
		if err := hello(h); err != nil {
			t.Errorf("%+v: %v", h, err)
		}
	}
}
