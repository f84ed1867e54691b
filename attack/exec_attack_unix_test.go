//go:build unix

package attack_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/rest"
)

// Issue 32, item 4: an exec credential plugin that forks a child and
// hangs. On each timeout the plugin was killed and its child left
// running, one more per attempt; now its process group is killed.
func TestAttackForkingExecPlugin(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	script := filepath.Join(dir, "plugin.sh")
	body := "#!/bin/sh\nsleep 3600 &\necho $! >> " + pids + "\nwait\n"
	require.NoError(t, os.WriteFile(script, []byte(body), 0o700))

	a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		t.Error("a request got past a plugin that gave no credential")
	})
	a.cfg.BearerToken = ""
	a.cfg.Exec = &rest.ExecConfig{APIVersion: rest.ExecAPIVersionV1, Command: script, Timeout: 500 * time.Millisecond}
	a.start()
	// The timeout's context.DeadlineExceeded is a net.Error: the
	// reflector files the failure as a network one, and backs off.
	e := a.waitErr(reflector.KindNetwork, rest.ErrExecPlugin)
	require.Contains(t, e.Error(), "did not finish within")
	a.observe(time.Second)
	a.stop(bounds{requests: 0, heap: 16 << 20})

	raw, err := os.ReadFile(pids)
	require.NoError(t, err)
	children := strings.Fields(string(raw))
	require.NotEmpty(t, children)
	for _, s := range children {
		pid, err := strconv.Atoi(s)
		require.NoError(t, err)
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // only if the test failed
		require.Eventually(t, func() bool { return processGone(pid) }, waitFor, 10*time.Millisecond,
			"the plugin's child %d outlived its timeout", pid)
	}
	t.Logf("%d plugin runs, every child gone", len(children))
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
