//go:build unix

package rpc

import (
	"errors"
	"syscall"
)

// acceptRetry reports an Accept error worth a pause and a retry: no file
// descriptor left, or a connection aborted before it was accepted.
func acceptRetry(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ECONNABORTED)
}
