package images_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/docindex/docindex/docindex/images"
	"github.com/docindex/docindex/plugins/llms/openai"
	"github.com/docindex/docindex/plugins/llms/openai/openaitest"
)

func TestVisionDescriberThroughOpenAIShapes(t *testing.T) {
	srv := openaitest.New(t, openaitest.WithModel("see-1", true), openaitest.WithModel("text-1", false),
		openaitest.WithAnswer(func(r *openaitest.Request) openaitest.Answer {
			if len(r.Messages) == 1 && len(r.Messages[0].Images) == 1 && strings.Contains(r.Messages[0].Text, "scanned page") {
				return openaitest.Answer{Content: "WAREHOUSE INVENTORY 2024"}
			}
			return openaitest.Answer{Content: "a chart of sales"}
		}))
	p := openai.New(openai.WithBaseURL(srv.BaseURL()), openai.WithAPIKey(srv.Key()),
		openai.WithModels(openai.Model{ID: "see-1", Vision: true}, openai.Model{ID: "text-1"}))
	ctx := context.Background()
	model, err := images.VisionModel(ctx, p)
	if err != nil || model != "see-1" {
		t.Fatalf("vision model %q %v", model, err)
	}
	v := images.NewVision(p, model)
	png := encode(t, "png")
	got, err := v.Describe(ctx, images.Image{Kind: images.KindPage, Page: 2, ContentType: "image/png", Data: png})
	if err != nil || got != "WAREHOUSE INVENTORY 2024" {
		t.Fatalf("page: %q %v", got, err)
	}
	got, err = v.Describe(ctx, images.Image{Kind: images.KindEmbedded, ContentType: "image/jpeg", Data: encode(t, "jpeg")})
	if err != nil || got != "a chart of sales" {
		t.Fatalf("figure: %q %v", got, err)
	}
	req := srv.Requests()[0]
	if req.Model != "see-1" || len(req.Messages[0].Images) != 1 || req.Messages[0].Images[0].MediaType != "image/png" {
		t.Fatalf("request %+v", req)
	}
	if _, err := v.Describe(ctx, images.Image{Kind: images.KindFile, ContentType: "image/tiff", Data: []byte("II*\x00")}); err == nil {
		t.Fatal("a TIFF went to the vision model")
	}
}

func encode(t *testing.T, format string) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for x := range 64 {
		img.Set(x, x, color.Black)
	}
	var b bytes.Buffer
	var err error
	if format == "png" {
		err = png.Encode(&b, img)
	} else {
		err = jpeg.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
