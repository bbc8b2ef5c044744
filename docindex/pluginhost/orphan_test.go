package pluginhost_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/pluginhost"
)

// helperEnv makes the test binary act as a server process that hosts the
// plugins of the directory it names, so that a test can kill a whole host.
const helperEnv = "PLUGINHOST_TEST_HELPER_DIR"

func runHelperHost(dir string) int {
	h := pluginhost.New(pluginhost.WithDir(dir), pluginhost.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err := h.Start(context.Background()); err != nil {
		fmt.Println("error", err)
		return 1
	}
	var pids []string
	for _, p := range h.Plugins() {
		pids = append(pids, strconv.Itoa(p.PID))
	}
	fmt.Println("pids", strings.Join(pids, " "))
	select {} // until killed
}

// TestHostKilledTakesPluginsAlong kills a host process with SIGKILL, so that
// Close never runs: its plugins must not survive it.
func TestHostKilledTakesPluginsAlong(t *testing.T) {
	dir := pluginDir(t, "docindex-embedder-hash", "docindex-connector-fixture")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	defer cmd.Process.Kill()

	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	var pids []int
	select {
	case l := <-line:
		fields := strings.Fields(l)
		if len(fields) != 3 || fields[0] != "pids" {
			t.Fatalf("helper host said %q", l)
		}
		for _, f := range fields[1:] {
			pid, _ := strconv.Atoi(f)
			if pid <= 0 {
				t.Fatalf("helper host reported pid %q", f)
			}
			pids = append(pids, pid)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the helper host did not start its plugins within 30s")
	}
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	for _, pid := range pids {
		if !processGone(pid) {
			t.Errorf("plugin process %d outlived its killed host", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
