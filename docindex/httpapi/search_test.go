package httpapi_test

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/vectorstore"
	"github.com/docindex/docindex/docindex/worker"
	"github.com/docindex/docindex/plugins/embedders/openai"
)

type searchHit struct {
	ChunkID  string         `json:"chunkId"`
	FileID   string         `json:"fileId"`
	FileName string         `json:"fileName"`
	Text     string         `json:"text"`
	Score    float64        `json:"score"`
	Ordinal  int            `json:"ordinal"`
	Metadata map[string]any `json:"metadata"`
}

func search(t *testing.T, s *docindextest.Server, token, collectionID string, body map[string]any) []searchHit {
	t.Helper()
	r := s.Do("POST", "/api/collections/"+collectionID+"/search", token, body)
	wantStatus(t, r, http.StatusOK)
	var res struct {
		Results []searchHit `json:"results"`
	}
	r.JSON(t, &res)
	for i := 1; i < len(res.Results); i++ {
		if res.Results[i].Score > res.Results[i-1].Score {
			t.Errorf("results not best first: %v then %v", res.Results[i-1].Score, res.Results[i].Score)
		}
	}
	return res.Results
}

// indexedCollection uploads a text, a Markdown and an HTML file into a new collection (with
// the given chunking strategy) and waits until all are indexed. It returns the collection id
// and the file ids by format.
func indexedCollection(t *testing.T, s *docindextest.Server, token, name, strategy string) (string, map[string]string) {
	t.Helper()
	cid := createCollection(t, s, token, map[string]any{"name": name, "chunkingStrategy": strategy})["id"].(string)
	files := map[string]string{}
	var jobs []string
	for format, doc := range map[string]struct{ name, ctype, content string }{
		"text":     {"coast.txt", "text/plain", textDoc},
		"markdown": {"orchard.md", "text/markdown", markdownDoc},
		"html":     {"volcanoes.html", "text/html", htmlDoc},
	} {
		f, j := upload(t, s, token, cid, doc.name, doc.ctype, doc.content)
		files[format] = f["id"].(string)
		jobs = append(jobs, j)
	}
	stop := s.StartWorkers(nil)
	defer stop()
	for _, j := range jobs {
		if job := waitJob(t, s, token, j); job["status"] != "completed" {
			t.Fatalf("indexing job %v", job)
		}
	}
	for format, id := range files {
		if f, _ := getFile(t, s, token, id); f["status"] != "indexed" {
			t.Fatalf("%s file not indexed: %v", format, f)
		}
	}
	return cid, files
}

// TestSearchFindsSentences: a sentence of each uploaded file is found, first, in every mode.
func TestSearchFindsSentences(t *testing.T) {
	s := newIndexServer(t)
	own := s.Token(owner)
	for _, strategy := range []string{"recursive", "markdown"} {
		t.Run(strategy, func(t *testing.T) {
			cid, files := indexedCollection(t, s, own, "found_"+strategy, strategy)
			names := map[string]string{"text": "coast.txt", "markdown": "orchard.md", "html": "volcanoes.html"}
			for format, sentence := range map[string]string{"text": textSentence, "markdown": markdownSentence, "html": htmlSentence} {
				for _, mode := range []string{"hybrid", "vector", "fulltext"} {
					hits := search(t, s, own, cid, map[string]any{"query": sentence, "mode": mode})
					if len(hits) == 0 {
						t.Errorf("%s/%s: nothing found", format, mode)
						continue
					}
					top := hits[0]
					if top.FileID != files[format] || top.FileName != names[format] || !strings.Contains(top.Text, sentence) ||
						top.Score <= 0 || top.Ordinal < 0 || top.ChunkID == "" || top.Metadata == nil {
						t.Errorf("%s/%s: top hit %+v", format, mode, top)
					}
					if mode == "fulltext" && len(hits) != 1 {
						t.Errorf("fulltext: all words of one sentence matched %d chunks", len(hits))
					}
				}
			}
			// The default mode is hybrid; hybrid scores are reciprocal rank fusion sums.
			hits := search(t, s, own, cid, map[string]any{"query": "lava cools into hexagons"})
			if len(hits) == 0 || hits[0].FileID != files["html"] || hits[0].Score > 2.0/61 {
				t.Errorf("default mode: %+v", hits)
			}
			// HTML navigation and footers are not indexed: only the main content.
			if hits := search(t, s, own, cid, map[string]any{"query": "Copyright", "mode": "fulltext"}); len(hits) != 0 {
				t.Errorf("page chrome indexed: %+v", hits)
			}
			if strategy == "markdown" {
				hits := search(t, s, own, cid, map[string]any{"query": markdownSentence, "mode": "fulltext"})
				headings, _ := hits[0].Metadata["headings"].([]any)
				if !slices.Contains(headings, any("Pruning")) {
					t.Errorf("markdown chunk metadata %v", hits[0].Metadata)
				}
			}
			// fileIds restricts the search.
			hits = search(t, s, own, cid, map[string]any{"query": textSentence, "fileIds": []string{files["html"]}, "topK": 5})
			for _, h := range hits {
				if h.FileID != files["html"] {
					t.Errorf("hit outside fileIds: %+v", h)
				}
			}
			if hits := search(t, s, own, cid, map[string]any{"query": textSentence, "mode": "fulltext", "fileIds": []string{files["markdown"]}}); len(hits) != 0 {
				t.Errorf("fulltext outside fileIds: %+v", hits)
			}
			if hits := search(t, s, own, cid, map[string]any{"query": "ships storm lava apple", "mode": "vector", "topK": 1}); len(hits) != 1 {
				t.Errorf("topK 1: %d hits", len(hits))
			}
		})
	}
}

