#!/usr/bin/env bash
# record.sh records real runs of test runners and build tools, passing and
# failing, each plain and with its exit code masked (piped through tail,
# head, tee or grep, `|| true`, `; echo …`, `&`), as the labelled set that
# TestOutcomesCannotLie (memory/local/outcomes_test.go) replays. See README.md.
#
# Usage: memory/local/testdata/outcomes/record.sh [OUT]   (OUT defaults to
# this script's folder). It writes OUT/dev/*.txtar and OUT/heldout/*.txtar,
# one case each, and OUT/versions.txt.
#
# Needs: go, cargo (no crates), node and npm (the npm registry once, for
# jest, vitest and typescript), Debian's python3 with python3-pytest, make,
# ruby-rspec, and Maven with Debian's plugin repository (libsurefire-java,
# libmaven-compiler-plugin-java, libmaven-resources-plugin-java, junit4),
# used offline through a mirror of /usr/share/maven-repo.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$here}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

W=$(mktemp -d)
trap 'chmod -R u+w "$W" 2>/dev/null; rm -rf "$W"' EXIT
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
# npm's download cache: the caller's, when it names one, else a fresh one.
export npm_config_cache=${npm_config_cache:-$W/npm-cache}
export HOME=$W/home MNEMO_HOME=$W/mnemo
mkdir -p "$HOME"
# Debian's python3 (the one with python3-pytest) before any other.
export PATH=$(dirname "$(command -v go)"):$(dirname "$(command -v cargo)"):/usr/bin:/bin
export GOPATH=$W/gopath GOCACHE=$W/gocache GOPROXY=off GOTOOLCHAIN=local GOFLAGS=
export CARGO_HOME=$W/cargo CARGO_NET_OFFLINE=true
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
export LANG=C.UTF-8 TERM=dumb
unset CI GITHUB_ACTIONS FORCE_COLOR NO_COLOR || true

rm -rf "$OUT/dev" "$OUT/heldout"
mkdir -p "$OUT/dev" "$OUT/heldout"

# ---- the projects ------------------------------------------------------

# write FILE: the rest of stdin becomes FILE (folders made).
write() { mkdir -p "$(dirname "$1")"; cat >"$1"; }

node_setup() {
	mkdir -p "$W/node"
	(cd "$W/node" && npm init -y >/dev/null &&
		npm install --no-save --silent jest@30.5.2 vitest@3.2.7 typescript@5.9.3 >/dev/null 2>&1)
}

# js PROJECT: a node project using the shared install.
js() { mkdir -p "$1" && ln -s "$W/node/node_modules" "$1/node_modules"; }

mvn_project() { # mvn_project DIR
	write "$1/.mvn/maven.config" <<<"--settings ./.mvn/settings.xml"
	write "$1/.mvn/settings.xml" <<EOF
<settings>
  <localRepository>$W/m2</localRepository>
  <mirrors><mirror><id>debian</id><mirrorOf>*</mirrorOf><url>file:///usr/share/maven-repo</url></mirror></mirrors>
</settings>
EOF
	write "$1/pom.xml" <<'EOF'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId><artifactId>app</artifactId><version>1.0</version>
  <properties>
    <maven.compiler.source>17</maven.compiler.source><maven.compiler.target>17</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies><dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency></dependencies>
  <build><plugins>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.0</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.10.1</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>2.22.3</version></plugin>
  </plugins></build>
</project>
EOF
}

