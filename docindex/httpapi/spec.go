package httpapi

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/uptrace/bunrouter"
)

// OpenAPI is the interface description, openapi.yaml, as written by hand next to this file.
//
//go:embed openapi.yaml
var OpenAPI []byte

// specJSON converts the embedded YAML once, on first request.
var specJSON = sync.OnceValues(func() ([]byte, error) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
})

func serveSpec(w http.ResponseWriter, _ bunrouter.Request) error {
	b, err := specJSON()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(b)
	return err
}

func serveSpecYAML(w http.ResponseWriter, _ bunrouter.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	_, err := w.Write(OpenAPI)
	return err
}