func TestSearchRequests(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "asked")
	empty := createCollection(t, s, tok["owner"], map[string]any{"name": "empty"})["id"].(string)
	dataset := createCollection(t, s, tok["owner"], map[string]any{"name": "sheet", "type": "dataset"})["id"].(string)
	f, j := upload(t, s, tok["owner"], cid, "coast.txt", "text/plain", textDoc)
	stop := s.StartWorkers(nil)
	waitJob(t, s, tok["owner"], j)
	stop()

	path := "/api/collections/" + cid + "/search"
	for name, tc := range map[string]struct {
		path   string
		token  string
		body   any
		status int
	}{
		"no query":          {path, tok["owner"], map[string]any{"mode": "hybrid"}, 400},
		"blank query":       {path, tok["owner"], map[string]any{"query": "   "}, 400},
		"topK over 100":     {path, tok["owner"], map[string]any{"query": "ships", "topK": 101}, 400},
		"negative topK":     {path, tok["owner"], map[string]any{"query": "ships", "topK": -1}, 400},
		"topK not a number": {path, tok["owner"], map[string]any{"query": "ships", "topK": "ten"}, 400},
		"bad mode":          {path, tok["owner"], map[string]any{"query": "ships", "mode": "semantic"}, 400},
		"bad file id":       {path, tok["owner"], map[string]any{"query": "ships", "fileIds": []string{"x"}}, 400},
		"malformed body":    {path, tok["owner"], "{", 400},
		"no body":           {path, tok["owner"], nil, 400},
		"dataset":           {"/api/collections/" + dataset + "/search", tok["owner"], map[string]any{"query": "ships"}, 400},
		"malformed id":      {"/api/collections/xyz/search", tok["owner"], map[string]any{"query": "ships"}, 400},
		"unknown":           {"/api/collections/" + uuid.NewString() + "/search", tok["owner"], map[string]any{"query": "ships"}, 404},
		"outsider":          {path, tok["outsider"], map[string]any{"query": "ships"}, 403},
		"no token":          {path, "", map[string]any{"query": "ships"}, 401},
		"too large":         {path, tok["owner"], map[string]any{"query": strings.Repeat("ship ", 300000)}, 413},
	} {
		t.Run(name, func(t *testing.T) { wantStatus(t, s.Do("POST", tc.path, tc.token, tc.body), tc.status) })
	}
	// Every role may search, a read-only key too.
	for _, caller := range []string{"owner", "shared admin", "viewer", "global admin", "read-only key"} {
		hits := search(t, s, tok[caller], cid, map[string]any{"query": "lighthouse keeper", "topK": 100})
		if len(hits) == 0 || hits[0].FileID != f["id"] {
			t.Errorf("%s: %+v", caller, hits)
		}
	}
	if hits := search(t, s, tok["owner"], empty, map[string]any{"query": "lighthouse"}); len(hits) != 0 {
		t.Errorf("a collection without files found %+v", hits)
	}
	if hits := search(t, s, tok["owner"], cid, map[string]any{"query": "zeppelin", "mode": "fulltext"}); len(hits) != 0 {
		t.Errorf("fulltext found a word no file holds: %+v", hits)
	}
	// A deleted file is no longer found.
	wantStatus(t, s.Do("DELETE", "/files/"+f["id"].(string), tok["owner"], nil), http.StatusOK)
	for _, mode := range []string{"hybrid", "vector", "fulltext"} {
		if hits := search(t, s, tok["owner"], cid, map[string]any{"query": "lighthouse keeper", "mode": mode}); len(hits) != 0 {
			t.Errorf("%s: a deleted file was found: %+v", mode, hits)
		}
	}
}

