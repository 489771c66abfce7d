// Package atomicfile replaces a file whole: a reader, or the machine after
// a crash, finds the old file or the new one, never a part of either. It is
// the one way Mnemo replaces a file (settings, setup and viewer state, the
// index snapshot, the encoder's weights, rules files, exports), and it
// imports only the standard library, so that any package may use it.
//
// # The guarantee
//
// WriteFile and Write make a temporary file in the folder of the target
// (named "." + its name + ".tmp-…", so that the rename never crosses file
// systems), write it, give it the mode asked for exactly (the umask does
// not narrow it), sync it to the disk, close it, rename it over the target
// and sync the folder, so that the rename survives a crash too. On any
// error before the rename the temporary file is removed and the target is
// left as it was (or missing, if it was); the error names the step that
// failed. An error from syncing the folder comes after the rename: the new
// file is in place, but not yet known to be durable.
//
// # What it does not promise
//
//   - The folder must exist: it is not made (callers choose its mode).
//   - A symbolic link at the target is replaced, not followed: resolve it
//     first (filepath.EvalSymlinks) to write through it.
//   - The old file's mode and owner are not kept: the caller passes the
//     mode it wants, and reads the old one first if it should stay.
//   - Writers are not serialized: of two writers of one file, the later
//     rename wins.
//   - On Windows the folder sync does nothing (SyncDir): a folder's handle
//     cannot be flushed there, and NTFS journals the creation and renaming
//     of files. The file's own sync still happens.
//   - It is as durable as the storage below: a disk that acknowledges
//     writes it has not flushed, or a network file system, may still lose
//     the new file.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The two syncs of the guarantee, variables so that the package's tests
// can see each one happen, and when.
var (
	syncFile = (*os.File).Sync
	syncDir  = SyncDir
)

// WriteFile replaces the file at path with data, with mode perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// Write replaces the file at path with what fill writes to the temporary
// file, with mode perm: for data written as it is made (a snapshot of the
// index), or out of order (fill may seek and WriteAt). fill must not close
// the file. An error of fill is returned as it is, and the target is left
// as it was.
func Write(path string, perm fs.FileMode, fill func(f *os.File) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if !renamed { // an error, or a panic in fill
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := syncFile(f); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	renamed = true
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("%s is replaced, but its folder did not sync: %w", path, err)
	}
	return nil
}
