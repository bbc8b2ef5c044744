-- Deferred vector indexing. Replace writes a file's chunks into the collection's delta table
-- (chunks_<id>_delta, no HNSW index) and records the file here in the same transaction; a
-- background merge moves them into the HNSW-indexed chunk table and removes the row. Search reads
-- both tables, so chunks are searchable from the moment Replace commits. `chunks` is the number of
-- delta rows of the file: their sum per collection bounds the delta (past the bound, Replace
-- writes into the indexed table directly). No foreign key: the vectorstore package keeps its
-- tables independent of the collections table, and Drop removes a collection's rows.
CREATE TABLE docindex.chunk_pending (
    collection_id uuid NOT NULL,
    file_id       uuid NOT NULL,
    chunks        integer NOT NULL,
    queued_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (collection_id, file_id)
);
CREATE INDEX chunk_pending_queued_idx ON docindex.chunk_pending (queued_at);

-- Chunk tables made before this migration get their delta table, as Provision now makes it, and
-- their tsv becomes a plain column: rows now arrive from the delta with the tsvector its generated
-- column computed, so the indexed table no longer computes it a second time.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'docindex' AND c.relkind = 'r' AND c.relname ~ '^chunks_[0-9a-f]{32}$'
    LOOP
        EXECUTE format('CREATE TABLE IF NOT EXISTS docindex.%I (LIKE docindex.%I INCLUDING DEFAULTS INCLUDING GENERATED)
            WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
                  autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 1000)', t || '_delta', t);
        EXECUTE format('ALTER TABLE docindex.%I ADD PRIMARY KEY (id)', t || '_delta');
        EXECUTE format('CREATE INDEX %I ON docindex.%I (file_id)', t || '_delta_file_idx', t || '_delta');
        EXECUTE format('CREATE INDEX %I ON docindex.%I USING gin (tsv)', t || '_delta_tsv_idx', t || '_delta');
        IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = format('docindex.%I', t)::regclass
                   AND attname = 'tsv' AND attgenerated = 's') THEN
            EXECUTE format('ALTER TABLE docindex.%I ALTER COLUMN tsv DROP EXPRESSION', t);
        END IF;
    END LOOP;
END $$;
