//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/atomicfile"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/vector"
)

// The data sets are made of topics: a topic is one observation's subject
// (its project, its kind, the module, symbol, file and error it is about),
// drawn from a generator seeded by the topic's number. A data set of n
// observations uses topics 0..topics-1 over and over: observation i is
// variant i/topics of topic i%topics, which keeps the subject and changes
// the details (numbers, the wording of the request, the session, the
// time). The 10k set is variant 0 of every topic.
//
// Vectors: the first k topics are embedded once (on all CPUs, cached), as
// the 10k set has them. With k = topics (the hashing embedder, which is
// fast) every observation of the 10k set carries its exact vector, and
// the 100k set's variants carry their topic's vector with a little noise.
// The sentence encoder takes a few hundred milliseconds per observation
// here, so with it only k = 1000 topics are embedded and the other topics
// borrow one of those vectors, with noise: real vectors of the right
// kind and number, whose meaning is not that of their text. The time of a
// search does not depend on what the vectors mean, only on how many there
// are and on the query's own embedding, which the daemon computes.

// genVersion names the generator; a change of the generator changes it,
// and with it the names of the cached files. v3 gave observations their
// evidence (the excerpt of the tool's output the local agent keeps).
const genVersion = "v3"

// topicVersion names the topics' embedded texts, which v3 left as v2 made
// them (evidence is not embedded): the cached topic vectors stay valid.
const topicVersion = "v2"

// topics is the number of distinct subjects.
const topics = 10_000

// dataEnd is the time of the newest observation; the sets span a year
// before it.
var dataEnd = time.Date(2025, 11, 1, 18, 0, 0, 0, time.UTC)

// project is one of the generated code bases.
type project struct {
	name    string
	weight  int
	lang    string
	modules []string
	file    func(r *rand.Rand, module, noun string) string
	test    func(module string) string
	errors  []string
}

