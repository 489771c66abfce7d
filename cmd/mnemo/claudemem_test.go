package main_test

import (
	"database/sql"
	"fmt"
	"os"

	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite"
)

// sqliteCmd is `sqlite DB FILE`: run the SQL statements of FILE on the
// SQLite database DB (created if missing), as claude-mem's own migrations
// would have made it (import_claude_mem.txtar).
func sqliteCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sqlite DB FILE.sql")
	}
	stmts, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	db, err := sql.Open("sqlite", "file:"+ts.MkAbs(args[0]))
	ts.Check(err)
	defer db.Close()
	if _, err := db.Exec(string(stmts)); err != nil {
		ts.Fatalf("sqlite %s: %v", args[1], err)
	}
	ts.Check(db.Close())
}

// mtimeCmd is `mtime FILE`: print FILE's modification time (nanoseconds)
// and size, to compare before and after.
func mtimeCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mtime FILE")
	}
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "%d %d\n", fi.ModTime().UnixNano(), fi.Size())
}
