// Package vectorstore keeps the chunk table of each rag collection: it provisions and drops the
// table, replaces the chunks of one file, rebuilds the full-text vectors after a language change,
// reports the table's size, and searches it by vector, by full text, or both fused.
//
// # Table layout
//
// Each collection owns docindex.chunks_<32 hex digits of its id> (see Table):
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
// reciprocal rank fusion (k = 60). It runs in a read-only transaction that raises hnsw.ef_search to
// the candidate pool and, when a filter (FileIDs, Visible) is present, turns on pgvector 0.8's
// iterative index scans (hnsw.iterative_scan = relaxed_order), so a filter that rejects most
// neighbours still yields TopK results instead of the few that survived among the first
// ef_search. pgvector 0.8 or later is required.
package vectorstore
