//go:build unix

package rest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A plugin that forks (a wrapper script, a shell pipeline) and hangs: on
// timeout its child is killed with it, not left running once per failed
// run. The child holds the plugin's stdout too, so this also shows that
// the run returns although the pipe stays open until the group dies.
func TestExecPluginTimeoutKillsItsChildren(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := filepath.Join(dir, "plugin.sh")
	// The pid file is written by a rename, so it is never read half written.
	body := "#!/bin/sh\nsleep 3600 &\necho $! > " + pidFile + ".tmp\nmv " + pidFile + ".tmp " + pidFile + "\nwait\n"
	require.NoError(t, os.WriteFile(script, []byte(body), 0o700))
	plugin := &ExecConfig{APIVersion: ExecAPIVersionV1, Command: script, Timeout: time.Second}

	_, err := plugin.credential(context.Background(), nil)
	require.ErrorIs(t, err, ErrExecPlugin)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	raw, err := os.ReadFile(pidFile)
	require.NoError(t, err, "the plugin started no child within its timeout")
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // only if the test failed
	require.Eventually(t, func() bool { return processGone(pid) }, 10*time.Second, 10*time.Millisecond,
		"the plugin's child %d outlived the plugin's timeout", pid)
}

// processGone reports that pid no longer runs: it does not exist, or it is
// a zombie its new parent has yet to reap.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// The state follows the command name, which is in parentheses.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}