// TestSearchAcrossTheMerge: search answers the same chunks, with the same ids, while the chunks wait
// in the delta table and after the merge moved them into the HNSW index, row by row or by a
// rebuild of the index.
func TestSearchAcrossTheMerge(t *testing.T) {
	for name, bulk := range map[string]int{"rows": 0, "rebuild": 1} {
		t.Run(name, func(t *testing.T) {
			s := newIndexServer(t, docindex.WithVectorStoreOptions(vectorstore.WithBulkMerge(bulk)))
			own := s.Token(owner)
			ctx := context.Background()
			cid := createCollection(t, s, own, map[string]any{"name": "merge_" + name})["id"].(string)
			var jobs []string
			for _, doc := range []struct{ name, ctype, content string }{
				{"coast.txt", "text/plain", textDoc}, {"orchard.md", "text/markdown", markdownDoc}, {"volcanoes.html", "text/html", htmlDoc},
			} {
				_, j := upload(t, s, own, cid, doc.name, doc.ctype, doc.content)
				jobs = append(jobs, j)
			}
			// Workers without the merge, so that every chunk is still in the delta.
			poolCtx, stopPool := context.WithCancel(ctx)
			poolDone := make(chan error, 1)
			go func() {
				poolDone <- worker.New(s.Svc.Queue(), s.Svc, worker.WithPoll(50*time.Millisecond)).Run(poolCtx)
			}()
			for _, j := range jobs {
				if job := waitJob(t, s, own, j); job["status"] != "completed" {
					t.Fatalf("indexing job %v", job)
				}
			}
			stopPool()
			if err := <-poolDone; err != nil {
				t.Fatal(err)
			}
			var unmerged int
			if err := s.DB.QueryRowContext(ctx, "SELECT count(*) FROM docindex."+vectorstore.DeltaTable(uuid.MustParse(cid))).Scan(&unmerged); err != nil || unmerged == 0 {
				t.Fatalf("%d chunks in the delta after indexing (%v), want all of them", unmerged, err)
			}
			queries := []map[string]any{}
			for _, sentence := range []string{textSentence, markdownSentence, htmlSentence} {
				for _, mode := range []string{"hybrid", "vector", "fulltext"} {
					queries = append(queries, map[string]any{"query": sentence, "mode": mode, "topK": 5})
				}
			}
			ids := func() [][]string {
				var out [][]string
				for _, q := range queries {
					var hits []string
					for _, h := range search(t, s, own, cid, q) {
						hits = append(hits, h.ChunkID)
					}
					out = append(out, hits)
				}
				return out
			}
			before := ids()
			stop := s.StartWorkers(nil) // with the merge
			deadline := time.Now().Add(30 * time.Second)
			for {
				var pending int
				var valid bool
				if err := s.DB.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM docindex.chunk_pending WHERE collection_id = ?), "+
					"coalesce((SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(?)), false)",
					cid, "docindex."+vectorstore.Table(uuid.MustParse(cid))+"_embedding_idx").Scan(&pending, &valid); err != nil {
					t.Fatal(err)
				}
				if pending == 0 && valid {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("not merged after 30s: %d files pending, index valid %v", pending, valid)
				}
				time.Sleep(20 * time.Millisecond)
			}
			stop()
			var delta int
			if err := s.DB.QueryRowContext(ctx, "SELECT count(*) FROM docindex."+vectorstore.DeltaTable(uuid.MustParse(cid))).Scan(&delta); err != nil || delta != 0 {
				t.Fatalf("%d rows left in the delta (%v)", delta, err)
			}
			if after := ids(); !slices.EqualFunc(after, before, slices.Equal) {
				t.Fatalf("results changed across the merge:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// closedURL is the base URL of a loopback port where nothing listens (it was just released).
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// TestSearchEmbedderDown: with the embedding provider unreachable, a search that needs the query
// embedded answers 503 with a clear error, and full-text search still works.
func TestSearchEmbedderDown(t *testing.T) {
	down := openai.New(openai.WithBaseURL(closedURL(t)+"/v1"), openai.WithAPIKey("sk-test"),
		openai.WithRetries(1, 10*time.Millisecond, 10*time.Millisecond),
		openai.WithModels(openai.Model{ID: "remote-embed", Dimensions: 8}))
	s := newIndexServer(t, docindex.WithEmbedders(down))
	own := s.Token(owner)
	cid := createCollection(t, s, own, map[string]any{"name": "down", "embeddingModel": "remote-embed"})["id"].(string)
	for _, mode := range []string{"hybrid", "vector"} {
		r := s.Do("POST", "/api/collections/"+cid+"/search", own, map[string]any{"query": "anything", "mode": mode})
		wantStatus(t, r, http.StatusServiceUnavailable)
		if !strings.Contains(string(r.Body), "remote-embed did not answer") {
			t.Errorf("%s: error %s", mode, r.Body)
		}
	}
	if hits := search(t, s, own, cid, map[string]any{"query": "anything", "mode": "fulltext"}); len(hits) != 0 {
		t.Fatalf("fulltext on an empty collection: %v", hits)
	}
}
