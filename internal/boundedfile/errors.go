package boundedfile

import (
	"errors"
	"fmt"
)

var (
	// ErrFileRefused is wrapped by every *FileError: a file named by a
	// Config or a kubeconfig is not a regular file, or is longer than
	// MaxFileBytes.
	ErrFileRefused = errors.New("boundedfile: file refused")
)

// FileError reports a file this package refused to read: one that is not
// a regular file (a directory, a device such as /dev/zero, a FIFO, a
// socket) or that is longer than MaxFileBytes. A kubeconfig and the files
// it names are input like any other, and a file of gigabytes would be
// read whole. It wraps ErrFileRefused. Errors of the file system itself
// (fs.ErrNotExist, fs.ErrPermission) are not FileErrors.
type FileError struct {
	Path   string // the file, as named
	Reason string // for example "is not a regular file (d---------)", for a directory
}

// Error names the file and why it was refused.
func (e *FileError) Error() string {
	return fmt.Sprintf("boundedfile: refusing to read %s: it %s", e.Path, e.Reason)
}

// Unwrap lets errors.Is(err, ErrFileRefused) match.
func (e *FileError) Unwrap() error { return ErrFileRefused }