var projects = []project{
	{
		name: "billing-api", weight: 35, lang: "go",
		modules: []string{"invoice", "payment", "money", "store", "webhook", "auth", "tax", "subscription", "ledger", "refund", "customer", "report", "gateway", "scheduler"},
		file: func(r *rand.Rand, module, noun string) string {
			if r.IntN(4) == 0 {
				return fmt.Sprintf("internal/%s/%s_test.go", module, snake(noun))
			}
			return fmt.Sprintf("internal/%s/%s.go", module, snake(noun))
		},
		test: func(module string) string { return "go test ./internal/" + module + "/..." },
		errors: []string{
			`pq: duplicate key value violates unique constraint "%[1]ss_pkey" (SQLSTATE 23505)`,
			"panic: runtime error: invalid memory address or nil pointer dereference in %[2]s",
			"context deadline exceeded while calling %[2]s after %[3]d ms",
			"--- FAIL: Test%[4]s (0.%02[6]ds): %[5]s_test.go:%[3]d: got %[3]d, want %[6]d",
			"json: cannot unmarshal string into Go struct field %[4]s.%[1]s of type int64",
			"http: 502 Bad Gateway from %[1]s-service after %[3]d ms",
			"sql: no rows in result set (%[2]s, %[1]s id %[6]d)",
		},
	},
	{
		name: "web-dashboard", weight: 25, lang: "ts",
		modules: []string{"components", "hooks", "pages", "api", "store", "charts", "forms", "auth", "settings", "i18n"},
		file: func(r *rand.Rand, module, noun string) string {
			switch module {
			case "components", "pages", "charts", "forms":
				if r.IntN(4) == 0 {
					return fmt.Sprintf("src/%s/%s.test.tsx", module, pascal(noun))
				}
				return fmt.Sprintf("src/%s/%s.tsx", module, pascal(noun))
			case "hooks":
				return fmt.Sprintf("src/hooks/use%s.ts", pascal(noun))
			}
			return fmt.Sprintf("src/%s/%s.ts", module, camel(noun))
		},
		test: func(module string) string { return "npx vitest run src/" + module },
		errors: []string{
			"TypeError: Cannot read properties of undefined (reading '%[1]s')",
			"TS2345: Argument of type 'string' is not assignable to parameter of type '%[4]s'.",
			"Error: Hydration failed because the server rendered HTML didn't match the client in %[4]s",
			"AssertionError: expected %[3]d to equal %[6]d in %[5]s.test.tsx",
			"Warning: Each child in a list should have a unique \"key\" prop. Check the render method of `%[4]s`.",
			"FetchError: request to /api/%[1]ss failed with status 401",
		},
	},
	{
		name: "infra-tools", weight: 15, lang: "ops",
		modules: []string{"network", "dns", "cluster", "backup", "monitoring", "secrets", "ci", "registry"},
		file: func(r *rand.Rand, module, noun string) string {
			switch r.IntN(4) {
			case 0:
				return fmt.Sprintf("terraform/modules/%s/main.tf", module)
			case 1:
				return fmt.Sprintf("scripts/%s_%s.sh", module, snake(noun))
			case 2:
				return fmt.Sprintf("ansible/roles/%s/tasks/%s.yml", module, snake(noun))
			}
			return fmt.Sprintf("tools/%s/%s.py", module, snake(noun))
		},
		test: func(module string) string { return "terraform plan -target=module." + module },
		errors: []string{
			"Error: Error acquiring the state lock: ConditionalCheckFailedException (lock %[6]d)",
			"Error: creating %[4]s: InvalidParameterValue: %[1]s is not valid in this region",
			"FAILED! => {\"changed\": false, \"msg\": \"Unable to start service %[1]s: exit status %[3]d\"}",
			"curl: (28) Operation timed out after %[3]d milliseconds with 0 bytes received",
			"Error response from daemon: manifest for registry.internal/%[1]s:%[6]d not found",
		},
	},
	{
		name: "mobile-app", weight: 15, lang: "kotlin",
		modules: []string{"checkout", "catalog", "profile", "sync", "push", "offline", "login"},
		file: func(r *rand.Rand, module, noun string) string {
			switch r.IntN(3) {
			case 0:
				return fmt.Sprintf("app/src/main/java/com/acme/%s/%sViewModel.kt", module, pascal(noun))
			case 1:
				return fmt.Sprintf("app/src/main/java/com/acme/%s/%sRepository.kt", module, pascal(noun))
			}
			return fmt.Sprintf("app/src/test/java/com/acme/%s/%sTest.kt", module, pascal(noun))
		},
		test: func(module string) string {
			return "./gradlew :app:testDebugUnitTest --tests '*" + pascal(module) + "*'"
		},
		errors: []string{
			"kotlin.UninitializedPropertyAccessException: lateinit property %[1]s has not been initialized",
			"java.lang.IllegalStateException: Fragment %[4]s not attached to a context.",
			"android.database.sqlite.SQLiteConstraintException: UNIQUE constraint failed: %[1]s.id (code %[3]d)",
			"kotlinx.coroutines.JobCancellationException: Job was cancelled in %[2]s",
			"expected:<%[6]d> but was:<%[3]d> at %[4]sTest.kt:%[3]d",
		},
	},
	{
		name: "data-pipeline", weight: 10, lang: "python",
		modules: []string{"ingest", "transform", "export", "dags", "quality", "warehouse"},
		file: func(r *rand.Rand, module, noun string) string {
			switch r.IntN(4) {
			case 0:
				return fmt.Sprintf("sql/%s/%s.sql", module, snake(noun))
			case 1:
				return fmt.Sprintf("tests/%s/test_%s.py", module, snake(noun))
			}
			return fmt.Sprintf("pipeline/%s/%s.py", module, snake(noun))
		},
		test: func(module string) string { return "pytest tests/" + module + " -x -q" },
		errors: []string{
			"KeyError: '%[1]s_id'",
			"psycopg2.errors.UniqueViolation: duplicate key value violates unique constraint \"%[1]s_pkey\"",
			"ModuleNotFoundError: No module named '%[1]s_client'",
			"pandas.errors.MergeError: No common columns to perform merge on (%[2]s)",
			"AssertionError: assert %[3]d == %[6]d (rows in %[1]s)",
			"botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the PutObject operation on %[1]s-exports",
		},
	},
}

