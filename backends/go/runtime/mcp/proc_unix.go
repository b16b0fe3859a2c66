//go:build unix

package mcp

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// ownProcessGroup starts a stdio child as the leader of a process group of
// its own, as the MCP Python SDK does: a Ctrl-C meant for the service does
// not reach it (the service stops it in order), and stopProcessGroup
// reaches whatever it started.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// stopProcessGroup stops what is left of the process group a stdio child
// led, once the child itself stopped: SIGTERM, then SIGKILL to those still
// there after grace. An empty group costs one failed kill.
func stopProcessGroup(pid int, grace time.Duration) {
	if syscall.Kill(-pid, syscall.SIGTERM) != nil {
		return // the group is gone
	}
	for ends := time.Now().Add(grace); time.Now().Before(ends); time.Sleep(10 * time.Millisecond) {
		if errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH) {
			return
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
