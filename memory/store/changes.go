package store

import (
	"context"
	"sync"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory"
)

// watchBuffer is how many changes a watcher may fall behind before it is
// told it lost some (memory.KindLost).
const watchBuffer = 256

// watchers fans the memory's changes out to those who watch them.
type watchers struct {
	mu   sync.Mutex
	subs map[*watcher]struct{}
}

type watcher struct {
	ch   chan memory.Change
	lost bool // a change was dropped; KindLost is owed
}

// Watch returns the memory's changes from now on, in the order they were
// made, until ctx ends or the memory closes (then the channel is closed).
// Watching never slows the memory down: a watcher that falls behind by
// more than a few hundred changes loses the ones that do not fit, and is
// then sent one memory.KindLost.
func (m *Memory) Watch(ctx context.Context) <-chan memory.Change {
	w := &watcher{ch: make(chan memory.Change, watchBuffer)}
	m.watch.mu.Lock()
	if m.watch.subs == nil {
		m.watch.subs = map[*watcher]struct{}{}
	}
	m.watch.subs[w] = struct{}{}
	m.watch.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
		case <-m.done:
		}
		m.watch.mu.Lock()
		delete(m.watch.subs, w)
		close(w.ch)
		m.watch.mu.Unlock()
	}()
	return w.ch
}

// publish tells every watcher of changes, without waiting for any.
func (m *Memory) publish(changes ...memory.Change) {
	m.watch.mu.Lock()
	defer m.watch.mu.Unlock()
	for w := range m.watch.subs {
		for _, c := range changes {
			if w.lost {
				select {
				case w.ch <- memory.Change{Kind: memory.KindLost, Time: c.Time}:
					w.lost = false
				default:
					continue
				}
			}
			select {
			case w.ch <- c:
			default:
				w.lost = true
			}
		}
	}
}

// changeTitle cuts a text to memory.ChangeTitleBytes, on a rune boundary.
func changeTitle(s string) string {
	if len(s) <= memory.ChangeTitleBytes {
		return s
	}
	s = s[:memory.ChangeTitleBytes]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

func observationChange(o *memory.Observation) memory.Change {
	return memory.Change{Kind: memory.KindObservation, Time: o.Time, ID: o.ID, ContentSessionID: o.ContentSessionID,
		Project: o.Project, Host: o.Host, PromptNumber: o.PromptNumber, Type: o.Type, Title: changeTitle(o.Title)}
}
