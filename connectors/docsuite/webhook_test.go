package docsuite_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/docindex/docindex/connectors/docsuite"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

const hookSecret = "webhook-secret-0123456789"

func hookConfig(secret string) json.RawMessage {
	cfg := map[string]any{"flavor": "confluence", "baseUrl": "https://wiki.example.com", "username": "u", "apiToken": "t"}
	if secret != "" {
		cfg["webhookSecret"] = secret
	}
	raw, _ := json.Marshal(cfg)
	return raw
}

func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func TestParseEventAuthentication(t *testing.T) {
	body := `{"event":"page_updated","page":{"id":65549,"title":"Guide","spaceKey":"DOCS","version":3}}`
	cases := []struct {
		name    string
		secret  string
		headers http.Header
		want    error
	}{
		{"DataCenterSignature", hookSecret, http.Header{"X-Hub-Signature": {sign(hookSecret, body)}}, nil},
		{"GitHubStyleSignature", hookSecret, http.Header{"X-Hub-Signature-256": {sign(hookSecret, body)}}, nil},
		{"BareHexSignature", hookSecret, http.Header{"X-Hub-Signature": {strings.TrimPrefix(sign(hookSecret, body), "sha256=")}}, nil},
		{"SharedSecretHeader", hookSecret, http.Header{"X-Docindex-Webhook-Secret": {hookSecret}}, nil},
		{"WrongKey", hookSecret, http.Header{"X-Hub-Signature": {sign("another-secret-0123456789", body)}}, docsuite.ErrBadSignature},
		{"SignatureOfOtherBody", hookSecret, http.Header{"X-Hub-Signature": {sign(hookSecret, body+" ")}}, docsuite.ErrBadSignature},
		{"NotHex", hookSecret, http.Header{"X-Hub-Signature": {"sha256=zz"}}, docsuite.ErrBadSignature},
		{"WrongSharedSecret", hookSecret, http.Header{"X-Docindex-Webhook-Secret": {hookSecret + "x"}}, docsuite.ErrBadSignature},
		{"Unsigned", hookSecret, http.Header{}, docsuite.ErrBadSignature},
		{"NoSecretConfigured", "", http.Header{"X-Docindex-Webhook-Secret": {hookSecret}}, docsuite.ErrWebhookDisabled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := docsuite.ParseEvent(hookConfig(c.secret), c.headers, []byte(body))
			if c.want == nil {
				if err != nil || !slices.Equal(n.Changed, []string{"65549"}) || len(n.Deleted) != 0 {
					t.Errorf("ParseEvent = %+v, %v; want page 65549 changed", n, err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Errorf("ParseEvent: %v, want %v", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), hookSecret) {
				t.Errorf("error repeats the secret: %v", err)
			}
		})
	}
	if !errors.Is(docsuite.ErrBadSignature, plugins.ErrUnauthenticated) || !errors.Is(docsuite.ErrWebhookDisabled, plugins.ErrPermissionDenied) {
		t.Error("webhook errors do not wrap the plugins errors the host maps to statuses")
	}
	if _, err := docsuite.ParseEvent(json.RawMessage(`{"flavor":"x"}`), nil, nil); !errors.Is(err, connector.ErrInvalidConfig) {
		t.Errorf("ParseEvent with a bad configuration: %v", err)
	}
}

func TestParseEventPayloads(t *testing.T) {
	cases := []struct {
		name, body      string
		header          http.Header
		changed, delete []string
		err             error
	}{
		{name: "ConfluenceCloudPageCreated", body: `{"userAccountId":"557058:x","timestamp":1700000000000,"page":{"id":"98305","spaceKey":"DOCS","title":"New","contentType":"page","version":1},"webhookEvent":"page_created"}`, changed: []string{"98305"}},
		{name: "ConfluencePageTrashed", body: `{"event":"page_trashed","page":{"id":98305}}`, delete: []string{"98305"}},
		{name: "ConfluencePageRemoved", body: `{"event":"page_removed","page":{"id":98305}}`, delete: []string{"98305"}},
		{name: "ConfluenceEventInHeader", body: `{"page":{"id":98305}}`, header: http.Header{"X-Event-Key": {"page_removed"}}, delete: []string{"98305"}},
		{name: "ConfluencePageRestored", body: `{"event":"page_restored","page":{"id":98305}}`, changed: []string{"98305"}},
		{name: "ConfluenceAttachmentRemoved", body: `{"event":"attachment_removed","attachment":{"id":131073,"fileName":"a.pdf"},"page":{"id":98305}}`, delete: []string{"att131073"}},
		{name: "ConfluenceRestrictionsChanged", body: `{"event":"content_permissions_updated","content":{"id":"98305","contentType":"page"}}`, changed: []string{"98305"}},
		{name: "MediaWikiEventBusEdit", body: `{"$schema":"/mediawiki/page/change/1.1.0","page_change_kind":"edit","page":{"page_id":42,"page_title":"Alpha","namespace_id":0}}`, changed: []string{"42"}},
		{name: "MediaWikiEventBusDelete", body: `{"page_change_kind":"delete","page":{"page_id":42}}`, delete: []string{"42"}},
		{name: "MediaWikiLegacyDelete", body: `{"meta":{"stream":"mediawiki.page-delete"},"page_id":42,"page_title":"Alpha"}`, delete: []string{"42"}},
		{name: "Batch", body: `[{"page_change_kind":"edit","page":{"page_id":1}},{"page_change_kind":"edit","page":{"page_id":1}},{"page_change_kind":"delete","page":{"page_id":2}}]`, changed: []string{"1"}, delete: []string{"2"}},
		{name: "PlainList", body: `{"changed":["7",8],"deleted":["9","7"]}`, changed: []string{"8"}, delete: []string{"9", "7"}},
		{name: "SpaceEvent", body: `{"event":"space_created","space":{"key":"NEW"}}`, err: docsuite.ErrBadPayload},
		{name: "NotJSON", body: `page 7 changed`, err: docsuite.ErrBadPayload},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{"X-Hub-Signature": {sign(hookSecret, c.body)}}
			for k, v := range c.header {
				h[k] = v
			}
			n, err := docsuite.ParseEvent(hookConfig(hookSecret), h, []byte(c.body))
			if c.err != nil {
				if !errors.Is(err, c.err) || !errors.Is(err, plugins.ErrInvalidArgument) {
					t.Errorf("ParseEvent: %+v, %v; want %v", n, err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(n.Changed, c.changed) || !slices.Equal(n.Deleted, c.delete) {
				t.Errorf("ParseEvent = changed %v deleted %v (%v); want changed %v deleted %v", n.Changed, n.Deleted, err, c.changed, c.delete)
			}
			events := n.Events()
			if len(events) != len(n.Deleted) {
				t.Errorf("Events() = %v for deletions %v", events, n.Deleted)
			}
			for i, ev := range events {
				if ev.Kind != connector.EventDelete || ev.ID != n.Deleted[i] {
					t.Errorf("event %d: %+v", i, ev)
				}
			}
		})
	}
	big := strings.Repeat(" ", docsuite.MaxEventBody+1)
	if _, err := docsuite.ParseEvent(hookConfig(hookSecret), http.Header{"X-Hub-Signature": {sign(hookSecret, big)}}, []byte(big)); !errors.Is(err, plugins.ErrInvalidArgument) {
		t.Errorf("oversized notification: %v", err)
	}
}