var (
	nouns = []string{"invoice", "total", "discount", "customer", "payment", "refund", "session", "token", "webhook", "retry",
		"schedule", "report", "export", "upload", "address", "currency", "rate", "ledger", "entry", "balance",
		"plan", "subscription", "trial", "coupon", "receipt", "statement", "cart", "order", "shipment", "inventory",
		"user", "role", "permission", "audit", "event", "queue", "worker", "cache", "config", "migration",
		"profile", "avatar", "notification", "message", "thread", "search", "filter", "page", "cursor", "batch",
		"chart", "table", "form", "field", "locale", "timezone", "holiday", "quota", "limit", "backoff"}
	verbs = []string{"compute", "apply", "validate", "parse", "format", "load", "save", "fetch", "sync", "render",
		"handle", "build", "resolve", "merge", "split", "round", "retry", "schedule", "cancel", "refresh",
		"encode", "decode", "lookup", "upsert", "delete", "normalize", "group", "sort", "paginate", "migrate"}
	qualifiers = []string{"", "", "", "ForPeriod", "WithRetry", "Async", "InBatch", "ByID", "Locked", "V2", "FromCache", "ForLocale", "Safely", "Once", "Later"}
	problems   = []string{"drifted by a cent", "was applied twice", "timed out under load", "returned stale data", "raced with the scheduler",
		"ignored the customer's timezone", "leaked a goroutine", "crashed on an empty list", "lost the last page", "double-counted refunds",
		"sent the webhook before commit", "used the wrong currency", "skipped the first row", "deadlocked on retry", "kept an expired token"}
	features = []string{"an idempotency key", "cursor pagination", "a CSV export", "per-tenant rate limits", "retry with backoff",
		"an audit trail", "dark mode", "offline caching", "a feature flag", "bulk actions", "a health check", "structured logs"}
	decisions = []string{"banker's rounding for all money", "UTC everywhere in storage", "one transaction per request", "optimistic locking",
		"server-side pagination", "a queue instead of cron", "feature flags over long-lived branches", "integer cents instead of floats",
		"a read replica for reports", "contract tests for the gateway"}
	concepts = []string{"problem-solution", "gotcha", "how-it-works", "pattern", "trade-off", "why-it-exists", "what-changed"}
	askVerbs = []string{"Fix", "Find out why", "Look into why", "Please check why", "Investigate why", "Can you see why"}
	wantVerb = []string{"Add", "Implement", "Support", "Build", "Wire up"}
)

// topic is the subject of one observation; its details vary by variant.
type topic struct {
	project       *project
	kind          int // see the kind* constants
	module        string
	noun, noun2   string
	symbol        string
	file, file2   string
	errTemplate   string
	problem       string
	feature       string
	decision      string
	concepts      []string
	extraFiles    []string
	grepPattern   string
	obsType       string
	failedCommand bool
}

// The kinds of observations, as a memory agent makes them from tool events
// (read, edit, test run, search) or writes them out in full (rich).
const (
	kindRead = iota
	kindEdit
	kindTestFail
	kindTestPass
	kindGrep
	kindRich
	numKinds
)

// kindWeights are the shares of each kind, in percent: most observations
// are the compact ones the local agent makes, a third are rich.
var kindWeights = [numKinds]int{20, 20, 8, 8, 10, 34}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func weighted(r *rand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := r.IntN(total)
	for i, w := range weights {
		if n < w {
			return i
		}
		n -= w
	}
	return len(weights) - 1
}

func makeTopic(j int) *topic {
	r := rand.New(rand.NewPCG(uint64(j), 0x746f706963)) // "topic"
	pw := make([]int, len(projects))
	for i, p := range projects {
		pw[i] = p.weight
	}
	t := &topic{project: &projects[weighted(r, pw)]}
	t.kind = weighted(r, kindWeights[:])
	t.module = pick(r, t.project.modules)
	t.noun, t.noun2 = pick(r, nouns), pick(r, nouns)
	t.symbol = pick(r, verbs) + pascal(t.noun) + pick(r, qualifiers)
	t.file = t.project.file(r, t.module, t.noun)
	t.file2 = t.project.file(r, pick(r, t.project.modules), t.noun2)
	t.errTemplate = pick(r, t.project.errors)
	t.problem = pick(r, problems)
	t.feature = pick(r, features)
	t.decision = pick(r, decisions)
	t.grepPattern = pick(r, []string{"func " + t.symbol, t.symbol + "(", "TODO(" + t.noun + ")", strings.ToUpper(t.noun) + "_", t.noun + "Id"})
	for range 1 + r.IntN(3) {
		t.concepts = append(t.concepts, pick(r, concepts))
	}
	for range 1 + r.IntN(6) {
		t.extraFiles = append(t.extraFiles, t.project.file(r, pick(r, t.project.modules), pick(r, nouns)))
	}
	t.obsType = pick(r, []string{"bugfix", "bugfix", "feature", "refactor", "discovery", "decision", "change", "security_note"})
	return t
}