dev_projects() {
	local d=$W/dev
	# Go: a payments package whose retry test fails, and the fixed one.
	for v in fail pass; do
		p=$d/go-shop-$v
		write "$p/go.mod" <<<$'module shop\n\ngo 1.22'
		want=4
		[ $v = pass ] && want=8
		write "$p/payments/retry.go" <<EOF
// Package payments delivers webhooks.
package payments

// Backoff is the delay in seconds before the given retry of a webhook.
func Backoff(attempt int) int {
	if attempt <= 0 {
		return 1
	}
	return Backoff(attempt-1) * 2
}

// MaxDelay caps the delay of a retry.
func MaxDelay() int { return $want }
EOF
		write "$p/payments/retry_test.go" <<'EOF'
package payments

import "testing"

func TestWebhookRetries(t *testing.T) {
	if got := Backoff(3); got != MaxDelay() {
		t.Fatalf("Backoff(3) = %d, want %d", got, MaxDelay())
	}
}

func TestFirstRetry(t *testing.T) {
	if got := Backoff(0); got != 1 {
		t.Errorf("Backoff(0) = %d, want 1", got)
	}
}
EOF
		write "$p/cart/cart.go" <<'EOF'
// Package cart sums carts.
package cart

// Total sums the prices.
func Total(prices []int) (sum int) {
	for _, p := range prices {
		sum += p
	}
	return sum
}
EOF
		write "$p/cart/cart_test.go" <<'EOF'
package cart

import "testing"

func TestTotal(t *testing.T) {
	if Total([]int{1, 2}) != 3 {
		t.Fatal("bad total")
	}
}
EOF
	done
	# Go: a compile error, and a vet error.
	p=$d/go-build-fail
	write "$p/go.mod" <<<$'module greet\n\ngo 1.22'
	write "$p/main.go" <<'EOF'
package main

import "fmt"

func main() {
	fmt.Println(greeting(name))
}

func greeting(n string) string { return "hello " + n }
EOF
	p=$d/go-vet-fail
	write "$p/go.mod" <<<$'module greet\n\ngo 1.22'
	write "$p/main.go" <<'EOF'
package main

import "fmt"

func main() {
	count := "three"
	fmt.Printf("%d items\n", count)
}
EOF
	p=$d/go-build-pass
	write "$p/go.mod" <<<$'module greet\n\ngo 1.22'
	write "$p/main.go" <<'EOF'
package main

import "fmt"

func main() {
	fmt.Printf("%d items\n", 3)
}
EOF
	# Rust: a failing unit test and its fix; a compile error.
	for v in fail pass; do
		p=$d/rust-calc-$v
		write "$p/Cargo.toml" <<<$'[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"'
		op='a - b'
		[ $v = pass ] && op='a + b'
		write "$p/src/lib.rs" <<EOF
/// Adds two numbers.
pub fn add(a: i64, b: i64) -> i64 {
    $op
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_small_numbers() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn adds_zero() {
        assert_eq!(add(0, 0), 0);
    }
}
EOF
	done
	p=$d/rust-broken
	write "$p/Cargo.toml" <<<$'[package]\nname = "broken"\nversion = "0.1.0"\nedition = "2021"'
	write "$p/src/lib.rs" <<'EOF'
pub fn parse(s: &str) -> u32 {
    let n: u32 = s.len();
    n
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses() {
        assert_eq!(super::parse("ab"), 2);
    }
}
EOF
	# JavaScript: jest, and TypeScript type checking.
	for v in fail pass; do
		p=$d/js-cart-$v
		js "$p"
		write "$p/package.json" <<<'{"name": "cart", "version": "1.0.0", "private": true, "scripts": {"test": "jest"}}'
		rate=0.2
		[ $v = pass ] && rate=0.1
		write "$p/discount.js" <<EOF
function discount(total) {
  return Math.round(total * (1 - $rate) * 100) / 100;
}
module.exports = { discount };
EOF
		write "$p/discount.test.js" <<'EOF'
const { discount } = require('./discount');

test('takes ten percent off', () => {
  expect(discount(90)).toBe(81);
});

test('keeps zero at zero', () => {
  expect(discount(0)).toBe(0);
});
EOF
		p=$d/ts-types-$v
		js "$p"
		write "$p/package.json" <<<'{"name": "types", "version": "1.0.0", "private": true}'
		write "$p/tsconfig.json" <<<'{"compilerOptions": {"strict": true, "types": [], "skipLibCheck": true, "target": "es2020", "module": "commonjs", "outDir": "dist"}, "include": ["src"]}'
		ret='String(id)'
		[ $v = pass ] && ret='id'
		write "$p/src/user.ts" <<EOF
export interface User { id: number; name: string }

export function userId(u: User): number {
  const id = u.id;
  return $ret;
}
EOF
	done
	# Python: pytest and unittest.
	for v in fail pass; do
		p=$d/py-calc-$v
		body='return a * b'
		[ $v = pass ] && body='return a + b'
		write "$p/calc.py" <<EOF
def add(a, b):
    $body


def mean(xs):
    return sum(xs) / len(xs)
EOF
		write "$p/test_calc.py" <<'EOF'
import unittest

from calc import add, mean


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_add_negative(self):
        self.assertEqual(add(-1, 1), 0)

    def test_mean(self):
        self.assertEqual(mean([1, 2, 3]), 2)


if __name__ == "__main__":
    unittest.main()
EOF
		# make: a test target that runs a shell check.
		p=$d/make-$v
		code=1
		[ $v = pass ] && code=0
		[ $v = pass ] && write "$p/config.ini" <<<'[app]'
		write "$p/Makefile" <<EOF
.PHONY: test
test:
	@echo "checking config"
	@sh -c 'test -f config.ini || { echo "config.ini: missing" >&2; exit $code; }'
	@echo "config ok"
EOF
		# Maven and JUnit 4.
		p=$d/java-calc-$v
		mvn_project "$p"
		op='a - b'
		[ $v = pass ] && op='a + b'
		write "$p/src/main/java/example/Calc.java" <<EOF
package example;

public class Calc {
    public static int add(int a, int b) { return $op; }
}
EOF
		write "$p/src/test/java/example/CalcTest.java" <<'EOF'
package example;

import static org.junit.Assert.assertEquals;
import org.junit.Test;

public class CalcTest {
    @Test public void addsTwoNumbers() { assertEquals(5, Calc.add(2, 3)); }
    @Test public void addsZero() { assertEquals(0, Calc.add(0, 0)); }
}
EOF
		# RSpec.
		p=$d/rb-calc-$v
		write "$p/lib/calc.rb" <<EOF
module Calc
  def self.add(a, b)
    $op
  end
end
EOF
		write "$p/spec/calc_spec.rb" <<'EOF'
require_relative "../lib/calc"

RSpec.describe Calc do
  it "adds two numbers" do
    expect(Calc.add(2, 3)).to eq(5)
  end

  it "adds zero" do
    expect(Calc.add(0, 0)).to eq(0)
  end
end
EOF
	done
}

