//go:build unix

// Package pgtest runs a throw-away PostgreSQL for tests and benchmarks:
// initdb on a temporary folder, the server on a free loopback port, trust
// authentication for the role "mnemo", no Unix socket. The binaries are
// found at run time (Bin). PostgreSQL refuses to run as root, so under
// root the folder is given to the user "nobody" and initdb, pg_ctl and
// the server run as that user (the process credential, no sudo or
// setpriv needed).
package pgtest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoPostgres is returned by Bin when no PostgreSQL binaries are found.
var ErrNoPostgres = errors.New("no PostgreSQL server binaries (initdb, pg_ctl): install the postgresql package")

// Bin finds the folder of initdb and pg_ctl: $MNEMO_PG_BIN, else the
// newest /usr/lib/postgresql/<version>/bin (Debian, Ubuntu), else the
// folder of initdb on PATH.
func Bin() (string, error) {
	if d := os.Getenv("MNEMO_PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if d := filepath.Dir(p); isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	return "", ErrNoPostgres
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// A Server is a running throw-away PostgreSQL.
type Server struct {
	Bin  string
	Dir  string // holds data/ and log
	Port int
	// CAFile is the CA of the server's certificate (TLSOnly).
	CAFile string
	cred   *syscall.Credential // the user it runs as, under root
}

// Config tunes a server.
type Config struct {
	// Fsync keeps PostgreSQL's fsync on (benchmarks); tests turn it off.
	Fsync bool
	// TLSOnly makes the server take TLS connections only, with a
	// certificate for 127.0.0.1 signed by a throw-away CA (Server.CAFile).
	TLSOnly bool
}

// Start makes a cluster in a new temporary folder and starts it, with
// fsync off.
func Start(ctx context.Context) (*Server, error) { return StartConfig(ctx, Config{}) }

// StartConfig is Start with a Config.
func StartConfig(ctx context.Context, c Config) (*Server, error) {
	bin, err := Bin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mnemo-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{Bin: bin, Dir: dir}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, PostgreSQL needs another user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
				os.RemoveAll(dir)
				return nil, fmt.Errorf("running as root, PostgreSQL runs as nobody, who cannot reach %s (%s is not searchable by others): set TMPDIR to a folder it can", dir, d)
			}
			if d == filepath.Dir(d) {
				break
			}
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := s.run(ctx, "initdb", "-D", s.data(), "-U", "mnemo", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.Port = port
	fsync := "off"
	if c.Fsync {
		fsync = "on"
	}
	conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = ''\nfsync = %s\nmax_connections = 40\nshared_buffers = 16MB\n", port, fsync)
	if c.TLSOnly {
		if err := s.makeTLS(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		conf += "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n"
	}
	f, err := os.OpenFile(filepath.Join(s.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(conf)
		f.Close()
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.StartAgain(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) data() string { return filepath.Join(s.Dir, "data") }

// URL is the connection string of the server's postgres database as the
// role mnemo.
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://mnemo@127.0.0.1:%d/postgres?sslmode=disable", s.Port)
}

// StartAgain starts the server (after Stop), waiting until it accepts
// connections.
func (s *Server) StartAgain(ctx context.Context) error {
	return s.run(ctx, "pg_ctl", "-D", s.data(), "-l", filepath.Join(s.Dir, "log"), "-w", "-t", "60", "start")
}

// Stop stops the server (fast: sessions are ended), waiting for it.
func (s *Server) Stop(ctx context.Context) error {
	return s.run(ctx, "pg_ctl", "-D", s.data(), "-m", "fast", "-w", "-t", "60", "stop")
}

// Close stops the server if it runs and removes its folder.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(s.data(), "postmaster.pid")); err == nil {
		if err := s.Stop(ctx); err != nil {
			s.run(ctx, "pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "stop")
		}
	}
	return os.RemoveAll(s.Dir)
}

// Log is the server's log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
	return string(b)
}

func (s *Server) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.Bin, name), args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %v: %w\n%s", name, args, err, out.String())
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Must starts a server for a test and stops it when the test ends,
// failed or not. Without PostgreSQL binaries the test is skipped, saying
// how to install them, unless MNEMO_REQUIRE_POSTGRES is set (CI): then it
// fails.
func Must(tb testing.TB) *Server { tb.Helper(); return MustConfig(tb, Config{}) }

// MustConfig is Must with a Config.
func MustConfig(tb testing.TB, c Config) *Server {
	tb.Helper()
	if _, err := Bin(); err != nil {
		if os.Getenv("MNEMO_REQUIRE_POSTGRES") != "" {
			tb.Fatalf("%v; MNEMO_REQUIRE_POSTGRES is set (.ci/run), so this test may not skip", err)
		}
		tb.Skipf("%v (apt-get install postgresql; .ci/run does)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := StartConfig(ctx, c)
	if err != nil {
		tb.Fatalf("start PostgreSQL: %v", err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("PostgreSQL log:\n%s", s.Log())
		}
		if err := s.Close(); err != nil {
			tb.Errorf("stop PostgreSQL: %v", err)
		}
	})
	return s
}

// makeTLS writes a throw-away CA (CAFile, in Dir) and a certificate for
// 127.0.0.1 signed by it into the data folder, and lets only TLS
// connections in (pg_hba.conf).
func (s *Server) makeTLS() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mnemo test CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	s.CAFile = filepath.Join(s.Dir, "ca.crt")
	files := []struct {
		path string
		data []byte
	}{
		{s.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})},
		{filepath.Join(s.data(), "server.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})},
		{filepath.Join(s.data(), "server.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})},
		{filepath.Join(s.data(), "pg_hba.conf"), []byte("hostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n")},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return err
		}
		if s.cred != nil {
			if err := os.Chown(f.path, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Dump is every row of every table of the server's database as text, a
// line each: what a test scans for what must never reach the server.
func (s *Server) Dump(ctx context.Context) (string, error) {
	conn, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		return "", err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, name := range tables {
		rows, err := conn.Query(ctx, `SELECT t::text FROM `+name+` t`)
		if err != nil {
			return "", err
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return "", err
		}
		for _, t := range texts {
			b.WriteString(t)
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}