// genObservation is observation variant k of topic t.
func genObservation(t *topic, k int, j int, request string) memory.Observation {
	r := rand.New(rand.NewPCG(uint64(j)<<20|uint64(k), 0x76617269)) // "vari"
	n1, n2 := 3+r.IntN(400), 1+r.IntN(90)
	errMsg := fmt.Sprintf(t.errTemplate, t.noun, t.symbol, n1, pascal(t.symbol), snake(t.noun), n2)
	o := memory.Observation{Project: t.project.name, Request: request, Source: memory.SourceAgent}
	switch t.kind {
	case kindRead:
		o.Tool, o.Type = "Read", memory.TypeDiscovery
		o.Title = "Read " + t.file
		o.FilesRead = []string{t.file}
		o.Facts = []string{fmt.Sprintf("%s has %d lines", t.file, 20+r.IntN(900))}
		o.Narrative = fmt.Sprintf("Read %s while working on: %s", t.file, clip(request, 160))
	case kindEdit:
		o.Tool, o.Type = "Edit", pick(r, []string{memory.TypeChange, memory.TypeBugfix, memory.TypeRefactor})
		o.Title = fmt.Sprintf("Edited %s in %s", t.symbol, t.file)
		if o.Type == memory.TypeBugfix {
			o.Title = fmt.Sprintf("Fixed %s in %s", t.symbol, t.file)
			o.Narrative = fmt.Sprintf("Changed %s after %s failed", t.file, t.project.test(t.module))
		}
		o.FilesModified = []string{t.file}
		o.Facts = []string{
			fmt.Sprintf("replaced `%s(%s, %d)` with `%s(%s, %d)`", t.symbol, t.noun, n2, t.symbol, t.noun2, n2+1),
			fmt.Sprintf("%d lines changed", 1+r.IntN(40)),
		}
		o.Concepts = []string{t.symbol, pascal(t.noun2)}
	case kindTestFail:
		cmd := t.project.test(t.module)
		o.Tool, o.Type = "Bash", memory.TypeDiscovery
		o.Title, o.Subtitle = "Tests failed: "+cmd, cmd
		o.Facts = []string{"$ " + cmd, fmt.Sprintf("exit code %d", 1+r.IntN(2)), "error: " + errMsg}
	case kindTestPass:
		cmd := t.project.test(t.module)
		o.Tool, o.Type = "Bash", pick(r, []string{memory.TypeChange, memory.TypeBugfix})
		o.Title, o.Subtitle = "Tests passed: "+cmd, cmd
		o.Facts = []string{"$ " + cmd, fmt.Sprintf("%d tests passed in %d.%02ds", 5+r.IntN(300), r.IntN(30), r.IntN(100))}
		o.Narrative = "Run the " + t.module + " tests again"
	case kindGrep:
		o.Tool, o.Type = "Grep", memory.TypeDiscovery
		dir := filepath.Dir(t.file)
		o.Title = fmt.Sprintf("Searched for %q in %s", t.grepPattern, dir)
		o.FilesRead = append([]string{t.file}, t.extraFiles...)
		o.Facts = []string{fmt.Sprintf("%d matching files", len(o.FilesRead)+r.IntN(5))}
	case kindRich:
		o.Tool, o.Type = pick(r, []string{"Edit", "Bash", "Write", "MultiEdit"}), t.obsType
		o.Concepts = t.concepts
		o.FilesRead = []string{t.file2}
		o.FilesModified = append([]string{t.file}, t.extraFiles[:min(len(t.extraFiles), 2)]...)
		switch t.obsType {
		case "feature":
			o.Title = fmt.Sprintf("Added %s to %s", t.feature, t.module)
			o.Subtitle = fmt.Sprintf("%s now supports %s, configured per %s.", pascal(t.module), t.feature, t.noun2)
			o.Narrative = fmt.Sprintf("Users asked for %s in the %s flow. It is implemented in %s and stored with each %s; "+
				"requests without it behave as before, and the %d existing callers were updated.", t.feature, t.module, t.symbol, t.noun, n2)
		case "decision":
			o.Title = fmt.Sprintf("Decided on %s", t.decision)
			o.Subtitle = fmt.Sprintf("The %s module uses %s from now on.", t.module, t.decision)
			o.Narrative = fmt.Sprintf("We compared the options after %s %s. The team chose %s because it keeps %s consistent "+
				"across services; the trade-off is a migration of %d rows.", t.symbol, t.problem, t.decision, t.noun, n1*1000)
		case "discovery":
			o.Title = fmt.Sprintf("How %s works in %s", t.symbol, t.module)
			o.Subtitle = fmt.Sprintf("%s reads %s from %s before it touches any %s.", t.symbol, t.noun, t.file2, t.noun2)
			o.Narrative = fmt.Sprintf("Traced %s from the handler down to storage. It caches %ss for %d seconds and retries %d times, "+
				"which explains why %s %s.", t.symbol, t.noun, n2, 1+r.IntN(5), t.noun2, t.problem)
		case "security_note":
			o.Title = fmt.Sprintf("%s logged %s tokens", t.symbol, t.noun)
			o.Subtitle = fmt.Sprintf("Debug logging in %s printed bearer tokens of %s requests.", t.file, t.module)
			o.Narrative = fmt.Sprintf("A review found that %s wrote whole request headers at debug level. Tokens are now masked, "+
				"and the %d log files that held them were rotated out.", t.symbol, n2)
		default: // bugfix, refactor, change
			o.Title = fmt.Sprintf("Fixed %s: %s %s", t.symbol, t.noun, t.problem)
			if t.obsType == "refactor" {
				o.Title = fmt.Sprintf("Split %s out of %s", t.symbol, t.file2)
			}
			o.Subtitle = fmt.Sprintf("%s in %s %s; it now %ss the %s once per request.", t.symbol, t.module, t.problem, pick(r, verbs), t.noun)
			o.Narrative = fmt.Sprintf("Reported as: %s. The cause was %s calling %s before the %s was committed, so %s %s. "+
				"The fix moves the call after the commit and adds a regression test with %d cases.",
				clip(request, 120), t.symbol, t.noun2, t.noun, t.noun, t.problem, n2)
		}
		o.Facts = []string{
			fmt.Sprintf("%s in %s is called from %d places.", t.symbol, t.file, 1+r.IntN(12)),
			"Error seen: " + errMsg,
			fmt.Sprintf("%s keeps its %s in %s.", pascal(t.module), t.noun2, t.file2),
		}
		if r.IntN(2) == 0 {
			o.Facts = append(o.Facts, fmt.Sprintf("Measured %d ms before and %d ms after on %d %ss.", n1, n1/3+1, n2*100, t.noun))
		}
	}
	o.Evidence = genEvidence(t, r, errMsg)
	return o
}