heldout_projects() {
	local d=$W/heldout
	# Go: two packages, one of whose tests panics.
	for v in fail pass; do
		p=$d/go-inventory-$v
		write "$p/go.mod" <<<$'module inventory\n\ngo 1.22'
		idx='len(items)'
		[ $v = pass ] && idx='len(items) - 1'
		write "$p/stock/stock.go" <<'EOF'
// Package stock counts stock.
package stock

// Count returns how many of sku are in stock.
func Count(levels map[string]int, sku string) int { return levels[sku] }
EOF
		write "$p/stock/stock_test.go" <<'EOF'
package stock

import "testing"

func TestCount(t *testing.T) {
	if Count(map[string]int{"a": 2}, "a") != 2 {
		t.Fatal("count")
	}
}

func TestMissing(t *testing.T) {
	if Count(map[string]int{}, "b") != 0 {
		t.Fatal("missing")
	}
}
EOF
		write "$p/orders/orders.go" <<EOF
// Package orders handles orders.
package orders

// Last returns the most recent order.
func Last(items []string) string { return items[$idx] }
EOF
		write "$p/orders/orders_test.go" <<'EOF'
package orders

import "testing"

func TestLast(t *testing.T) {
	for _, tc := range []struct{ in []string; want string }{
		{[]string{"a", "b"}, "b"},
		{[]string{"c"}, "c"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := Last(tc.in); got != tc.want {
				t.Errorf("Last = %q, want %q", got, tc.want)
			}
		})
	}
}
EOF
	done
	p=$d/go-typeerr
	write "$p/go.mod" <<<$'module report\n\ngo 1.22'
	write "$p/report/report.go" <<'EOF'
// Package report formats reports.
package report

import "strconv"

