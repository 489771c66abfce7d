//go:build unix && !linux && !darwin && !freebsd

package rpc

import (
	"errors"
	"net"
)

// peerUID cannot learn the peer's uid on this system, so Accept refuses every
// connection rather than trust one it cannot check.
func peerUID(*net.UnixConn) (int, error) {
	return -1, errors.New("peer credentials are not supported on this system")
}
