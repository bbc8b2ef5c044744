package pluginhost

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// hclogAdapter lets go-plugin log into the host's slog. go-plugin re-logs
// every JSON line a plugin writes on standard error through it, at the
// plugin's level and with the plugin's key-value pairs.
type hclogAdapter struct {
	l       *slog.Logger
	name    string
	implied []any
}

func newHCLog(l *slog.Logger) hclog.Logger { return &hclogAdapter{l: l} }

const levelTrace = slog.LevelDebug - 4

func slogLevel(l hclog.Level) slog.Level {
	switch l {
	case hclog.Trace:
		return levelTrace
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

func (a *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	lvl := slogLevel(level)
	ctx := context.Background()
	if !a.l.Enabled(ctx, lvl) {
		return
	}
	attrs := make([]any, 0, len(a.implied)+len(args)+2)
	if a.name != "" {
		attrs = append(attrs, "module", a.name)
	}
	attrs = append(attrs, a.implied...)
	for i := 0; i < len(args); i += 2 {
		key, ok := args[i].(string)
		if !ok || i+1 == len(args) {
			attrs = append(attrs, "extra", args[i])
			i--
			continue
		}
		// go-plugin adds the plugin's own timestamp; slog has the time.
		if key == "timestamp" {
			continue
		}
		attrs = append(attrs, strings.TrimPrefix(key, "@"), args[i+1])
	}
	a.l.Log(ctx, lvl, msg, attrs...)
}

func (a *hclogAdapter) Trace(msg string, args ...any) { a.Log(hclog.Trace, msg, args...) }
func (a *hclogAdapter) Debug(msg string, args ...any) { a.Log(hclog.Debug, msg, args...) }
func (a *hclogAdapter) Info(msg string, args ...any)  { a.Log(hclog.Info, msg, args...) }
func (a *hclogAdapter) Warn(msg string, args ...any)  { a.Log(hclog.Warn, msg, args...) }
func (a *hclogAdapter) Error(msg string, args ...any) { a.Log(hclog.Error, msg, args...) }

func (a *hclogAdapter) IsTrace() bool { return a.l.Enabled(context.Background(), levelTrace) }
func (a *hclogAdapter) IsDebug() bool { return a.l.Enabled(context.Background(), slog.LevelDebug) }
func (a *hclogAdapter) IsInfo() bool  { return a.l.Enabled(context.Background(), slog.LevelInfo) }
func (a *hclogAdapter) IsWarn() bool  { return a.l.Enabled(context.Background(), slog.LevelWarn) }
func (a *hclogAdapter) IsError() bool { return a.l.Enabled(context.Background(), slog.LevelError) }

func (a *hclogAdapter) ImpliedArgs() []any { return a.implied }

func (a *hclogAdapter) With(args ...any) hclog.Logger {
	n := *a
	n.implied = append(append([]any(nil), a.implied...), args...)
	return &n
}

func (a *hclogAdapter) Name() string { return a.name }

// Named is how go-plugin marks sub-loggers ("stdio", the binary's name for
// relayed lines). The binary's name is already on the logger as "plugin",
// so it is not repeated.
func (a *hclogAdapter) Named(name string) hclog.Logger {
	n := *a
	if strings.HasPrefix(name, "docindex-") {
		return &n
	}
	if n.name != "" {
		name = n.name + "." + name
	}
	n.name = name
	return &n
}

func (a *hclogAdapter) ResetNamed(name string) hclog.Logger {
	n := *a
	n.name = name
	return &n
}

// SetLevel is ignored: the host's slog handler decides.
func (a *hclogAdapter) SetLevel(hclog.Level) {}

func (a *hclogAdapter) GetLevel() hclog.Level {
	switch {
	case a.IsTrace():
		return hclog.Trace
	case a.IsDebug():
		return hclog.Debug
	case a.IsInfo():
		return hclog.Info
	case a.IsWarn():
		return hclog.Warn
	case a.IsError():
		return hclog.Error
	default:
		return hclog.Off
	}
}

func (a *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(a.StandardWriter(opts), "", 0)
}

func (a *hclogAdapter) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return &lineWriter{log: func(line string) { a.Info(line) }}
}

// lineWriter turns a byte stream into log records, one per line: what a
// plugin prints on its stdout or stderr after Serve arrives this way.
type lineWriter struct {
	mu  sync.Mutex
	buf []byte
	log func(line string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimRight(string(w.buf[:i]), "\r"); line != "" {
			w.log(line)
		}
		w.buf = w.buf[i+1:]
	}
	// A runaway line without newlines is logged in pieces rather than
	// buffered without bound.
	if len(w.buf) > 64<<10 {
		w.log(string(w.buf))
		w.buf = nil
	}
	return len(p), nil
}