// Line formats one line of a report.
func Line(name string, n int) string {
	var total int = "0"
	return name + ": " + strconv.Itoa(n+total)
}
EOF
	write "$p/main.go" <<'EOF'
package main

import (
	"fmt"
	"report/report"
)

func main() { fmt.Println(report.Line("apples", 3)) }
EOF
	p=$d/go-vetcopy
	write "$p/go.mod" <<<$'module locker\n\ngo 1.22'
	write "$p/locker.go" <<'EOF'
// Package locker guards a counter.
package locker

import "sync"

// Counter counts under a lock.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Snapshot returns a copy of the counter.
func Snapshot(c Counter) Counter { return c }
EOF
	# Rust: a parser whose unit test panics, an integration test; a borrow error.
	for v in fail pass; do
		p=$d/rust-parser-$v
		write "$p/Cargo.toml" <<<$'[package]\nname = "parser"\nversion = "0.1.0"\nedition = "2021"'
		sep="','"
		[ $v = pass ] && sep="'='"
		write "$p/src/lib.rs" <<EOF
/// Splits "key=value".
pub fn pair(s: &str) -> Option<(&str, &str)> {
    s.split_once($sep)
}

#[cfg(test)]
mod tests {
    #[test]
    fn splits_a_pair() {
        let (k, v) = super::pair("port=8080").unwrap();
        assert_eq!((k, v), ("port", "8080"));
    }
}
EOF
		write "$p/tests/config.rs" <<'EOF'
#[test]
fn reads_a_line() {
    assert_eq!(parser::pair("a=b"), Some(("a", "b")));
}
EOF
	done
	p=$d/rust-borrow
	write "$p/Cargo.toml" <<<$'[package]\nname = "borrow"\nversion = "0.1.0"\nedition = "2021"'
	write "$p/src/main.rs" <<'EOF'
fn main() {
    let names = vec![String::from("a")];
    let first = names;
    println!("{} {}", names.len(), first.len());
}
EOF
	# JavaScript: vitest; jest with an exception thrown by the code.
	for v in fail pass; do
		p=$d/js-vitest-$v
		js "$p"
		write "$p/package.json" <<<'{"name": "slug", "version": "1.0.0", "private": true, "type": "module", "scripts": {"test:unit": "vitest run"}}'
		re='/ /'
		[ $v = pass ] && re='/ /g'
		write "$p/src/slug.js" <<EOF
export function slug(title) {
  return title.trim().toLowerCase().replace($re, '-');
}
EOF
		write "$p/src/slug.test.js" <<'EOF'
import { describe, expect, it } from 'vitest';
import { slug } from './slug.js';

describe('slug', () => {
  it('joins words with dashes', () => {
    expect(slug('Hello Big World')).toBe('hello-big-world');
  });
  it('trims', () => {
    expect(slug(' a ')).toBe('a');
  });
});
EOF
		p=$d/js-queue-$v
		js "$p"
		write "$p/package.json" <<<'{"name": "queue", "version": "1.0.0", "private": true, "scripts": {"test": "jest"}}'
		guard='if (this.items.length === 0) return undefined;'
		[ $v = fail ] && guard=''
		write "$p/queue.js" <<EOF
class Queue {
  constructor() { this.items = []; }
  push(x) { this.items.push(x); }
  pop() {
    $guard
    return this.items.shift().value;
  }
}
module.exports = { Queue };
EOF
		write "$p/__tests__/queue.test.js" <<'EOF'
const { Queue } = require('../queue');

describe('Queue', () => {
  it('pops what was pushed', () => {
    const q = new Queue();
    q.push({ value: 1 });
    expect(q.pop()).toBe(1);
  });
  it('pops nothing from an empty queue', () => {
    expect(new Queue().pop()).toBeUndefined();
  });
});
EOF
		p=$d/ts-api-$v
		js "$p"
		write "$p/package.json" <<<'{"name": "api", "version": "1.0.0", "private": true}'
		write "$p/tsconfig.json" <<<'{"compilerOptions": {"strict": true, "types": [], "skipLibCheck": true, "target": "es2020", "module": "commonjs", "noEmit": true}, "include": ["src"]}'
		arg='{ path: "/users", retries: "3" }'
		[ $v = pass ] && arg='{ path: "/users", retries: 3 }'
		write "$p/src/client.ts" <<EOF
