//go:build !unix

package mcp

import (
	"os/exec"
	"time"
)

// Outside Unix a stdio child is stopped alone, by the SDK (its stdin
// closed, then killed): there are no process groups to stop.

func ownProcessGroup(*exec.Cmd) {}

func stopProcessGroup(int, time.Duration) {}
