// Package vectorstore keeps the chunk tables of each rag collection: it provisions and drops
// them, replaces the chunks of one file, merges new chunks into the vector index, rebuilds the
// full-text vectors after a language change, reports the tables' size, and searches them by
// vector, by full text, or both fused.
//
// # Table layout
//
// Each collection owns docindex.chunks_<32 hex digits of its id> (see Table), and a delta table
// of the same shape, Table + "_delta", with no HNSW index (see Deferred indexing):
//
//	id         uuid PRIMARY KEY DEFAULT gen_random_uuid()
//	file_id    uuid NOT NULL          -- btree index: Replace and DeleteFile work per file
//	ordinal    integer NOT NULL       -- position of the chunk in its file
//	text       text NOT NULL
//	pages      integer[]              -- page numbers where the extractor knew them, else NULL
//	metadata   jsonb NOT NULL         -- heading path, access lists, ...
//	embedding  vector(dims)           -- HNSW index, cosine distance
//	tsv        tsvector           -- GIN index; in the delta GENERATED ALWAYS AS
//	                                  -- (to_tsvector('<language>'::regconfig, text)) STORED
//
// The embedding dimension is fixed per table (the collection's model decides it). Up to 2000
// dimensions the HNSW index is on the column with vector_cosine_ops; from 2001 to 4000, the limit
// of pgvector's HNSW for vector, the index is on embedding::halfvec(dims) with halfvec_cosine_ops
// and Search casts the same way, so models such as 3072-dimensional ones still get an index.
//
// # Where the tsvector is computed
//
// Every row enters through the delta table, whose tsv is a stored generated column: the language
// is part of the column's expression, so the server computes the tsvector while COPY streams rows
// in and Replace stays on the fast COPY path (a plain column would need a trigger or an INSERT ...
// SELECT from a staging table, both slower). Rows move on to the indexed table (by the merge, or
// in Replace's own transaction when not deferred) with their tsvector, into a plain column, so
// to_tsvector, which costs about as much as the rest of a write, runs once per chunk. RebuildFTS
// switches both tables in one transaction: the delta's column is dropped and added again with the
// new language, the indexed table's is recomputed with ALTER COLUMN ... TYPE ... USING
// to_tsvector(new language, text). The switch is atomic, a concurrent Replace or merge waits for
// it, and no row can be left in the old language. The price is that both ALTERs rewrite their
// table and rebuild its indexes (HNSW included) under an ACCESS EXCLUSIVE lock, so searches of
// that collection wait while it runs. A language change is a rare administrative act run as a
// background job, and a bulk index build is far cheaper than the alternative of an UPDATE of
// every row, which would insert each row again into every index, HNSW included.
//
// # Search
//
// Search ranks by cosine distance through the HNSW index (ORDER BY embedding <=> q LIMIT n), by
// ts_rank_cd over tsv @@ websearch_to_tsquery(language, text), or fuses both rankings with
// reciprocal rank fusion (k = 60). It runs in a read-only transaction that sets hnsw.ef_search to
// twice the rows asked of the index, at least 100 (pgvector's default of 40 gave a recall@10 of
// 0.84 on 100k chunks of 256 dimensions, 100 gave 0.98), and, when a filter (FileIDs, Visible) is
// present, turns on pgvector 0.8's iterative index scans (hnsw.iterative_scan = relaxed_order), so
// a filter that rejects most neighbours still yields TopK results instead of the few that
// survived among the first ef_search candidates. The scan gives up after hnsw.max_scan_tuples
// index tuples (20,000 by default), so a filter that hides nearly all of a very large collection
// may still return fewer. pgvector 0.8 or later is required.
//
// # Deferred indexing
//
// Inserting a row into an HNSW graph is most of the cost of a write: BenchmarkChunkWrite (100k
// chunks of 256 dimensions in the table, 50 files of 40 chunks) measured Replace at about 0.06 of
// the speed of one COPY of the same rows into an unindexed twin when every row went into the
// graph, and about 0.75 without the HNSW index. So Replace writes into the delta table, which has
// the primary key, file_id and GIN indexes but no vector index, and records the file in
// docindex.chunk_pending in the same transaction. Merge, run in the background by Run, moves a
// file's rows into the indexed table (keeping their ids) and removes its entry, one file per
// transaction. The graph insert is still paid, by the merge, but no indexing job waits for it, and
// a burst of uploads is indexed at the speed of COPY while the merge catches up.
//
// Building a graph in bulk costs a fraction of inserting into it row by row, so when a
// collection's delta holds at least as many chunks as its indexed table (and at least
// DefaultBulkMerge, see WithBulkMerge), as after the first upload into a collection, Run drops the
// HNSW index, moves the pending files without graph inserts, and builds the index again with
// CREATE INDEX CONCURRENTLY; writes and searches go on meanwhile, the indexed table being scanned
// exactly until the index is ready. A session advisory lock per collection keeps two processes
// from rebuilding at once, and every Run round repairs a table whose index is missing or invalid
// (a rebuild whose process died).
//
// Search reads both tables: the vector ranking takes the n nearest from the HNSW index and the n
// nearest from the delta by an exact scan, and orders the union; the full-text ranking does the
// same through both GIN indexes. Chunks are searchable as soon as Replace commits, and a chunk
// keeps its id and rank across the merge. The exact scan is why the delta is bounded
// (WithMaxPending, DefaultMaxPending chunks per collection): past the bound Replace writes into
// the indexed table itself, so under a write rate the merge cannot follow, writes slow to the
// speed of the graph insert instead of searches slowing without end.
//
// Replace, DeleteFile and the merge take the same transaction-scoped advisory lock on
// (collection, file), so a merge never interleaves with a change of the same file; Replace and
// DeleteFile also delete from the delta before the indexed table, the order that finds every row
// of a concurrent merge under READ COMMITTED even without the lock.
package vectorstore
