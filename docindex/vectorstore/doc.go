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
//	tsv        tsvector GENERATED ALWAYS AS (to_tsvector('<language>'::regconfig, text)) STORED
//	                                  -- GIN index
//
// The embedding dimension is fixed per table (the collection's model decides it). Up to 2000
// dimensions the HNSW index is on the column with vector_cosine_ops; from 2001 to 4000, the limit
// of pgvector's HNSW for vector, the index is on embedding::halfvec(dims) with halfvec_cosine_ops
// and Search casts the same way, so models such as 3072-dimensional ones still get an index.
//
// # Why the tsvector is a stored generated column
//
// The language is part of the column's expression, so every row of a table is always indexed with
// one language, whoever writes it: the server computes the tsvector while COPY streams rows in, so
// Replace sends only the text and stays on the fast COPY path (a plain column would need either a
// trigger or an INSERT ... SELECT from a staging table, both slower). RebuildFTS drops the column
// and adds it again with the new language in one ALTER TABLE inside one transaction: the switch is
// atomic, a concurrent Replace waits for it and then writes with the new language, and no row can
// be left in the old one. The price is that the ALTER rewrites the table and rebuilds its indexes
// (HNSW included) under an ACCESS EXCLUSIVE lock, so searches of that collection wait while it
// runs. A language change is a rare administrative act run as a background job, and a bulk index
// build is far cheaper than the alternative of an UPDATE of every row, which would insert each row
// again into every index, HNSW included.
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
