package docsuite_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/docindex/docindex/connectors/docsuite"
	"github.com/docindex/docindex/plugins/connector"
)

func TestDescribe(t *testing.T) {
	d, err := docsuite.New().Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Type != "docsuite" || d.Version == "" || d.DisplayName == "" {
		t.Errorf("description %+v", d)
	}
	if d.Has(connector.CapSchedule) {
		t.Error("docsuite sources sync on demand and by notifications: no schedule capability")
	}
	if !d.Has(connector.CapIncremental) || !d.Has(connector.CapACL) {
		t.Errorf("capabilities %v, want incremental and acl", d.Capabilities)
	}

	var schema struct {
		Type       string                    `json:"type"`
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(d.ConfigSchema, &schema); err != nil {
		t.Fatalf("schema: %v", err)
	}
	// The schema's keys are exactly the config's JSON keys.
	var keys []string
	rt := reflect.TypeOf(docsuite.Config{})
	for i := range rt.NumField() {
		keys = append(keys, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
	}
	var props []string
	for k, p := range schema.Properties {
		props = append(props, k)
		if desc, _ := p["description"].(string); len(desc) < 20 {
			t.Errorf("property %s has no real description", k)
		}
	}
	sort.Strings(keys)
	sort.Strings(props)
	if !slices.Equal(keys, props) {
		t.Errorf("schema properties %v, config keys %v", props, keys)
	}
	for _, k := range []string{"flavor", "baseUrl", "spaces", "namespaces", "username", "apiToken", "webhookSecret", "includeAttachments"} {
		if !slices.Contains(props, k) {
			t.Errorf("the issue's key %s is missing", k)
		}
	}
	if !slices.Equal(schema.Required, []string{"flavor", "baseUrl"}) {
		t.Errorf("required %v", schema.Required)
	}
	secrets, err := connector.SecretFields(d.ConfigSchema)
	if err != nil || !slices.Equal(secrets, []string{"/apiToken", "/webhookSecret"}) {
		t.Errorf("secret fields %v (%v), want /apiToken and /webhookSecret", secrets, err)
	}
	if _, ok := schema.Properties["namespaces"]["default"]; !ok {
		t.Error("namespaces has no default")
	}
	if schema.Properties["includeAttachments"]["default"] != false {
		t.Error("includeAttachments has no default false")
	}
}

func TestValidate(t *testing.T) {
	c := docsuite.New()
	good := []string{
		`{"flavor":"confluence","baseUrl":"https://example.atlassian.net","username":"me@example.com","apiToken":"t","spaces":["DOCS","~jdoe"],"includeAttachments":true}`,
		`{"flavor":"confluence","baseUrl":"https://wiki.example.com/confluence","apiToken":"personal-access-token"}`,
		`{"flavor":"confluence","baseUrl":"https://wiki.example.com","deployment":"cloud","username":"me@example.com","apiToken":"t"}`,
		`{"flavor":"confluence","baseUrl":"http://127.0.0.1:8090"}`,
		`{"flavor":"mediawiki","baseUrl":"https://wiki.example.org/w"}`,
		`{"flavor":"mediawiki","baseUrl":"https://wiki.example.org/w/api.php","namespaces":[0,4,12],"username":"Bot@app","apiToken":"p","webhookSecret":"0123456789abcdef"}`,
	}
	for _, cfg := range good {
		if err := c.Validate(context.Background(), json.RawMessage(cfg)); err != nil {
			t.Errorf("Validate(%s): %v", cfg, err)
		}
	}
	bad := []struct {
		cfg, field, says string
	}{
		{`{"baseUrl":"https://x.example"}`, "/flavor", "required"},
		{`{"flavor":"sharepoint","baseUrl":"https://x.example"}`, "/flavor", "sharepoint"},
		{`{"flavor":"mediawiki"}`, "/baseUrl", "required"},
		{`{"flavor":"mediawiki","baseUrl":"wiki.example.org/w"}`, "/baseUrl", "absolute"},
		{`{"flavor":"mediawiki","baseUrl":"ftp://wiki.example.org/w"}`, "/baseUrl", "http"},
		{`{"flavor":"mediawiki","baseUrl":"https://bot:hunter2hunter2@wiki.example.org/w"}`, "/baseUrl", "credentials"},
		{`{"flavor":"mediawiki","baseUrl":"https://wiki.example.org/w?x=1"}`, "/baseUrl", "query"},
		{`{"flavor":"mediawiki","baseUrl":"https://w.example","spaces":["DOCS"]}`, "/spaces", "confluence"},
		{`{"flavor":"mediawiki","baseUrl":"https://w.example","deployment":"cloud"}`, "/deployment", "confluence"},
		{`{"flavor":"mediawiki","baseUrl":"https://w.example","includeAttachments":true}`, "/includeAttachments", "confluence"},
		{`{"flavor":"mediawiki","baseUrl":"https://w.example","namespaces":[0,-1]}`, "/namespaces/1", "virtual"},
		{`{"flavor":"mediawiki","baseUrl":"https://w.example","namespaces":[0,0]}`, "/namespaces/1", "twice"},
		{`{"flavor":"mediawiki","baseUrl":"https://w.example","namespaces":["main"]}`, "/namespaces", "int"},
		{`{"flavor":"confluence","baseUrl":"https://c.example","namespaces":[0]}`, "/namespaces", "mediawiki"},
		{`{"flavor":"confluence","baseUrl":"https://c.example","spaces":["A B"]}`, "/spaces/0", "space key"},
		{`{"flavor":"confluence","baseUrl":"https://c.example","spaces":["A","A"]}`, "/spaces/1", "twice"},
		{`{"flavor":"confluence","baseUrl":"https://c.example","deployment":"server"}`, "/deployment", "datacenter"},
		{`{"flavor":"confluence","baseUrl":"https://x.atlassian.net","apiToken":"tok-only-token"}`, "/username", "e-mail"},
		{`{"flavor":"confluence","baseUrl":"https://c.example","username":"me"}`, "/apiToken", "required"},
		{`{"flavor":"confluence","baseUrl":"https://c.example","webhookSecret":"short-secret"}`, "/webhookSecret", "16"},
		{`{"flavor":"confluence","baseUrl":"https://c.example","spaceKeys":["A"]}`, "", "spaceKeys"},
		{`[]`, "", "JSON object"},
	}
	for _, b := range bad {
		err := c.Validate(context.Background(), json.RawMessage(b.cfg))
		var ve *connector.ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, connector.ErrInvalidConfig) {
			t.Errorf("Validate(%s): %v, want a validation error", b.cfg, err)
			continue
		}
		found := false
		for _, p := range ve.Problems {
			if p.Field == b.field && strings.Contains(p.Message, b.says) {
				found = true
			}
		}
		if !found {
			t.Errorf("Validate(%s): %v, want a problem at %q saying %q", b.cfg, err, b.field, b.says)
		}
		// Messages never repeat secret values.
		for _, secret := range []string{"hunter2hunter2", "tok-only-token", "short-secret"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Validate(%s) repeats a secret: %v", b.cfg, err)
			}
		}
	}
}

func TestParseConfigDefaults(t *testing.T) {
	cases := []struct {
		in   string
		want docsuite.Config
	}{
		{`{"flavor":"mediawiki","baseUrl":"https://w.example/w/api.php"}`,
			docsuite.Config{Flavor: "mediawiki", BaseURL: "https://w.example/w", Namespaces: []int{0}}},
		{`{"flavor":"confluence","baseUrl":"https://x.atlassian.net/wiki/","username":"u@x","apiToken":"t"}`,
			docsuite.Config{Flavor: "confluence", BaseURL: "https://x.atlassian.net/wiki", Deployment: "cloud", Username: "u@x", APIToken: "t"}},
		{`{"flavor":"confluence","baseUrl":"https://wiki.example.com/confluence"}`,
			docsuite.Config{Flavor: "confluence", BaseURL: "https://wiki.example.com/confluence", Deployment: "datacenter"}},
	}
	for _, c := range cases {
		got, err := docsuite.ParseConfig(json.RawMessage(c.in))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseConfig(%s) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}
