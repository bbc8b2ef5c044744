package pluginhost

import (
	"os/exec"
	"syscall"
)

// killWithParent asks the kernel to kill the plugin when the host dies, even
// by SIGKILL, when Close never runs. (Pdeathsig follows the OS thread that
// started the child; Go only ends threads that a goroutine locked and never
// unlocked, which the host does not do.)
func killWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
