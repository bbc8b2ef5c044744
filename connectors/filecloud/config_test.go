package filecloud_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/docindex/docindex/connectors/filecloud"
	"github.com/docindex/docindex/plugins/connector"
)

// invalidConfigs are configurations Validate refuses, for the conformance
// suite.
func invalidConfigs() []json.RawMessage {
	var out []json.RawMessage
	for _, tc := range badConfigs {
		out = append(out, json.RawMessage(tc.config))
	}
	return out
}

var badConfigs = []struct {
	config string
	field  string // the JSON Pointer of the problem
	says   string // part of its message
}{
	{`{}`, "/provider", "required"},
	{`{"provider":"ftp"}`, "/provider", `"webdav" or "s3"`},
	{`{"provider":"webdav"}`, "/url", "required"},
	{`{"provider":"webdav","url":"ftp://files.example.com/"}`, "/url", "http"},
	{`{"provider":"webdav","url":"files.example.com/dav"}`, "/url", "absolute"},
	{`{"provider":"webdav","url":"https://alice:hunter22secret@files.example.com/"}`, "/url", "credentials"},
	{`{"provider":"webdav","url":"https://files.example.com/?a=b"}`, "/url", "query"},
	{`{"provider":"webdav","url":"https://files.example.com/","root":"/a/../../etc"}`, "/root", ".."},
	{`{"provider":"webdav","url":"https://files.example.com/","bucket":"b"}`, "/bucket", "only for provider s3"},
	{`{"provider":"webdav","url":"https://files.example.com/","secretAccessKey":"k"}`, "/secretAccessKey", "only for provider s3"},
	{`{"provider":"webdav","url":"https://files.example.com/","pathStyle":true}`, "/pathStyle", "only for provider s3"},
	{`{"provider":"s3"}`, "/bucket", "required"},
	{`{"provider":"s3","bucket":"a/b"}`, "/bucket", "bucket name"},
	{`{"provider":"s3","bucket":"b","prefix":"/docs"}`, "/prefix", "leading slash"},
	{`{"provider":"s3","bucket":"b","accessKeyId":"AKIA"}`, "", "go together"},
	{`{"provider":"s3","bucket":"b","password":"pw"}`, "/password", "only for provider webdav"},
	{`{"provider":"s3","bucket":"b","root":"/x"}`, "/root", "only for provider webdav"},
	{`{"provider":"s3","bucket":"b","url":"s3.example.com"}`, "/url", "absolute"},
	{`{"provider":"s3","bucket":"b","include":["[a-"]}`, "/include/0", "syntax error"},
	{`{"provider":"s3","bucket":"b","exclude":["ok/*",""]}`, "/exclude/1", "empty pattern"},
	{`{"provider":"s3","bucket":"b","include":["a//b"]}`, "/include/0", "empty path segment"},
	{`{"provider":"s3","bucket":"b","include":"*.md"}`, "/include", "must be a []string"},
	{`{"provider":"s3","bucket":"b","colour":"red"}`, "", `unknown field "colour"`},
	{`{"provider":"s3","bucket":"b"} {}`, "", "trailing data"},
}

func TestValidateRefusesBadConfigs(t *testing.T) {
	c := filecloud.New()
	for _, tc := range badConfigs {
		err := c.Validate(context.Background(), json.RawMessage(tc.config))
		var ve *connector.ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, connector.ErrInvalidConfig) {
			t.Errorf("%s: %v; want a *connector.ValidationError", tc.config, err)
			continue
		}
		found := false
		for _, p := range ve.Problems {
			if p.Field == tc.field && strings.Contains(p.Message, tc.says) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: problems %+v; want one at %q saying %q", tc.config, ve.Problems, tc.field, tc.says)
		}
		if strings.Contains(err.Error(), "hunter22secret") {
			t.Errorf("%s: the error repeats the password: %v", tc.config, err)
		}
	}
}