// genEvidence is an observation's evidence as the local agent keeps it: a
// few lines of the tool's output or of the code, then the identifiers it
// saw, about 740 bytes on average as on the replayed eval data (from 300
// to 1,200).
func genEvidence(t *topic, r *rand.Rand, errMsg string) string {
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	fn := t.symbol
	switch t.kind {
	case kindTestFail, kindTestPass:
		line("$ %s", t.project.test(t.module))
		for range 1 + r.IntN(4) {
			line("%s", fmt.Sprintf(t.errTemplate, pick(r, nouns), pick(r, verbs)+pascal(pick(r, nouns)), r.IntN(900), pascal(pick(r, nouns)), snake(t.noun2), r.IntN(99)))
			line("    at %s (%s:%d:%d)", pick(r, verbs)+pascal(pick(r, nouns)), pick(r, append([]string{t.file, t.file2}, t.extraFiles...)), 1+r.IntN(400), 1+r.IntN(60))
		}
		line("%s", errMsg)
	case kindGrep:
		for range 2 + r.IntN(6) {
			line("%s:%d: %s", pick(r, append([]string{t.file, t.file2}, t.extraFiles...)), 1+r.IntN(500), strings.ReplaceAll(t.grepPattern, t.symbol, pick(r, verbs)+pascal(pick(r, nouns))))
		}
	default:
		for range 2 + r.IntN(5) {
			a, v := pick(r, nouns), pick(r, verbs)
			switch r.IntN(4) {
			case 0:
				line("func %s(%s %s, %s int) (%s, error) {", fn, a, pascal(t.noun2), pick(r, nouns), pascal(a))
			case 1:
				line("\tif %s.%s == nil || %s > %d {", a, pascal(t.noun), pick(r, nouns), r.IntN(1000))
			case 2:
				line("\treturn %s(ctx, %s, %q)", v+pascal(a), t.noun2, pick(r, problems))
			default:
				line("\t%s := %s.%s(%d)", camel(a)+pascal(pick(r, nouns)), t.noun, v+pick(r, qualifiers), r.IntN(1000))
			}
		}
	}
	// The words the agent saw, as it lists them: identifiers, paths with
	// line numbers, words; few are unique to one observation (on the
	// replayed eval data, 2 or 3 of ~80 per observation are), such as a
	// hash.
	want := 300 + r.IntN(900)
	for b.Len() < want {
		switch x := r.IntN(20); {
		case x < 6:
			fmt.Fprintf(&b, "%s:%d ", pick(r, append([]string{t.file, t.file2}, t.extraFiles...)), 1+r.IntN(800))
		case x < 12:
			fmt.Fprintf(&b, "%s%s ", pick(r, verbs), pascal(pick(r, nouns)))
		case x < 18:
			fmt.Fprintf(&b, "%s ", pick(r, slices.Concat(nouns, verbs)))
		case x < 19:
			fmt.Fprintf(&b, "%s %s %s ", t.symbol, t.noun2, t.module)
		default:
			fmt.Fprintf(&b, "%x ", r.Uint32())
		}
	}
	return strings.TrimSpace(b.String())
}

