package vectorstore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/docindex/docindex/docindex/vectorstore"
)

func normalize(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(n))
	}
	return out
}

func search(t *testing.T, s *vectorstore.Store, col uuid.UUID, q vectorstore.Query) []vectorstore.Result {
	t.Helper()
	res, err := s.Search(context.Background(), col, q)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(res); i++ {
		if res[i].Score > res[i-1].Score {
			t.Fatalf("results not best first: %v before %v", res[i-1].Score, res[i].Score)
		}
	}
	return res
}

func texts(res []vectorstore.Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.Text
	}
	return out
}

func testSearchVector(t *testing.T, opts []vectorstore.Option) {
	ctx := context.Background()
	s, _, col := provisioned(t, 4, "english", opts...)
	err := s.Replace(ctx, col, uuid.New(), []vectorstore.Chunk{
		{Ordinal: 0, Text: "far", Embedding: []float32{0, 0, 0, 1}},
		{Ordinal: 1, Text: "nearest", Embedding: []float32{1, 0.05, 0, 0}},
		{Ordinal: 2, Text: "second", Embedding: []float32{1, 1, 0, 0}},
		{Ordinal: 3, Text: "third", Embedding: []float32{0.2, 1, 0, 0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := search(t, s, col, vectorstore.Query{Mode: vectorstore.ModeVector, Vector: []float32{1, 0, 0, 0}})
	if got, want := texts(res), []string{"nearest", "second", "third", "far"}; !slices.Equal(got, want) {
		t.Fatalf("vector ranking %v, want %v", got, want)
	}
	// Scores are cosine similarities.
	if math.Abs(res[0].Score-1/math.Sqrt(1+0.05*0.05)) > 1e-4 || math.Abs(res[3].Score) > 1e-6 {
		t.Fatalf("scores %v, %v; want cosine similarities", res[0].Score, res[3].Score)
	}
}

func testSearchFulltextLanguage(t *testing.T, opts []vectorstore.Option) {
	ctx := context.Background()
	s, _, col := provisioned(t, 4, "english", opts...)
	file := uuid.New()
	err := s.Replace(ctx, col, file, []vectorstore.Chunk{
		{Ordinal: 0, Text: "The runners were running quickly", Embedding: unit(4, 0)},
		{Ordinal: 1, Text: "Die Häuser sind sehr schön", Embedding: unit(4, 1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ft := func(text, lang string) []string {
		return texts(search(t, s, col, vectorstore.Query{Mode: vectorstore.ModeFulltext, Text: text, Language: lang}))
	}
	// English stemming: "run" finds "running".
	if got := ft("run", ""); !slices.Equal(got, []string{"The runners were running quickly"}) {
		t.Fatalf("english search for run: %v", got)
	}
	// "Haus" matches "Häuser" only with German stemming, which the table does not use yet.
	if got := ft("Haus", "english"); len(got) != 0 {
		t.Fatalf("english search for Haus found %v", got)
	}
	if err := s.RebuildFTS(ctx, col, "german"); err != nil {
		t.Fatal(err)
	}
	if got := ft("Haus", "german"); !slices.Equal(got, []string{"Die Häuser sind sehr schön"}) {
		t.Fatalf("german search for Haus after RebuildFTS: %v", got)
	}
	// Rows written after the rebuild are German too, and the indexes survived the rewrite.
	if err := s.Replace(ctx, col, uuid.New(), []vectorstore.Chunk{{Text: "Die Bäume wachsen", Embedding: unit(4, 2)}}); err != nil {
		t.Fatal(err)
	}
	if got := ft("Baum", "german"); !slices.Equal(got, []string{"Die Bäume wachsen"}) {
		t.Fatalf("german search for Baum: %v", got)
	}
	if got := texts(search(t, s, col, vectorstore.Query{Mode: vectorstore.ModeVector, Vector: unit(4, 1), TopK: 1})); !slices.Equal(got, []string{"Die Häuser sind sehr schön"}) {
		t.Fatalf("vector search after RebuildFTS: %v", got)
	}
	// Quoted phrases and exclusions of websearch syntax.
	if got := ft(`"sehr schön" -Baum`, "german"); !slices.Equal(got, []string{"Die Häuser sind sehr schön"}) {
		t.Fatalf("websearch query: %v", got)
	}
	if err := s.RebuildFTS(ctx, uuid.New(), "german"); err != nil {
		t.Fatalf("RebuildFTS without a table: %v", err)
	}
}

// A chunk ranked second by both rankings beats the chunks ranked first by only one of them.
func testSearchHybrid(t *testing.T, opts []vectorstore.Option) {
	ctx := context.Background()
	s, _, col := provisioned(t, 8, "english", opts...)
	q := unit(8, 0)
	mix := func(j int, w float32) []float32 {
		v := unit(8, 0)
		v[j] = w
		return normalize(v)
	}
	cs := []vectorstore.Chunk{
		{Text: "both: solar panel efficiency improves in summer", Embedding: mix(1, 0.3)},
		{Text: "vector: the quarterly report on budgets", Embedding: q},
		{Text: "text: solar panel efficiency, solar panel efficiency and solar panel efficiency", Embedding: unit(8, 7)},
	}
	for i := range 10 { // between the vector ranking's second and the text champion
		cs = append(cs, vectorstore.Chunk{Text: fmt.Sprint("filler about gardening ", i), Embedding: mix(2+i%5, 0.5+float32(i)*0.1)})
	}
	for i := range cs {
		cs[i].Ordinal = i
	}
	if err := s.Replace(ctx, col, uuid.New(), cs); err != nil {
		t.Fatal(err)
	}
	text := "solar panel efficiency"
	first := func(mode string) string {
		res := search(t, s, col, vectorstore.Query{Mode: mode, Text: text, Vector: q, TopK: 3})
		if len(res) == 0 {
			t.Fatalf("%s: no results", mode)
		}
		return res[0].Text[:4]
	}
	if got := first(vectorstore.ModeVector); got != "vect" {
		t.Fatalf("vector mode ranks %q first", got)
	}
	if got := first(vectorstore.ModeFulltext); got != "text" {
		t.Fatalf("fulltext mode ranks %q first", got)
	}
	res := search(t, s, col, vectorstore.Query{Text: text, Vector: q, TopK: 3}) // hybrid is the default
	if got := texts(res); got[0][:4] != "both" || len(got) != 3 {
		t.Fatalf("hybrid ranking %v, want the chunk strong in both first", got)
	}
	if math.Abs(res[0].Score-2.0/62) > 1e-9 {
		t.Fatalf("hybrid score %v, want 2/62 (second in both rankings)", res[0].Score)
	}
	// Hybrid with only one side runs that side.
	if got := texts(search(t, s, col, vectorstore.Query{Vector: q, TopK: 1})); got[0][:4] != "vect" {
		t.Fatalf("hybrid without text: %v", got)
	}
	if got := texts(search(t, s, col, vectorstore.Query{Text: text, TopK: 1})); got[0][:4] != "text" {
		t.Fatalf("hybrid without vector: %v", got)
	}
	if res := search(t, s, col, vectorstore.Query{}); len(res) != 0 {
		t.Fatalf("empty query found %d", len(res))
	}
}

func testSearchFilters(t *testing.T, opts []vectorstore.Option) {
	ctx := context.Background()
	s, _, col := provisioned(t, 4, "english", opts...)
	files := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	teams := []string{"red", "blue"}
	acls := [][]string{nil, {"alice", "bob"}, {"carol"}}
	for fi, f := range files {
		var cs []vectorstore.Chunk
		for i := range 6 {
			meta := map[string]any{"team": teams[i%2], "file": fi}
			if acl := acls[i%3]; acl != nil {
				meta["acl"] = acl
			}
			cs = append(cs, vectorstore.Chunk{Ordinal: i, Text: "shared words about filters", Metadata: meta, Embedding: unit(4, i%4)})
		}
		if err := s.Replace(ctx, col, f, cs); err != nil {
			t.Fatal(err)
		}
	}
	base := vectorstore.Query{Text: "filters", Vector: unit(4, 0), TopK: 100}
	for _, mode := range []string{vectorstore.ModeHybrid, vectorstore.ModeVector, vectorstore.ModeFulltext} {
		t.Run(mode, func(t *testing.T) {
			q := base
			q.Mode = mode
			if n := len(search(t, s, col, q)); n != 18 {
				t.Fatalf("unfiltered: %d results, want 18", n)
			}
			q.FileIDs = []uuid.UUID{files[1], files[2]}
			res := search(t, s, col, q)
			if len(res) != 12 {
				t.Fatalf("two files: %d results, want 12", len(res))
			}
			for _, r := range res {
				if r.FileID == files[0] {
					t.Fatalf("result of an excluded file: %+v", r)
				}
			}
			q.FileIDs = nil
			q.Visible, q.VisibleArgs = "k.metadata->>'team' = ?", []any{"red"}
			res = search(t, s, col, q)
			if len(res) != 9 {
				t.Fatalf("red only: %d results, want 9", len(res))
			}
			for _, r := range res {
				if r.Metadata["team"] != "red" {
					t.Fatalf("hidden chunk returned: %+v", r.Metadata)
				}
			}
			// An access list: chunks without one, or whose list names the caller.
			q.Visible = `NOT k.metadata \? 'acl' OR k.metadata->'acl' \?| ?`
			q.VisibleArgs = []any{pgdialect.Array([]string{"alice", "dave"})}
			q.FileIDs = []uuid.UUID{files[0]}
			res = search(t, s, col, q)
			if len(res) != 4 {
				t.Fatalf("acl alice in file 0: %d results, want 4", len(res))
			}
			for _, r := range res {
				acl, _ := r.Metadata["acl"].([]any)
				if r.FileID != files[0] || (acl != nil && !slices.Contains(acl, any("alice"))) {
					t.Fatalf("chunk not visible to alice: %+v", r)
				}
			}
			// Escapes behave the same without arguments.
			q.Visible, q.VisibleArgs, q.FileIDs = `k.metadata \? 'acl'`, nil, nil
			if n := len(search(t, s, col, q)); n != 12 {
				t.Fatalf("chunks with an acl: %d, want 12", n)
			}
		})
	}
}

// randomChunks returns n deterministic chunks of dimension d; every 30th is "red".
func randomChunks(n, d int, seed uint64) []vectorstore.Chunk {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]vectorstore.Chunk, n)
	for i := range out {
		v := make([]float32, d)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		team := "blue"
		if i%30 == 0 {
			team = "red"
		}
		out[i] = vectorstore.Chunk{Ordinal: i, Text: fmt.Sprint("random chunk ", i), Metadata: map[string]any{"team": team}, Embedding: normalize(v)}
	}
	return out
}

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot
}

// A filter that rejects 49 of 50 neighbours still yields TopK results (iterative index scans),
// and they are the nearest visible ones. A table this small would be read sequentially, so the
// test database turns sequential scans off, as the planner does by itself on a large table: the
// HNSW index scan then stops after ef_search candidates, about two of them visible, unless the
// scan goes on.
func testSearchFilteredVectorFillsTopK(t *testing.T, opts []vectorstore.Option) {
	ctx := context.Background()
	s, db, col := provisioned(t, 8, "english", opts...)
	all := randomChunks(1500, 8, 7)
	for i := range all {
		if i%50 == 0 {
			all[i].Metadata["team"] = "red"
		} else {
			all[i].Metadata["team"] = "blue"
		}
	}
	if err := s.Replace(ctx, col, uuid.New(), all); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := db.QueryRowContext(ctx, "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ALTER DATABASE ? SET enable_seqscan = off", bun.Ident(name)); err != nil {
		t.Fatal(err)
	}
	db.SetMaxIdleConns(0) // new sessions read the setting
	db.SetMaxIdleConns(2)
	query := normalize(randomChunks(1, 8, 99)[0].Embedding)
	var red []vectorstore.Chunk
	for _, c := range all {
		if c.Metadata["team"] == "red" {
			red = append(red, c)
		}
	}
	sort.Slice(red, func(i, j int) bool { return cosine(red[i].Embedding, query) > cosine(red[j].Embedding, query) })
	want := map[int]bool{}
	for _, c := range red[:10] {
		want[c.Ordinal] = true
	}
	for _, mode := range []string{vectorstore.ModeVector, vectorstore.ModeHybrid} {
		res := search(t, s, col, vectorstore.Query{Mode: mode, Vector: query, Text: "random", TopK: 10,
			Visible: "k.metadata->>'team' <> ?", VisibleArgs: []any{"blue"}})
		if len(res) != 10 {
			t.Fatalf("%s: %d results, want 10", mode, len(res))
		}
		if mode != vectorstore.ModeVector {
			continue
		}
		hits := 0
		for _, r := range res {
			if r.Metadata["team"] != "red" {
				t.Fatalf("hidden chunk returned: %+v", r)
			}
			if want[r.Ordinal] {
				hits++
			}
		}
		if hits < 9 {
			t.Fatalf("only %d of the 10 nearest visible chunks found", hits)
		}
	}
}

func testSearchTopK(t *testing.T, opts []vectorstore.Option) {
	ctx := context.Background()
	s, _, col := provisioned(t, 8, "english", opts...)
	if err := s.Replace(ctx, col, uuid.New(), randomChunks(150, 8, 3)); err != nil {
		t.Fatal(err)
	}
	q := randomChunks(1, 8, 4)[0].Embedding
	for _, mode := range []string{vectorstore.ModeHybrid, vectorstore.ModeVector, vectorstore.ModeFulltext} {
		for _, c := range []struct{ topK, want int }{{0, vectorstore.DefaultTopK}, {5, 5}, {1, 1}, {500, vectorstore.MaxTopK}} {
			res := search(t, s, col, vectorstore.Query{Mode: mode, Text: "random chunk", Vector: q, TopK: c.topK})
			if len(res) != c.want {
				t.Errorf("%s with TopK %d: %d results, want %d", mode, c.topK, len(res), c.want)
			}
		}
	}
}

func TestSearchNoTable(t *testing.T) {
	t.Parallel()
	s, _, _ := provisioned(t, 4, "english")
	for _, mode := range []string{vectorstore.ModeHybrid, vectorstore.ModeVector, vectorstore.ModeFulltext} {
		res, err := s.Search(context.Background(), uuid.New(), vectorstore.Query{Mode: mode, Text: "x", Vector: unit(4, 0),
			FileIDs: []uuid.UUID{uuid.New()}})
		if err != nil || len(res) != 0 {
			t.Fatalf("%s on a collection without a table: %v, %v", mode, res, err)
		}
	}
}

func testSearchErrors(t *testing.T, opts []vectorstore.Option) {
	ctx := context.Background()
	s, _, col := provisioned(t, 4, "english", opts...)
	if err := s.Replace(ctx, col, uuid.New(), chunks(4, "x")); err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string]vectorstore.Query{
		"vector mode without a vector": {Mode: vectorstore.ModeVector, Text: "x"},
		"unknown mode":                 {Mode: "fuzzy", Text: "x"},
		"wrong dimension":              {Mode: vectorstore.ModeVector, Vector: unit(3, 0)},
		"unknown language":             {Mode: vectorstore.ModeFulltext, Text: "x", Language: "klingon"},
	} {
		if _, err := s.Search(ctx, col, q); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSearch runs every search test twice: with the chunks in the collection's delta table, where
// Replace puts them and Search ranks them exactly, and in the HNSW-indexed table, where the merge
// moves them (a store with deferred indexing off writes them there at once).
func TestSearch(t *testing.T) {
	t.Parallel()
	tests := map[string]func(*testing.T, []vectorstore.Option){
		"Vector":                  testSearchVector,
		"FulltextLanguage":        testSearchFulltextLanguage,
		"Hybrid":                  testSearchHybrid,
		"Filters":                 testSearchFilters,
		"FilteredVectorFillsTopK": testSearchFilteredVectorFillsTopK,
		"TopK":                    testSearchTopK,
		"Errors":                  testSearchErrors,
	}
	for name, test := range tests {
		for mode, opts := range map[string][]vectorstore.Option{
			"delta":   nil,
			"indexed": {vectorstore.WithMaxPending(0)},
		} {
			t.Run(name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				test(t, opts)
			})
		}
	}
}
