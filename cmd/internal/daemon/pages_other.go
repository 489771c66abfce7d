//go:build !linux

package daemon

// dropTablePages does nothing where /proc/self/maps does not exist.
func dropTablePages(string) (int64, error) { return 0, nil }