// genRequest is the prompt of a turn about topic t.
func genRequest(t *topic, r *rand.Rand) string {
	switch t.kind {
	case kindRich:
		if t.obsType == "feature" {
			return fmt.Sprintf("%s %s to the %s %s. Keep the old behaviour for existing %ss and add tests.", pick(r, wantVerb), t.feature, t.module, t.noun, t.noun2)
		}
		if t.obsType == "decision" {
			return fmt.Sprintf("We need to decide how the %s module handles %ss. I'd go with %s; check what breaks.", t.module, t.noun, t.decision)
		}
	}
	return fmt.Sprintf("%s the %s %s in %s. It started after the last deploy; the logs mention %s.",
		pick(r, askVerbs), t.noun, t.problem, t.module, t.symbol)
}

// dataSet is a generated export file and what its queries look for.
type dataSet struct {
	n        int
	path     string
	embedder string
	exact    bool // every vector is its own text's (else some are borrowed)
	topics   int  // topics embedded
	queries  []query
}

// query is one search of the benchmark.
type query struct {
	Text    string `json:"query"`
	Project string `json:"project,omitempty"`
}

// genQueries makes searches like people and agents type: identifiers, file
// paths, error messages and plain-language questions, half of them within
// a project.
func genQueries(n int) []query {
	r := rand.New(rand.NewPCG(42, 0x71756572)) // "quer"
	qs := make([]query, n)
	for i := range qs {
		t := makeTopic(r.IntN(topics))
		var q query
		switch i % 5 {
		case 0:
			q.Text = t.symbol
		case 1:
			q.Text = t.file
		case 2:
			msg := fmt.Sprintf(t.errTemplate, t.noun, t.symbol, 100, pascal(t.symbol), snake(t.noun), 7)
			words := strings.Fields(msg)
			q.Text = strings.Join(words[:min(len(words), 6)], " ")
		case 3:
			q.Text = fmt.Sprintf("why %s %s", t.noun, t.problem)
		case 4:
			q.Text = fmt.Sprintf("how does %s handle %s in %s", t.module, t.noun2, t.project.name)
		}
		if i%2 == 0 {
			q.Project = t.project.name
		}
		qs[i] = q
	}
	return qs
}