func TestValidateAcceptsGoodConfigs(t *testing.T) {
	c := filecloud.New()
	for _, cfg := range []string{
		`{"provider":"webdav","url":"https://cloud.example.com/remote.php/dav/files/alice/"}`,
		`{"provider":"webdav","url":"http://127.0.0.1:8080","root":"Documents/Team","username":"alice","password":"pw",
		  "include":["**/*.md","reports/"],"exclude":["drafts","*.tmp"]}`,
		`{"provider":"s3","bucket":"docs"}`,
		`{"provider":"s3","bucket":"docs","url":"https://minio.example.com:9000","prefix":"team/","region":"eu-central-1",
		  "accessKeyId":"AKIA","secretAccessKey":"secret","pathStyle":false}`,
	} {
		if err := c.Validate(context.Background(), json.RawMessage(cfg)); err != nil {
			t.Errorf("%s: %v", cfg, err)
		}
	}
}

func TestDescribe(t *testing.T) {
	d, err := filecloud.New().Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Type != "filecloud" || !slices.Equal(d.Capabilities, []connector.Capability{connector.CapSchedule}) {
		t.Errorf("description %+v", d)
	}
	secrets, err := connector.SecretFields(d.ConfigSchema)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(secrets, []string{"/password", "/secretAccessKey"}) {
		t.Errorf("secret fields %q", secrets)
	}

	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	must(t, json.Unmarshal(d.ConfigSchema, &schema))
	// Every key of Config is in the schema and the other way round.
	var keys []string
	ct := reflect.TypeFor[filecloud.Config]()
	for i := range ct.NumField() {
		keys = append(keys, strings.Split(ct.Field(i).Tag.Get("json"), ",")[0])
	}
	slices.Sort(keys)
	var props []string
	for k, p := range schema.Properties {
		props = append(props, k)
		if s, _ := p["description"].(string); len(s) < 20 {
			t.Errorf("property %q has no useful description", k)
		}
	}
	slices.Sort(props)
	if !slices.Equal(keys, props) {
		t.Errorf("schema properties %q, Config keys %q", props, keys)
	}
	for k, want := range map[string]any{"root": "/", "region": filecloud.DefaultRegion, "prefix": ""} {
		if got := schema.Properties[k]["default"]; got != want {
			t.Errorf("default of %q: %v, want %v", k, got, want)
		}
	}
}

// TestSchemaAgreesWithValidate checks the schema with a JSON Schema
// validator, as a host may before calling Validate: it is valid JSON Schema,
// accepts good configurations and refuses the ones it can describe.
func TestSchemaAgreesWithValidate(t *testing.T) {
	d, _ := filecloud.New().Describe(context.Background())
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(d.ConfigSchema))
	must(t, err)
	comp := jsonschema.NewCompiler()
	must(t, comp.AddResource("filecloud.json", doc))
	sch, err := comp.Compile("filecloud.json")
	if err != nil {
		t.Fatalf("the config schema does not compile: %v", err)
	}
	check := func(cfg string) error {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(cfg))
		must(t, err)
		return sch.Validate(v)
	}
	for _, good := range []string{
		`{"provider":"webdav","url":"https://h/dav/","root":"/x","username":"u","password":"p","include":["*.md"]}`,
		`{"provider":"s3","bucket":"b","prefix":"p/","accessKeyId":"k","secretAccessKey":"s","pathStyle":true}`,
	} {
		if err := check(good); err != nil {
			t.Errorf("schema refuses %s: %v", good, err)
		}
	}
	for _, bad := range []string{`{}`, `{"provider":"ftp"}`, `{"provider":"webdav"}`, `{"provider":"s3"}`,
		`{"provider":"s3","bucket":"b","colour":"red"}`, `{"provider":"s3","bucket":"b","include":"*.md"}`} {
		if check(bad) == nil {
			t.Errorf("schema accepts %s", bad)
		}
		if filecloud.New().Validate(context.Background(), json.RawMessage(bad)) == nil {
			t.Errorf("Validate accepts %s", bad)
		}
	}
}
