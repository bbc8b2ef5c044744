//go:build !linux

package pluginhost

import "os/exec"

// killWithParent has no portable equivalent outside Linux: there, Close is
// what kills the plugins.
func killWithParent(*exec.Cmd) {}