// topicVectors returns the embedding by emb of the first k topics as the
// 10k set has them (variant 0, with its turn's request), cached in dir:
// computed once, on all CPUs.
func topicVectors(ctx context.Context, log *slog.Logger, dir string, emb vector.Embedder, k int) ([][]float32, error) {
	path := filepath.Join(dir, fmt.Sprintf("topics-%s-%s-%d.f32", topicVersion, safeName(emb.ID()), k))
	dim := emb.Dim()
	if b, err := os.ReadFile(path); err == nil && len(b) == k*dim*4 {
		vs := make([][]float32, k)
		for i := range vs {
			vs[i] = make([]float32, dim)
			for d := range dim {
				vs[i][d] = math.Float32frombits(binary.LittleEndian.Uint32(b[(i*dim+d)*4:]))
			}
		}
		return vs, nil
	}
	log.Info("embedding topics once (cached for later runs)", "topics", k, "embedder", emb.ID(), "cpus", runtime.GOMAXPROCS(0))
	texts := make([]string, k)
	for _, pr := range planDataSet(topics) {
		if pr.rec.Observation != nil && pr.topic < k {
			texts[pr.topic] = embedTextOf(*pr.rec.Observation)
		}
	}
	start := time.Now()
	vs, err := embedAll(ctx, emb, texts, runtime.GOMAXPROCS(0), func(done int) {
		if done%max(k/10, 1) == 0 {
			log.Info("embedding topics", "done", done, "of", k, "elapsed", time.Since(start).Round(time.Second))
		}
	})
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, k*dim*4)
	for i, v := range vs {
		if len(v) != dim {
			v = make([]float32, dim) // nothing to embed: a zero vector, which the daemon re-embeds
			vs[i] = v
		}
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
	}
	if err := writeFileAtomic(path, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return nil, err
	}
	return vs, nil
}

// embedAll embeds texts with workers goroutines.
func embedAll(ctx context.Context, emb vector.Embedder, texts []string, workers int, progress func(done int)) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var (
		next, done atomic.Int64
		wg         sync.WaitGroup
		errOnce    sync.Once
		firstErr   error
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(texts) || ctx.Err() != nil {
					return
				}
				v, err := emb.Embed(ctx, texts[i])
				if err != nil && !errors.Is(err, vector.ErrNoText) {
					errOnce.Do(func() { firstErr = fmt.Errorf("embed text %d: %w", i, err) })
					return
				}
				out[i] = v
				if d := done.Add(1); progress != nil {
					progress(int(d))
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, ctx.Err()
}

// embedTextOf is the text the daemon embeds for an observation.
func embedTextOf(o memory.Observation) string {
	d := store.DocOf(&o)
	return d.EmbedText()
}

// buildDataSet writes (or finds in dir) the export file of n observations
// with vectors by emb of k topics.
func buildDataSet(ctx context.Context, log *slog.Logger, dir string, n int, emb vector.Embedder, k int) (*dataSet, error) {
	k = max(1, min(k, topics))
	ds := &dataSet{n: n, embedder: emb.ID(), exact: k == topics, topics: k, queries: genQueries(200)}
	ds.path = filepath.Join(dir, fmt.Sprintf("obs-%s-%s-k%d-%d.jsonl", genVersion, safeName(emb.ID()), k, n))
	if fi, err := os.Stat(ds.path); err == nil && fi.Size() > 0 {
		return ds, nil
	}
	vecs, err := topicVectors(ctx, log, dir, emb, k)
	if err != nil {
		return nil, err
	}
	log.Info("generating a data set (cached for later runs)", "observations", n, "file", ds.path)
	err = writeFileAtomic(ds.path, func(w io.Writer) error { return writeDataSet(w, n, vecs, emb.ID()) })
	return ds, err
}

// plannedRecord is one line of a data set; an observation's carries its
// topic and variant.
type plannedRecord struct {
	rec            memory.Record
	topic, variant int
}

// planDataSet lays n observations out as sessions of one project each,
// with their prompts and summaries, in the order of an export.
func planDataSet(n int) []plannedRecord {
	// Each project's observations, in order, become its sessions.
	index := map[*project]int{}
	for pi := range projects {
		index[&projects[pi]] = pi
	}
	byProject := make([][]int, len(projects))
	for i := range n {
		pi := index[makeTopic(i%topics).project]
		byProject[pi] = append(byProject[pi], i)
	}
	type span struct {
		project int
		obs     []int
	}
	r := rand.New(rand.NewPCG(uint64(n), 0x73657373)) // "sess"
	var sessions []span
	for pi, list := range byProject {
		for len(list) > 0 {
			size := min(len(list), 8+r.IntN(50))
			sessions = append(sessions, span{pi, list[:size]})
			list = list[size:]
		}
	}
	r.Shuffle(len(sessions), func(a, b int) { sessions[a], sessions[b] = sessions[b], sessions[a] })
	start := dataEnd.Add(-365 * 24 * time.Hour)
	step := 365 * 24 * time.Hour / time.Duration(len(sessions)+1)
	out := make([]plannedRecord, 0, n+n/3)
	for si, s := range sessions {
		p := &projects[s.project]
		t0 := start.Add(time.Duration(si) * step)
		csid := fmt.Sprintf("bench-%s-%06d", p.name, si)
		msid := fmt.Sprintf("00000000-0000-4000-8000-%012d", si)
		turns := 1 + len(s.obs)/8
		sess := &memory.Session{
			ID: uint64(si + 1), ContentSessionID: csid, Project: p.name, Cwd: "/home/dev/src/" + p.name,
			Platform: "claude-code", Status: memory.StatusCompleted, PromptCounter: turns,
			MemorySessionID: msid, MemorySessions: []string{msid},
			CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), CompletedAt: t0.Add(time.Hour),
		}
		out = append(out, plannedRecord{rec: memory.Record{Kind: "session", Session: sess}, topic: -1})
		per := (len(s.obs) + turns - 1) / turns
		for turn := range turns {
			part := s.obs[min(turn*per, len(s.obs)):min((turn+1)*per, len(s.obs))]
			if len(part) == 0 {
				continue
			}
			first := part[0]
			t := makeTopic(first % topics)
			rr := rand.New(rand.NewPCG(uint64(first%topics)<<20|uint64(first/topics), 0x72657175)) // "requ"
			request := genRequest(t, rr)
			tt := t0.Add(time.Duration(turn) * 10 * time.Minute)
			pr := &memory.Prompt{SessionID: sess.ID, Number: turn + 1, Text: request, Time: tt}
			out = append(out, plannedRecord{rec: memory.Record{Kind: "prompt", Prompt: pr}, topic: -1})
			var read, modified, titles []string
			for k, i := range part {
				j, variant := i%topics, i/topics
				o := genObservation(makeTopic(j), variant, j, request)
				o.SessionID, o.ContentSessionID, o.MemorySessionID, o.PromptNumber = sess.ID, csid, msid, turn+1
				o.Time = tt.Add(time.Duration(k) * 20 * time.Second)
				out = append(out, plannedRecord{rec: memory.Record{Kind: "observation", Observation: &o}, topic: j, variant: variant})
				read = append(read, o.FilesRead...)
				modified = append(modified, o.FilesModified...)
				titles = append(titles, o.Title)
			}
			sum := &memory.Summary{
				SessionID: sess.ID, ContentSessionID: csid, MemorySessionID: msid, PromptNumber: turn + 1, Project: p.name,
				Request: request, Investigated: clip(strings.Join(titles, "; "), 400), Completed: titles[len(titles)-1],
				Notes:     "Files touched: " + clip(strings.Join(uniq(modified), ", "), 300),
				FilesRead: uniq(read), FilesModified: uniq(modified), Time: tt.Add(9 * time.Minute),
			}
			out = append(out, plannedRecord{rec: memory.Record{Kind: "summary", Summary: sum}, topic: -1})
		}
	}
	return out
}

