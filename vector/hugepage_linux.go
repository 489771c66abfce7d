package vector

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks Linux to back the whole 2 MiB pages in b with huge pages
// when b is first touched (transparent huge pages in "madvise" mode, as
// Debian sets them): a column of tens of MB is then faulted in a few
// dozen times, where 4 KiB pages take tens of thousands of faults, which
// on a virtual machine cost more than reading the data. Advice only: an
// error is ignored.
func adviseHuge(b []byte) {
	const huge = 2 << 20
	start := (uintptr(unsafe.Pointer(unsafe.SliceData(b))) + huge - 1) &^ (huge - 1)
	end := (uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(len(b))) &^ (huge - 1)
	if end <= start {
		return
	}
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, end-start, 14) // MADV_HUGEPAGE
}
