//go:build !linux

package vector

func adviseHuge([]byte) {}
