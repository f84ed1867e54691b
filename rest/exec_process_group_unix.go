//go:build unix

package rest

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd as the leader of a process group of its own
// and makes its cancellation (Timeout, or the request given up on) kill the
// whole group, not the plugin alone. A plugin is often a shell script or a
// wrapper that forks the real program: killing only the wrapper would leave
// its children running, holding our pipes, once per failed run.
//
// The group is signalled before Wait reaps the leader, so its id cannot
// have been reused. A child that made a session or group of its own
// (setsid, a daemon) has left ours on purpose and is not followed.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// A negative pid names the process group.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
