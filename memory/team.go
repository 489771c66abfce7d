package memory

import (
	"strings"
	"time"
)

// Team memory (docs/team.md): the observations of the projects a person
// opts in are pushed to a PostgreSQL server through an outbox, and the
// records others pushed arrive in the local store, marked with their
// Origin.

// An Origin says where an arrived observation was made: its global id
// (<machine>/<local id> on the machine that made it), who made it and on
// which machine. Local observations have none.
type Origin struct {
	ID      string `json:"id"`
	Author  string `json:"author"`
	Machine string `json:"machine"`
	// Revised is when the version stored here was written (its last
	// correction, else its making): the stamp that settles two
	// corrections of one record (last writer wins, ties by machine).
	Revised time.Time `json:"revised"`
}

// GlobalID is the global id of the observation with the local id id made
// on machine.
func GlobalID(machine string, id uint64) string {
	return machine + "/" + uitoa(id)
}

func uitoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}

// Operations of the team log.
const (
	OpPut    = "put"    // a record, new or corrected
	OpForget = "forget" // a tombstone: the record is forgotten everywhere
)

// An OutboxEntry is one operation waiting to be pushed, in the order it
// was written. A put's record is read when it is pushed (Observation is
// nil when it was forgotten since: nothing to send).
type OutboxEntry struct {
	Seq         uint64       `json:"seq"`
	Op          string       `json:"op"`
	GID         string       `json:"gid"`
	Project     string       `json:"project"`
	Revised     time.Time    `json:"revised"`
	Observation *Observation `json:"-"`
}

// An Arrival is one operation another machine pushed, as a pull read it.
type Arrival struct {
	Op      string
	GID     string
	Project string
	Author  string
	Machine string
	Revised time.Time
	// Observation is the record of a put, as pushed (local fields empty).
	Observation *Observation
}

// Who a search keeps by author: everyone (""), this machine's records
// only, arrived records only, or one author's (any other value).
const (
	AuthorMine = "mine"
	AuthorTeam = "team"
)

// TeamParams asks the daemon to join a team server or leave it.
type TeamParams struct {
	// URL is the PostgreSQL connection string; empty takes the
	// configured one (the setting or MNEMO_TEAM_URL).
	URL     string `json:"url,omitempty"`
	Project string `json:"project,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	// All leaves every project (leave only).
	All bool `json:"all,omitzero"`
	// FromEnv says the URL came from the caller's MNEMO_TEAM_URL: it is
	// used, not written into the settings file.
	FromEnv bool `json:"fromEnv,omitzero"`
	// Author names this person on what is pushed; empty keeps the
	// setting's.
	Author string `json:"author,omitempty"`
}

// TeamStatus is the state of team memory on this machine.
type TeamStatus struct {
	// Server is the connection string with its password hidden; empty
	// when no server is configured.
	Server    string    `json:"server,omitempty"`
	ServerID  string    `json:"serverId,omitempty"`
	Projects  []string  `json:"projects"`
	Author    string    `json:"author,omitempty"`
	Machine   string    `json:"machine"`
	Connected bool      `json:"connected"`
	LastError string    `json:"lastError,omitempty"`
	Outbox    int       `json:"outbox"`
	Pushed    int64     `json:"pushed"`
	Arrived   int64     `json:"arrived"`
	Skipped   int64     `json:"skipped,omitzero"`
	LastPush  time.Time `json:"lastPush,omitzero"`
	LastPull  time.Time `json:"lastPull,omitzero"`
	// Queued is how many existing records a join queued for pushing.
	Queued int `json:"queued,omitzero"`
}

// RedactURL hides the password of a connection string, in URL form
// (postgres://user:pw@host/db) or keyword form (password=pw), and any
// password=… parameter of a URL's query.
func RedactURL(s string) string {
	out := s
	if i := strings.Index(out, "://"); i >= 0 {
		rest := out[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
			if c := strings.Index(rest[:at], ":"); c >= 0 {
				out = out[:i+3] + rest[:c+1] + "xxxxx" + rest[at:]
			}
		}
	}
	lower := strings.ToLower(out)
	var b strings.Builder
	for {
		j := strings.Index(lower, "password=")
		if j < 0 {
			b.WriteString(out)
			break
		}
		j += len("password=")
		b.WriteString(out[:j])
		b.WriteString("xxxxx")
		end := strings.IndexAny(out[j:], "& \t")
		if end < 0 {
			out, lower = "", ""
			continue
		}
		out, lower = out[j+end:], lower[j+end:]
	}
	return b.String()
}
