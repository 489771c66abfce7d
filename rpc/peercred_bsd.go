//go:build darwin || freebsd

package rpc

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerUID returns the uid of the process at the other end of nc, from
// LOCAL_PEERCRED.
func peerUID(nc *net.UnixConn) (int, error) {
	rc, err := nc.SyscallConn()
	if err != nil {
		return -1, err
	}
	var (
		cred *unix.Xucred
		cerr error
	)
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return -1, err
	}
	if cerr != nil {
		return -1, cerr
	}
	return int(cred.Uid), nil
}
