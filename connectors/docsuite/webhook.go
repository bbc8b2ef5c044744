package docsuite

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

// Headers that authenticate a pushed notification.
const (
	// HeaderSignature carries "sha256=" and the hex HMAC-SHA256 of the body
	// keyed with webhookSecret, as Confluence Data Center webhooks send it.
	HeaderSignature = "X-Hub-Signature"
	// HeaderSignature256 is the same under the name GitHub-style senders use.
	HeaderSignature256 = "X-Hub-Signature-256"
	// HeaderSecret carries webhookSecret itself, for senders that cannot
	// sign (a MediaWiki hook, a script); use it over HTTPS only.
	HeaderSecret = "X-Docindex-Webhook-Secret"
)

// MaxEventBody is the largest notification body ParseEvent reads; hosts
// should refuse larger requests before calling it.
const MaxEventBody = 1 << 20

// Errors of ParseEvent, for the host to map to HTTP statuses.
var (
	// ErrWebhookDisabled: the source has no webhookSecret (403).
	ErrWebhookDisabled = fmt.Errorf("docsuite: the source accepts no pushed notifications: set webhookSecret: %w", plugins.ErrPermissionDenied)
	// ErrBadSignature: the signature or secret is missing or wrong (401).
	ErrBadSignature = fmt.Errorf("docsuite: notification signature missing or invalid: %w", plugins.ErrUnauthenticated)
	// ErrBadPayload: authentic, but not a notification ParseEvent knows (400).
	ErrBadPayload = fmt.Errorf("docsuite: unrecognised notification: %w", plugins.ErrInvalidArgument)
)

// Notification is what a verified change notification says changed. Ids
// are item ids as Sync reports them (Confluence page ids, "att" attachment
// ids, MediaWiki page ids).
type Notification struct {
	// Changed lists items created, edited, moved or restored.
	Changed []string
	// Deleted lists items removed or trashed.
	Deleted []string
}

// Events turns the deletions into Delete events the host can apply at
// once; changed items need a sync, which reads them with their access
// lists (for MediaWiki an incremental one from the stored cursor).
func (n Notification) Events() []connector.Event {
	out := make([]connector.Event, 0, len(n.Deleted))
	for _, id := range n.Deleted {
		out = append(out, connector.Delete(id))
	}
	return out
}

// Empty reports whether the notification names no item (a space event, a
// test delivery): the host may then sync the whole source or do nothing.
func (n Notification) Empty() bool { return len(n.Changed) == 0 && len(n.Deleted) == 0 }

// ParseEvent verifies a notification pushed to the host's webhook endpoint
// (POST /api/sources/{id}/events) against the source's configuration and
// says which items it concerns. The host calls it with the source's stored
// configuration, the request's headers and its body (at most MaxEventBody
// bytes), and on success starts a sync of the source; Events gives the
// deletions it may apply at once.
//
// Authentication, either of:
//   - X-Hub-Signature or X-Hub-Signature-256: "sha256=<hex>" (or the bare
//     hex) of HMAC-SHA256(webhookSecret, body): Confluence Data Center
//     webhooks with a secret send this;
//   - X-Docindex-Webhook-Secret: the webhookSecret itself.
//
// Bodies understood (a JSON object, or an array of them):
//   - Confluence webhooks (Cloud and Data Center): {"event" or
//     "webhookEvent": "page_updated", "page": {"id": ...}} and the same
//     with "attachment", "blog" or "content"; events whose name contains
//     "removed", "trashed" or "deleted" are deletions, the others changes;
//     without an event field the X-Event-Key header names it;
//   - MediaWiki EventBus page changes: {"page_change_kind": "edit" |
//     "create" | "move" | "undelete" | "delete", "page": {"page_id": N}}, and
//     the older {"meta": {"stream": "mediawiki.page-delete"}, "page_id": N};
//   - a plain list: {"changed": ["id", ...], "deleted": ["id", ...]}.
func ParseEvent(config json.RawMessage, headers http.Header, body []byte) (Notification, error) {
	cfg, err := ParseConfig(config)
	if err != nil {
		return Notification{}, fmt.Errorf("docsuite: event: %w", err)
	}
	if cfg.WebhookSecret == "" {
		return Notification{}, ErrWebhookDisabled
	}
	if len(body) > MaxEventBody {
		return Notification{}, fmt.Errorf("docsuite: notification of %d bytes, more than %d: %w", len(body), MaxEventBody, plugins.ErrInvalidArgument)
	}
	if !authentic(cfg.WebhookSecret, headers, body) {
		return Notification{}, ErrBadSignature
	}
	var objects []map[string]json.RawMessage
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		err = json.Unmarshal(trimmed, &objects)
	} else {
		var one map[string]json.RawMessage
		err = json.Unmarshal(trimmed, &one)
		objects = append(objects, one)
	}
	if err != nil {
		return Notification{}, fmt.Errorf("%w: not a JSON object or array of objects", ErrBadPayload)
	}
	var n Notification
	recognised := false
	for _, obj := range objects {
		ok, err := n.add(obj, headers)
		if err != nil {
			return Notification{}, err
		}
		recognised = recognised || ok
	}
	if !recognised {
		return Notification{}, fmt.Errorf("%w: no page, attachment, page_id or changed/deleted field", ErrBadPayload)
	}
	n.Changed = dedupe(n.Changed)
	n.Deleted = dedupe(n.Deleted)
	// An item deleted in the same delivery is not also changed.
	n.Changed = slices.DeleteFunc(n.Changed, func(id string) bool { return slices.Contains(n.Deleted, id) })
	return n, nil
}

