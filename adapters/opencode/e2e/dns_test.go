//go:build e2e

package e2e_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
)

// dnsRecorder listens where the namespace's /etc/resolv.conf points
// (127.0.0.1:53, run.sh's bind mount) and records the name of every query,
// answering each REFUSED: every host the CLI tries to reach by name shows
// up here, and none resolves.
type dnsRecorder struct {
	conn  net.PacketConn
	mu    sync.Mutex
	names []string
	done  chan struct{}
}

// startDNSRecorder starts the recorder, or returns nil (and logs why) when
// the resolver is not 127.0.0.1.
func startDNSRecorder(t *testing.T) *dnsRecorder {
	t.Helper()
	conf, err := os.ReadFile("/etc/resolv.conf")
	if err != nil || !bytes.Contains(conf, []byte("nameserver 127.0.0.1")) {
		t.Logf("/etc/resolv.conf does not name 127.0.0.1 (run.sh bind-mounts one that does): the names OpenCode looks up are not recorded")
		return nil
	}
	conn, err := net.ListenPacket("udp", "127.0.0.1:53")
	if err != nil {
		t.Logf("listen on 127.0.0.1:53: %v: the names OpenCode looks up are not recorded", err)
		return nil
	}
	d := &dnsRecorder{conn: conn, done: make(chan struct{})}
	go d.serve()
	t.Cleanup(func() {
		_ = conn.Close()
		<-d.done
	})
	return d
}

func (d *dnsRecorder) serve() {
	defer close(d.done)
	buf := make([]byte, 4096)
	for {
		n, addr, err := d.conn.ReadFrom(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil || n < 12 {
			continue
		}
		q := buf[:n]
		name, end, ok := qname(q)
		if !ok {
			continue
		}
		d.mu.Lock()
		d.names = append(d.names, name)
		d.mu.Unlock()
		// The header with QR set, RCODE 5 (REFUSED), one question, no
		// answers; then the question as asked.
		resp := append([]byte(nil), q[:12]...)
		resp[2] = 0x80 | q[2]&0x01 // QR, keep RD
		resp[3] = 0x85             // RA, REFUSED
		copy(resp[4:], []byte{0, 1, 0, 0, 0, 0, 0, 0})
		resp = append(resp, q[12:end]...)
		_, _ = d.conn.WriteTo(resp, addr)
	}
}

// qname reads the first question's name and returns where the question
// (name, type, class) ends.
func qname(q []byte) (string, int, bool) {
	var labels []string
	i := 12
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if l&0xc0 != 0 || i+1+l > len(q) {
			return "", 0, false
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	if i+5 > len(q) {
		return "", 0, false
	}
	return strings.Join(labels, "."), i + 5, true
}

// Names returns the names queried so far, each once, in order.
func (d *dnsRecorder) Names() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, n := range d.names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