interface Request { path: string; retries: number }

function send(r: Request): string {
  return r.path + "#" + r.retries;
}

export const sent: string = send($arg);
export const missing = send({ path: "/x", retries: 1 }).toUpperCase();
EOF
	done
	# Python: pytest with an exception in the code; a script with a traceback; unittest.
	for v in fail pass; do
		p=$d/py-orders-$v
		key='"qty"'
		[ $v = pass ] && key='"quantity"'
		write "$p/orders.py" <<EOF
def total(order):
    return sum(line[$key] * line["price"] for line in order["lines"])
EOF
		write "$p/tests/test_orders.py" <<'EOF'
from orders import total


def test_total():
    assert total({"lines": [{"quantity": 2, "price": 3}]}) == 6


def test_empty():
    assert total({"lines": []}) == 0
EOF
		write "$p/conftest.py" <<<'# puts the project folder on sys.path for pytest'
		p=$d/py-migrate-$v
		col='"email"'
		[ $v = pass ] && col='"mail"'
		write "$p/migrate.py" <<EOF
import json

ROWS = [{"id": 1, "mail": "a@x"}, {"id": 2, "mail": "b@x"}, {"id": 3, "mail": "c@x"}]


def migrate(rows):
    return [{"id": r["id"], "address": r[$col]} for r in rows]


if __name__ == "__main__":
    out = migrate(ROWS)
    print(json.dumps(out[0]))
    print("migrated %d rows" % len(out))
EOF
		p=$d/py-text-$v
		want="'Hello'"
		[ $v = fail ] && want="'hello'"
		write "$p/tests/test_text.py" <<EOF
import unittest


class TextTest(unittest.TestCase):
    def test_title(self):
        self.assertEqual("hello".title(), $want)

    def test_split(self):
        self.assertEqual("a b".split(), ["a", "b"])
EOF
		write "$p/tests/__init__.py" <<<''
		# make: check runs pytest, build runs go build.
		p=$d/make-$v
		write "$p/Makefile" <<'EOF'
.PHONY: all check build
all: check build
check:
	python3 -m pytest -q tests
build:
	go build ./...
EOF
		write "$p/go.mod" <<<$'module mk\n\ngo 1.22'
		if [ $v = pass ]; then
			write "$p/main.go" <<<$'package main\n\nfunc main() {}'
		else
			write "$p/main.go" <<<$'package main\n\nfunc main() { undefinedCall() }'
		fi
		write "$p/tests/test_ok.py" <<<$'def test_ok():\n    assert 1 + 1 == 2'
		[ $v = fail ] && write "$p/tests/test_bad.py" <<<$'def test_bad():\n    assert [1, 2] == [2, 1]'
		# Maven: a test that throws.
		p=$d/java-names-$v
		mvn_project "$p"
		expr='s.substring(0, 1).toUpperCase() + s.substring(1)'
		[ $v = fail ] && expr='s.substring(0, 1).toUpperCase() + s.substring(2)'
		write "$p/src/main/java/example/Names.java" <<EOF
package example;

public class Names {
    public static String capitalize(String s) {
        if (s.isEmpty()) return s;
        return $expr;
    }
}
EOF
		write "$p/src/test/java/example/NamesTest.java" <<'EOF'
package example;

import static org.junit.Assert.assertEquals;
import org.junit.Test;

public class NamesTest {
    @Test public void capitalizes() { assertEquals("Ada", Names.capitalize("ada")); }
    @Test public void keepsEmpty() { assertEquals("", Names.capitalize("")); }
    @Test public void oneLetter() { assertEquals("X", Names.capitalize("x")); }
}
EOF
		# RSpec: a nil error.
		p=$d/rb-greeter-$v
		name='user[:name]'
		[ $v = fail ] && name='user[:nickname].strip'
		write "$p/lib/greeter.rb" <<EOF
class Greeter
  def greet(user)
    "Hi, #{$name}!"
  end
