//go:build !unix

package rest

import "os/exec"

// ownProcessGroup does nothing where there are no POSIX process groups:
// on timeout only the plugin itself is killed (exec.CommandContext's
// default). See the unix version.
func ownProcessGroup(*exec.Cmd) {}
