package hook

import (
	"os"

	"golang.org/x/sys/windows"
)

// openFile opens path as os.OpenFile does for the flags the spool uses
// (O_WRONLY|O_APPEND with O_CREATE|O_EXCL, O_RDWR), but shares the file
// for deletion too (FILE_SHARE_DELETE): os.OpenFile does not, and Windows
// refuses to rename a file that some handle has open without it, while
// TakeSpool renames the spool under the lock that hooks wait for with the
// file open.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = windows.GENERIC_READ
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	if flag&os.O_APPEND != 0 {
		// As os.OpenFile: every right of GENERIC_WRITE but FILE_WRITE_DATA,
		// so that each write goes to the end of the file.
		access &^= windows.GENERIC_WRITE
		access |= windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES | windows.FILE_WRITE_EA |
			windows.STANDARD_RIGHTS_WRITE | windows.SYNCHRONIZE
	}
	var create uint32
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		create = windows.CREATE_NEW
	case flag&os.O_CREATE != 0:
		create = windows.OPEN_ALWAYS
	default:
		create = windows.OPEN_EXISTING
	}
	h, err := windows.CreateFile(name, access,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, create, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		// ERROR_FILE_NOT_FOUND and ERROR_FILE_EXISTS match os.ErrNotExist
		// and os.ErrExist.
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// lockFile takes an exclusive LockFileEx lock on all of f, waiting for it.
func lockFile(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, ^uint32(0), ^uint32(0), new(windows.Overlapped))
}

// unlockFile releases lockFile's lock.
func unlockFile(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, ^uint32(0), ^uint32(0), new(windows.Overlapped))
}