end
EOF
		write "$p/spec/greeter_spec.rb" <<'EOF'
require_relative "../lib/greeter"

RSpec.describe Greeter do
  it "greets by name" do
    expect(Greeter.new.greet(name: "Ann")).to eq("Hi, Ann!")
  end
end
EOF
	done
}

# ---- recording ---------------------------------------------------------

SPLIT= PROJ= RUNNER= GROUP= LABEL=

# group SPLIT PROJECT RUNNER NAME WANT COMMAND: the plain run of COMMAND in
# PROJECT, whose exit code is the runner's own and labels every masked
# variant of it; WANT (pass|fail) is what the project was made to do.
group() {
	SPLIT=$1 PROJ=$2 RUNNER=$3 GROUP=$4
	local want=$5 cmd=$6
	run "$cmd"
	LABEL=pass
	[ "$EXIT" = 0 ] || LABEL=fail
	if [ "$LABEL" != "$want" ]; then
		echo "record.sh: $SPLIT/$PROJ: '$cmd' exited $EXIT, want $want" >&2
		sed -n 1,40p "$W/stdout" "$W/stderr" >&2
		exit 1
	fi
	save plain "$cmd"
}

# masked NAME COMMAND: a variant of the group's command.
masked() {
	run "$2"
	save "$1" "$2"
}

run() {
	local dir=$W/$SPLIT/$PROJ
	rm -f "$dir/test.log" "$dir/out.txt"
	START=$SECONDS
	set +e
	(cd "$dir" && bash -c "$1" </dev/null >"$W/stdout.live" 2>"$W/stderr.live")
	EXIT=$?
	set -e
	# What the shell printed by the time it exited (Claude Code reads it
	# then); a command left running in the background is waited for after.
	cp "$W/stdout.live" "$W/stdout"
	cp "$W/stderr.live" "$W/stderr"
	local i=0
	while fuser -s "$W/stdout.live" "$W/stderr.live" 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.2
		i=$((i + 1))
	done
}

save() {
	local mask=$1 cmd=$2 f
	f=$OUT/$SPLIT/$GROUP.$mask.txtar
	{
		echo "command: $cmd"
		echo "cwd: /home/dev/$SPLIT/$PROJ"
		echo "runner: $RUNNER"
		echo "mask: $mask"
		echo "exit: $EXIT"
		echo "label: $LABEL"
		echo "-- stdout --"
		scrub <"$W/stdout"
		echo "-- stderr --"
		scrub <"$W/stderr"
	} >"$f"
	echo "$SPLIT/$GROUP.$mask: exit $EXIT, $LABEL ($((SECONDS - START)) s)" >&2
}

