package rpc

import (
	"errors"

	"golang.org/x/sys/windows"
)

// acceptRetry reports an Accept error worth a pause and a retry: no socket
// or buffer left, or a connection aborted or reset before it was accepted.
func acceptRetry(err error) bool {
	return errors.Is(err, windows.WSAEMFILE) || errors.Is(err, windows.WSAENOBUFS) ||
		errors.Is(err, windows.WSAECONNABORTED) || errors.Is(err, windows.WSAECONNRESET)
}
