package docindex

import (
	"context"
	"fmt"
)

// EmbeddingModel is an entry of the embedding-model catalog.
type EmbeddingModel struct {
	ID         string `json:"id"`
	Provider   string `json:"provider"`
	Dimensions int    `json:"dimensions"`
	Default    bool   `json:"default"`
}

// EmbeddingModels lists every model of every registered embedding provider; the server default
// (or, without one, the first model) is marked.
func (s *Service) EmbeddingModels(ctx context.Context) ([]EmbeddingModel, error) {
	out := []EmbeddingModel{}
	if s.embedders == nil {
		return out, nil
	}
	models, err := s.embedders.Models(ctx)
	if err != nil {
		return nil, fmt.Errorf("list embedding models: %w", err)
	}
	def := ""
	for _, want := range s.defaultModels {
		for _, m := range models {
			if want != "" && m.ID == want && def == "" {
				def = want
			}
		}
	}
	if def == "" && len(models) > 0 {
		def = models[0].ID
	}
	for _, m := range models {
		out = append(out, EmbeddingModel{ID: m.ID, Provider: m.Provider, Dimensions: m.Dimensions, Default: m.ID == def})
	}
	return out, nil
}