// authentic checks the signature or the shared secret in constant time.
func authentic(secret string, headers http.Header, body []byte) bool {
	for _, h := range []string{HeaderSignature256, HeaderSignature} {
		sig := strings.TrimSpace(headers.Get(h))
		if sig == "" {
			continue
		}
		sig = strings.TrimPrefix(strings.TrimPrefix(sig, "sha256="), "SHA256=")
		got, err := hex.DecodeString(sig)
		if err != nil {
			return false
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		return hmac.Equal(got, mac.Sum(nil))
	}
	if given := headers.Get(HeaderSecret); given != "" {
		// Compare digests so that the comparison's time says nothing about
		// the secret's length.
		a, b := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(secret))
		return subtle.ConstantTimeCompare(a[:], b[:]) == 1
	}
	return false
}

// add records what one notification object says; ok is false when the
// object has no shape ParseEvent knows.
func (n *Notification) add(obj map[string]json.RawMessage, headers http.Header) (ok bool, err error) {
	// A plain list.
	if obj["changed"] != nil || obj["deleted"] != nil {
		var list struct {
			Changed []flexString `json:"changed"`
			Deleted []flexString `json:"deleted"`
		}
		raw, _ := json.Marshal(obj)
		if err := json.Unmarshal(raw, &list); err != nil {
			return false, fmt.Errorf("%w: changed and deleted must be arrays of ids", ErrBadPayload)
		}
		for _, id := range list.Changed {
			n.Changed = append(n.Changed, string(id))
		}
		for _, id := range list.Deleted {
			n.Deleted = append(n.Deleted, string(id))
		}
		return true, nil
	}

	// MediaWiki EventBus.
	if kind := str(obj["page_change_kind"]); kind != "" || obj["page_id"] != nil {
		id := ""
		var pg struct {
			PageID flexString `json:"page_id"`
		}
		if obj["page"] != nil && json.Unmarshal(obj["page"], &pg) == nil {
			id = string(pg.PageID)
		}
		if id == "" {
			var pid flexString
			_ = json.Unmarshal(obj["page_id"], &pid)
			id = string(pid)
		}
		if id == "" {
			return false, nil
		}
		var meta struct {
			Stream string `json:"stream"`
		}
		_ = json.Unmarshal(obj["meta"], &meta)
		if kind == "delete" || strings.Contains(meta.Stream, "page-delete") {
			n.Deleted = append(n.Deleted, id)
		} else {
			n.Changed = append(n.Changed, id)
		}
		return true, nil
	}

	// Confluence.
	event := str(obj["event"])
	if event == "" {
		event = str(obj["webhookEvent"])
	}
	if event == "" {
		event = headers.Get("X-Event-Key")
	}
	event = strings.ToLower(event)
	deleted := strings.Contains(event, "removed") || strings.Contains(event, "trashed") || strings.Contains(event, "deleted")
	fields := []string{"page", "blog", "content", "attachment"}
	if strings.HasPrefix(event, "attachment") {
		// Attachment events may name the page it hangs on too: that page
		// did not change.
		fields = []string{"attachment"}
	}
	for _, field := range fields {
		if obj[field] == nil {
			continue
		}
		var c struct {
			ID   flexString `json:"id"`
			Type string     `json:"contentType"`
		}
		if json.Unmarshal(obj[field], &c) != nil || c.ID == "" {
			continue
		}
		id := string(c.ID)
		// Webhooks give attachment ids as bare numbers; the REST APIs,
		// and so Sync, prefix them with "att".
		if (field == "attachment" || c.Type == "attachment") && isPageID(id) {
			id = "att" + id
		}
		if deleted {
			n.Deleted = append(n.Deleted, id)
		} else {
			n.Changed = append(n.Changed, id)
		}
		ok = true
	}
	return ok, nil
}

func str(raw json.RawMessage) string {
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func dedupe(ids []string) []string {
	var out []string
	for _, id := range ids {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
