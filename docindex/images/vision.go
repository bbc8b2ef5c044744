package images

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/docindex/docindex/plugins/llm"
)

// visionTypes are the image types vision APIs take; others (TIFF, BMP) are refused before a call.
var visionTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// Vision describes images with a vision-capable language model.
type Vision struct {
	llm   llm.LLM
	model string
}

// NewVision returns a describer that asks model of l. The model must accept images.
func NewVision(l llm.LLM, model string) *Vision { return &Vision{llm: l, model: model} }

// Describe transcribes a page rendered from a scan, or describes a figure or an uploaded image,
// in words a search can match.
func (v *Vision) Describe(ctx context.Context, img Image) (string, error) {
	ct := img.ContentType
	if !visionTypes[ct] {
		return "", fmt.Errorf("vision models take PNG, JPEG, GIF or WebP, not %s", ct)
	}
	prompt := "Describe this image for a search index: what it shows, and every piece of text in it, verbatim. " +
		"Answer with the description only."
	if img.Kind == KindPage {
		prompt = "This is a scanned page. Transcribe all of its text in reading order, keeping headings and " +
			"lists; then describe any figure in one sentence. Answer with the transcription only."
	}
	res, err := v.llm.Complete(ctx, llm.Request{Model: v.model, MaxTokens: 2048, Messages: []llm.Message{
		{Role: "user", Content: prompt, Images: []llm.Image{{ContentType: ct, Data: img.Data}}},
	}})
	if err != nil {
		return "", fmt.Errorf("vision model %s: %w", v.model, err)
	}
	return strings.TrimSpace(res.Content), nil
}

// VisionModel returns the first vision-capable model l offers.
func VisionModel(ctx context.Context, l llm.LLM) (string, error) {
	models, err := l.Models(ctx)
	if err != nil {
		return "", err
	}
	for _, m := range models {
		if m.Vision {
			return m.ID, nil
		}
	}
	return "", errors.New("no vision model")
}
