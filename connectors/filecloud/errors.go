package filecloud

import (
	"net/url"
	"strings"
)

// minSecretLen is the shortest secret that scrub replaces: replacing every
// "p" of a message because the password is "p" would garble it without
// protecting anything.
const minSecretLen = 4

// scrubbed is an error whose message had secrets removed; it still
// unwraps to the original, so errors.Is keeps working.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// scrub removes the secrets from err's message. Configuration checks keep
// credentials out of URLs, but a server or library may still echo one back
// (in a redirect URL, a quoted request), and messages travel to logs and to
// the API.
func scrub(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := scrubString(err.Error(), secrets)
	if msg == err.Error() {
		return err
	}
	return &scrubbed{msg: msg, err: err}
}

func scrubString(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) < minSecretLen {
			continue
		}
		// Also as it would appear escaped inside a URL.
		for _, form := range []string{sec, url.QueryEscape(sec), url.PathEscape(sec)} {
			s = strings.ReplaceAll(s, form, "[redacted]")
		}
	}
	return s
}
