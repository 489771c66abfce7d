//go:build !linux

package daemon

import "time"

func init() {
	// No change notifications here: the journal is read this often, well
	// within the sync window.
	journalPoll = 20 * time.Millisecond
}

// watchDir has no change notifications outside Linux: its channel never
// receives, and the journal is polled (journalPoll).
func watchDir(dir string) (<-chan struct{}, func(), error) {
	return nil, func() {}, nil
}
