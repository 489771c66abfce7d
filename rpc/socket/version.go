package socket

import (
	"runtime/debug"
	"strconv"
	"strings"
)

// CompareVersions compares two versions of Mnemo, as semantic versions
// (MAJOR.MINOR.PATCH, a "-pre-release" before the release, "+build"
// ignored; a leading "v" allowed). It returns -1, 0 or +1 as a is older
// than, the same as or newer than b, and ok false when either is not a
// release to compare: empty, not MAJOR.MINOR.PATCH, or a development
// build (a pre-release that says "dev", as an unstamped build's
// "0.1.0-dev" and `just release`'s default "0.1.0-dev+<commit>" do).
// Development builds never hand a daemon over nor refuse one: two of
// them may be any two commits.
func CompareVersions(a, b string) (cmp int, ok bool) {
	va, oka := parseVersion(a)
	vb, okb := parseVersion(b)
	if !oka || !okb {
		return 0, false
	}
	for i := range 3 {
		if va.num[i] != vb.num[i] {
			return sign(va.num[i] - vb.num[i]), true
		}
	}
	return comparePre(va.pre, vb.pre), true
}

type version struct {
	num [3]int
	pre []string
}

func parseVersion(s string) (version, bool) {
	var v version
	s = strings.TrimPrefix(s, "v")
	s, _, _ = strings.Cut(s, "+")
	core, pre, hasPre := strings.Cut(s, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" {
			return v, false
		}
		v.num[i] = n
	}
	if hasPre {
		if pre == "" || strings.Contains(strings.ToLower(pre), "dev") {
			return v, false
		}
		v.pre = strings.Split(pre, ".")
	}
	return v, true
}

// comparePre orders pre-releases as semver does: none is newest; then
// field by field, numbers below words, numbers by value, words by bytes;
// more fields newer when all before are equal.
func comparePre(a, b []string) int {
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0
	case len(a) == 0:
		return 1
	case len(b) == 0:
		return -1
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		na, ea := strconv.Atoi(a[i])
		nb, eb := strconv.Atoi(b[i])
		switch {
		case ea == nil && eb == nil:
			if na != nb {
				return sign(na - nb)
			}
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		default:
			if c := strings.Compare(a[i], b[i]); c != 0 {
				return c
			}
		}
	}
	return sign(len(a) - len(b))
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// ReleaseVersion is the version a binary goes by: stamped, as given
// (-ldflags "-X …Version=…": `just release`, `just install`); else, for
// a build `go install …@v0.2.0` made, the module's version from the build
// information (v0.2.0 → 0.2.0); else stamped, a development build.
func ReleaseVersion(stamped string) string {
	if !strings.Contains(stamped, "dev") {
		return stamped
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return stamped
	}
	if _, ok := parseVersion(info.Main.Version); !ok {
		return stamped // "(devel)": a build in a checkout
	}
	return strings.TrimPrefix(info.Main.Version, "v")
}
