package docindex_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/docindextest"
)

var benchTable = dataset.Table{Columns: []dataset.Column{
	{Name: "id", Type: "integer", Primary: true},
	{Name: "name", Type: "text"},
	{Name: "qty", Type: "integer"},
	{Name: "price", Type: "numeric"},
	{Name: "active", Type: "boolean"},
	{Name: "created", Type: "timestamp"},
	{Name: "note", Type: "text"},
	{Name: "score", Type: "numeric"},
}}

// ingestBody makes n rows of 8 columns of all five types; every 20th row is invalid. Keys run
// from offset, so a second body overlapping the first updates half its keys.
func ingestBody(n, offset int, pad int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"rows": [`)
	note := strings.Repeat("x", pad)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		id := offset + i
		if i%20 == 19 {
			fmt.Fprintf(&b, `{"id": %d, "name": "bad", "qty": "many"}`, id)
			continue
		}
		fmt.Fprintf(&b, `{"id": %d, "name": "item %d", "qty": "%d", "price": "%d.%02d", "active": %t, "created": "2024-05-%02dT10:00:00Z", "note": "%s", "score": %d.5}`,
			id, id, i%100, i%1000, i%100, i%2 == 0, 1+i%28, note, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// BenchmarkIngest: 10,000 rows x 8 columns, 5% invalid, half the keys already present, through
// the service, against pgx CopyFrom of the same pre-validated rows into a staging table plus
// INSERT ... ON CONFLICT, in the same run.
func BenchmarkIngest(b *testing.B) {
	ctx := context.Background()
	db := docindextest.NewDB(b)
	svc, err := docindex.New(db, docindex.WithLogger(testLogger()))
	if err != nil {
		b.Fatal(err)
	}
	p := ownerPrincipal(b, svc)
	if _, err := svc.CreateCollection(ctx, p, docindex.CollectionInput{Name: "bench", Type: "dataset", DatasetMode: "live",
		Tables: dataset.Tables{"items": benchTable, "twin": benchTable}}); err != nil {
		b.Fatal(err)
	}
	cid := collectionID(b, svc, "bench")
	const n = 10_000
	seed := ingestBody(n, 0, 8)
	body := ingestBody(n, n/2, 8)

	// The baseline's rows: validated once, outside the timing.
	var rows [][]any
	if err := dataset.DecodeRows(bytes.NewReader(body), func(_ int, obj map[string]json.RawMessage) {
		if r, err := benchTable.RowObject(obj); err == nil {
			for j, c := range benchTable.Columns {
				if c.Type == "numeric" && r[j] != nil {
					var num pgtype.Numeric
					_ = num.Scan(r[j].(string))
					r[j] = num
				}
			}
			rows = append(rows, r)
		}
	}); err != nil {
		b.Fatal(err)
	}
	cols := []string{"id", "name", "qty", "price", "active", "created", "note", "score"}
	twin := pgx.Identifier{dataset.Schema(cid), "twin"}.Sanitize()
	baseline := func() time.Duration {
		conn, err := db.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		var d time.Duration
		err = conn.Raw(func(dc any) error {
			pc := dc.(*stdlib.Conn).Conn()
			start := time.Now()
			tx, err := pc.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx) //nolint:errcheck
			if _, err := tx.Exec(ctx, "CREATE TEMP TABLE stage ON COMMIT DROP AS SELECT "+strings.Join(cols, ",")+" FROM "+twin+" WITH NO DATA"); err != nil {
				return err
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"stage"}, cols, pgx.CopyFromRows(rows)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO "+twin+" ("+strings.Join(cols, ",")+") SELECT "+strings.Join(cols, ",")+
				" FROM stage ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, qty = EXCLUDED.qty, price = EXCLUDED.price,"+
				" active = EXCLUDED.active, created = EXCLUDED.created, note = EXCLUDED.note, score = EXCLUDED.score"); err != nil {
				return err
			}
			if err := tx.Commit(ctx); err != nil {
				return err
			}
			d = time.Since(start)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		return d
	}

	var ours, theirs time.Duration
	for range b.N {
		for _, tbl := range []string{"items", "twin"} {
			if _, err := db.ExecContext(ctx, "TRUNCATE "+pgx.Identifier{dataset.Schema(cid), tbl}.Sanitize()); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := svc.Ingest(ctx, p, "bench", "items", bytes.NewReader(seed)); err != nil {
			b.Fatal(err)
		}
		if _, err := svc.Ingest(ctx, p, "bench", "twin", bytes.NewReader(seed)); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		res, err := svc.Ingest(ctx, p, "bench", "items", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		ours += time.Since(start)
		if res.Rejected != n/20 {
			b.Fatalf("rejected %d, want %d", res.Rejected, n/20)
		}
		theirs += baseline()
	}
	oursRate := float64(n*b.N) / ours.Seconds()
	theirRate := float64(len(rows)*b.N) / theirs.Seconds()
	b.ReportMetric(oursRate, "ingest-rows/s")
	b.ReportMetric(theirRate, "copyfrom-rows/s")
	b.ReportMetric(oursRate/theirRate, "ratio")
}

// BenchmarkIngestMemory: peak heap growth of the process while it ingests a 64 MiB request,
// relative to the request's size (the target is at most 3x).
func BenchmarkIngestMemory(b *testing.B) {
	ctx := context.Background()
	svc, err := docindex.New(docindextest.NewDB(b), docindex.WithLogger(testLogger()))
	if err != nil {
		b.Fatal(err)
	}
	p := ownerPrincipal(b, svc)
	if _, err := svc.CreateCollection(ctx, p, docindex.CollectionInput{Name: "big", Type: "dataset", DatasetMode: "live",
		Tables: dataset.Tables{"items": benchTable}}); err != nil {
		b.Fatal(err)
	}
	// 10,000 rows padded to just under 64 MiB.
	body := ingestBody(10_000, 0, 6600)
	for len(body) > dataset.MaxBodyBytes {
		body = ingestBody(10_000, 0, 6600-(len(body)-dataset.MaxBodyBytes)/10_000-1)
	}
	size := len(body)
	for range b.N {
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		var peak atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
		res, err := svc.Ingest(ctx, p, "big", "items", bytes.NewReader(body))
		close(stop)
		<-done
		if err != nil {
			b.Fatal(err)
		}
		if res.Inserted+res.Rejected != 10_000 {
			b.Fatalf("result %+v", res)
		}
		growth := float64(peak.Load()) - float64(base.HeapInuse)
		b.ReportMetric(float64(size)/(1<<20), "request-MiB")
		b.ReportMetric(growth/(1<<20), "peak-heap-growth-MiB")
		b.ReportMetric(growth/float64(size), "ratio-to-request")
	}
}
