package boundedfile

import (
	"fmt"
	"io"
	"os"
)

// MaxFileBytes bounds every file this package reads: a kubeconfig, a CA
// bundle, a client certificate or key, a bearer token file, the pod's
// namespace file. The largest of these in real use, a kubeconfig merging
// many clusters or a CA bundle of every public root, is a few hundred KiB.
const MaxFileBytes = 16 << 20

// ReadFile is how the module reads a file named by a Config or a kubeconfig: only a regular file,
// and at most MaxFileBytes of it; anything else is refused with a
// *FileError. A kubeconfig names files (and $KUBECONFIG names
// kubeconfigs): one that names /dev/zero, a FIFO, a directory or a file of
// gigabytes must cost an error, not the process's memory or a read that
// never ends. Errors from the file system itself (a missing file, no
// permission) are returned as they are, so fs.ErrNotExist still matches.
//
// The path is checked before it is opened, since opening a FIFO blocks
// until someone writes to it, and the opened file is checked again, since
// the path may have been replaced in between. Symbolic links are followed:
// a pod's service account files are links into a directory the kubelet
// swaps atomically.
func ReadFile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkFileInfo(path, info); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkFileInfo(path, info); err != nil {
		return nil, err
	}
	// One byte past the limit tells a file that grew since Stat.
	buf := make([]byte, 0, info.Size()+1)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > MaxFileBytes {
			return nil, &FileError{Path: path, Reason: fmt.Sprintf("grew past %d bytes while being read", MaxFileBytes)}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) { // the file is longer than Stat said
			grown := make([]byte, len(buf), min(2*cap(buf), MaxFileBytes+1))
			copy(grown, buf)
			buf = grown
		}
	}
}

// checkFileInfo refuses what ReadFile must not read.
func checkFileInfo(path string, info os.FileInfo) error {
	switch {
	case !info.Mode().IsRegular():
		return &FileError{Path: path, Reason: fmt.Sprintf("is not a regular file (%v)", info.Mode().Type())}
	case info.Size() > MaxFileBytes:
		return &FileError{Path: path, Reason: fmt.Sprintf("holds %d bytes, more than the %d allowed", info.Size(), MaxFileBytes)}
	}
	return nil
}
