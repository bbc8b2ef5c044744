package auth

import (
	"net/http"
	"strings"
)

// BearerToken returns the token of an "Authorization: Bearer <token>"
// header. The scheme is matched case-insensitively (RFC 9110 section 11.1);
// a missing header, another scheme, or an empty token or one containing
// blanks gives false.
func BearerToken(r *http.Request) (string, bool) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	if token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}
