package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
)

// childEnv marks a child process in its environment.
const childEnv = "COMPARE_CHILD"

// childProc is a side running in its own process: this binary re-executed
// with -side.
type childProc struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	name string
}

func spawn(ctx context.Context, cfg sideConfig) (*childProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, "-side", cfg.Side, "-url", cfg.URL, "-encoding", cfg.Encoding,
		"-strip="+strconv.FormatBool(cfg.Strip), "-handlers", strconv.Itoa(cfg.Handlers), "-slow="+strconv.FormatBool(cfg.Slow),
		"-profile", cfg.Profile)
	cmd.Stderr = os.Stderr
	// A test binary re-executed as a child learns it from this variable
	// (compare_test.go's TestMain); the command itself needs only -side.
	cmd.Env = append(os.Environ(), childEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	return &childProc{cmd: cmd, in: in, out: sc, name: cfg.Side}, nil
}

// call sends one command and reads its reply.
func (c *childProc) call(cmd command) (reply, error) {
	b, _ := json.Marshal(cmd)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		return reply{}, fmt.Errorf("%s: sending %s: %w", c.name, cmd.Op, err)
	}
	if !c.out.Scan() {
		return reply{}, fmt.Errorf("%s: no reply to %s: %v", c.name, cmd.Op, c.out.Err())
	}
	var r reply
	if err := json.Unmarshal(c.out.Bytes(), &r); err != nil {
		return reply{}, fmt.Errorf("%s: reply to %s: %w", c.name, cmd.Op, err)
	}
	if r.Err != "" {
		return r, fmt.Errorf("%s: %s: %s", c.name, cmd.Op, r.Err)
	}
	return r, nil
}

// close ends the child and waits for it.
func (c *childProc) close() error {
	b, _ := json.Marshal(command{Op: "quit"})
	c.in.Write(append(b, '\n'))
	c.in.Close()
	return c.cmd.Wait()
}