// writeDataSet writes the records of planDataSet(n), each observation with
// its topic's vector: exact for variant 0 of an embedded topic, else
// borrowed or a variant's, with noise.
func writeDataSet(w io.Writer, n int, vecs [][]float32, embedderID string) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	noise := rand.New(rand.NewPCG(uint64(n), 0x6e6f6973)) // "nois"
	k := len(vecs)
	for _, pr := range planDataSet(n) {
		rec := pr.rec
		if rec.Observation != nil {
			exact := pr.topic < k && pr.variant == 0
			rec.Embedder, rec.Vector = embedderID, jitter(vecs[pr.topic%k], exact, noise)
		}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// jitter returns v when exact, else v plus a little Gaussian noise,
// normalized: near neighbours, not copies.
func jitter(v []float32, exact bool, r *rand.Rand) []float32 {
	if exact {
		return v
	}
	out := make([]float32, len(v))
	var ss float64
	for i, x := range v {
		y := float64(x) + r.NormFloat64()*0.01
		out[i] = float32(y)
		ss += y * y
	}
	inv := 1 / math.Sqrt(ss)
	for i := range out {
		out[i] = float32(float64(out[i]) * inv)
	}
	return out
}

func writeFileAtomic(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := atomicfile.Write(path, 0o644, func(f *os.File) error { return write(f) }); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func pascal(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func camel(s string) string { return s }

// snake turns fooBarBaz into foo_bar_baz.
func snake(s string) string {
	var b strings.Builder
	for i, c := range s {
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}
