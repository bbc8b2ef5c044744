package plugins

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// LogLevelEnv names the environment variable with which a host tells its
// plugins the lowest level worth sending (trace, debug, info, warn, error).
const LogLevelEnv = "DOCINDEX_PLUGIN_LOG_LEVEL"

// Logger returns a logger for plugin code. It writes go-plugin's JSON log
// lines to standard error, which the host parses and re-logs in its own log
// with the plugin's name and the same level. Create it before calling Serve
// (Serve redirects os.Stderr for stray prints).
func Logger() *slog.Logger { return NewLogger(os.Stderr) }

// NewLogger is Logger writing to w.
func NewLogger(w io.Writer) *slog.Logger {
	return slog.New(&hclogHandler{l: NewHCLogger(w)})
}

// NewHCLogger returns the hclog logger the SDK uses on the plugin side: JSON
// lines on w, at the level the host asked for (info when it did not).
func NewHCLogger(w io.Writer) hclog.Logger {
	level := hclog.LevelFromString(os.Getenv(LogLevelEnv))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{
		Output:     w,
		Level:      level,
		JSONFormat: true,
	})
}

// hclogHandler is a slog.Handler over an hclog.Logger, so that plugin authors
// log with the standard library and the host still understands the lines.
type hclogHandler struct {
	l      hclog.Logger
	attrs  []any
	prefix string
}

func hclogLevel(l slog.Level) hclog.Level {
	switch {
	case l < slog.LevelDebug:
		return hclog.Trace
	case l < slog.LevelInfo:
		return hclog.Debug
	case l < slog.LevelWarn:
		return hclog.Info
	case l < slog.LevelError:
		return hclog.Warn
	default:
		return hclog.Error
	}
}

func (h *hclogHandler) Enabled(_ context.Context, l slog.Level) bool {
	return hclogLevel(l) >= h.l.GetLevel()
}

func (h *hclogHandler) Handle(_ context.Context, r slog.Record) error {
	args := append([]any(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		args = appendAttr(args, h.prefix, a)
		return true
	})
	h.l.Log(hclogLevel(r.Level), r.Message, args...)
	return nil
}

func (h *hclogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append([]any(nil), h.attrs...)
	for _, a := range attrs {
		n.attrs = appendAttr(n.attrs, h.prefix, a)
	}
	return &n
}

func (h *hclogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	n := *h
	n.prefix = h.prefix + name + "."
	return &n
}

// appendAttr flattens groups into dotted keys: hclog has no nesting.
func appendAttr(args []any, prefix string, a slog.Attr) []any {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p = prefix + a.Key + "."
		}
		for _, g := range v.Group() {
			args = appendAttr(args, p, g)
		}
		return args
	}
	if a.Key == "" {
		return args
	}
	key := prefix + a.Key
	if strings.HasPrefix(key, "@") {
		// Keys starting with @ are hclog's own (@level, @message): keep the
		// author's value without clobbering them.
		key = "_" + key
	}
	return append(args, key, v.Any())
}