# scrub names the scratch folder /home/dev and ends the text with a newline.
scrub() { sed -e "s#$W#/home/dev#g" -e '$a\'; }

# ---- the cases ----------------------------------------------------------

dev_cases() {
	local v
	for v in fail pass; do
		group dev go-shop-$v "go test" go-test-payments-$v $v 'go test ./payments/'
		masked tail 'go test ./payments/ 2>&1 | tail -5'
		masked head 'go test ./payments/ | head -5'
		masked tee 'go test ./payments/ 2>&1 | tee test.log'
		masked or-true 'go test ./payments/ || true'
		masked echo-done 'go test ./payments/; echo done'
		masked echo-status 'go test ./payments/; echo "exit: $?"'
		masked background 'go test ./payments/ &'
		group dev go-shop-$v "go test" go-test-all-$v $v 'go test ./...'
		masked tail 'go test ./... 2>&1 | tail -3'
		masked and-echo 'go test ./... && echo "all tests passed"'
	done
	group dev go-build-fail "go build" go-build-fail fail 'go build ./...'
	masked echo-done 'go build ./... ; echo done'
	masked head 'go build ./... 2>&1 | head -5'
	masked and-echo 'go build ./... && echo built'
	group dev go-build-pass "go build" go-build-pass pass 'go build ./...'
	masked echo-done 'go build ./... ; echo done'
	masked head 'go build ./... 2>&1 | head -5'
	group dev go-vet-fail "go vet" go-vet-fail fail 'go vet ./...'
	masked tail 'go vet ./... 2>&1 | tail -3'
	masked or-true 'go vet ./... || true'
	group dev go-build-pass "go vet" go-vet-pass pass 'go vet ./...'
	masked tail 'go vet ./... 2>&1 | tail -3'
	for v in fail pass; do
		group dev rust-calc-$v "cargo test" cargo-test-$v $v 'cargo test'
		masked tee 'cargo test 2>&1 | tee test.log'
		masked tail 'cargo test 2>&1 | tail -5'
		masked or-true 'cargo test || true'
		masked tail-stdout 'cargo test | tail -3'
	done
	group dev rust-broken "cargo build" cargo-build-fail fail 'cargo build'
	masked tail 'cargo build 2>&1 | tail -3'
	group dev rust-broken "cargo test" cargo-test-compile-fail fail 'cargo test'
	masked tail 'cargo test 2>&1 | tail -5'
	group dev rust-calc-pass "cargo build" cargo-build-pass pass 'cargo build'
	masked tail 'cargo build 2>&1 | tail -3'
	for v in fail pass; do
		group dev js-cart-$v jest jest-$v $v 'npx jest'
		masked tail 'npx jest 2>&1 | tail'
		masked head 'npx jest | head -20'
		masked or-true 'npx jest || true'
		group dev js-cart-$v "npm test" npm-test-$v $v 'npm test'
		masked or-true 'npm test || true'
		masked tail 'npm test 2>&1 | tail -5'
		group dev ts-types-$v tsc tsc-$v $v 'npx tsc --noEmit'
		masked head 'npx tsc --noEmit | head'
		masked echo-done 'npx tsc --noEmit; echo done'
		masked tail 'npx tsc --noEmit 2>&1 | tail -3'
		group dev py-calc-$v pytest pytest-$v $v 'python3 -m pytest -q'
		masked tail 'python3 -m pytest -q | tail -3'
		masked grep 'python3 -m pytest -q 2>&1 | grep -E "passed|failed"'
		masked or-true 'python3 -m pytest -q || true'
		group dev py-calc-$v unittest unittest-$v $v 'python3 -m unittest'
		masked tail 'python3 -m unittest 2>&1 | tail -4'
		group dev make-$v make make-$v $v 'make test'
		masked tail 'make test 2>&1 | tail -3'
		masked echo-done 'make test; echo done'
		group dev java-calc-$v maven mvn-$v $v 'mvn -q test'
		masked tail 'mvn -q test | tail'
		masked tail-all 'mvn -q test 2>&1 | tail -20'
		group dev rb-calc-$v rspec rspec-$v $v 'rspec'
		masked tail 'rspec | tail -3'
		masked or-true 'rspec || true'
	done
}

heldout_cases() {
	local v
	for v in fail pass; do
		group heldout go-inventory-$v "go test" go-test-v-$v $v 'go test -v ./...'
		masked tail 'go test -v ./... 2>&1 | tail -20'
		masked grep 'go test -v ./... 2>&1 | grep -E "^(ok|FAIL|---)"'
		masked head 'go test -v ./... 2>&1 | head -30'
		masked echo-status 'go test -v ./...; echo $?'
		masked and-echo 'go test -v ./... && echo ALL GREEN'
		masked log-tail 'go test -v ./... > test.log 2>&1; tail -5 test.log'
		group heldout go-inventory-$v "go test" go-test-orders-$v $v 'go test -count=1 ./orders/'
		masked tail 'go test -count=1 ./orders/ | tail -4'
		masked background 'go test -count=1 ./orders/ > test.log 2>&1 &'
	done
	group heldout go-typeerr "go build" go-build-typeerr fail 'go build ./...'
	masked tail 'go build ./... 2>&1 | tail -5'
	masked echo-done 'go build ./... && go vet ./...; echo done'
	group heldout go-inventory-pass "go build" go-build-inventory pass 'go build ./...'
	masked tail 'go build ./... 2>&1 | tail -5'
	group heldout go-vetcopy "go vet" go-vet-copylocks fail 'go vet ./...'
	masked or-true 'go vet ./... || true'
	masked head 'go vet ./... 2>&1 | head -3'
	for v in fail pass; do
		group heldout rust-parser-$v "cargo test" cargo-test-parser-$v $v 'cargo test'
		masked tail 'cargo test 2>&1 | tail -15'
		masked head 'cargo test -q | head -20'
		masked tail-nff 'cargo test --no-fail-fast 2>&1 | tail -8'
		masked echo-done 'cargo test; echo done'
	done
	group heldout rust-borrow "cargo build" cargo-build-borrow fail 'cargo build'
	masked grep 'cargo build 2>&1 | grep error'
	masked check-echo 'cargo check; echo done'
	masked tail 'cargo build 2>&1 | tail -4'
	for v in fail pass; do
		group heldout js-vitest-$v vitest vitest-$v $v 'npx vitest run'
		masked tail 'npx vitest run 2>&1 | tail -15'
		masked or-true 'npx vitest run || true'
		masked echo-done 'npx vitest run; echo done'
		masked npm-tail 'npm run test:unit 2>&1 | tail -8'
		group heldout js-queue-$v "npm test" npm-test-queue-$v $v 'npm test'
		masked silent-tail 'npm test -- --silent 2>&1 | tail -8'
		masked or-echo 'npm run test || echo "tests failed"'
		masked head 'npx jest --ci 2>&1 | head -12'
		group heldout ts-api-$v tsc tsc-api-$v $v 'npx tsc -p .'
		masked tail 'npx tsc -p . | tail -5'
		masked or-true 'npx tsc --noEmit || true'
		masked grep 'npx tsc -p . | grep -c error'
		group heldout py-orders-$v pytest pytest-orders-$v $v 'pytest'
		masked tail 'python3 -m pytest -x 2>&1 | tail -15'
		masked tee 'python3 -m pytest | tee out.txt'
		masked echo-status 'python3 -m pytest -q --tb=line; echo "pytest exited $?"'
		group heldout py-migrate-$v script migrate-$v $v 'python3 migrate.py'
		masked tail 'python3 migrate.py | tail -5'
		masked tail-all 'python3 migrate.py 2>&1 | tail -5'
		masked echo-done 'python3 migrate.py; echo done'
		group heldout py-text-$v unittest unittest-text-$v $v 'python3 -m unittest discover -v'
		masked tail 'python3 -m unittest discover -v 2>&1 | tail -6'
		masked head 'python3 -m unittest discover -s tests | head -3'
		group heldout make-$v make make-all-$v $v 'make'
		masked or-true 'make check || true'
		masked tail 'make build 2>&1 | tail -5'
		masked keep-going 'make -k all; echo done'
		group heldout java-names-$v maven mvn-names-$v $v 'mvn test'
		masked tail 'mvn test | tail -30'
		masked or-true 'mvn -q test || true'
		group heldout rb-greeter-$v rspec rspec-greeter-$v $v 'rspec'
		masked tail 'rspec --format documentation | tail -5'
		masked head 'rspec 2>&1 | head -5'
	done
}

versions() {
	{
		go version
		cargo --version
		echo "node $(node --version), npm $(npm --version)"
		(cd "$W/node" && echo "jest $(npx jest --version), vitest $(npx vitest --version), $(npx tsc --version)")
		python3 --version
		python3 -m pytest --version 2>&1
		make --version | sed -n 1p
		ruby --version
		rspec --version | tr '\n' ' ' | sed 's/ *$/\n/'
		mvn --version 2>/dev/null | sed -n 1p | sed 's/\x1b\[[0-9;]*m//g'
		java -version 2>&1 | sed -n 1p
		bash --version | sed -n 1p
	} >"$OUT/versions.txt"
}

node_setup
echo "record.sh: npm install done in $SECONDS s" >&2
dev_projects
heldout_projects
dev_cases
heldout_cases
versions
echo "record.sh: $(ls "$OUT/dev" | wc -l) dev and $(ls "$OUT/heldout" | wc -l) held-out cases in $OUT" >&2
