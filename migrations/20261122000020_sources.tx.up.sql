-- Data sources feed collections. Secret config fields are sealed with the server's key into
-- `secrets` and never stored in `config`.
CREATE TABLE docindex.sources (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name           text NOT NULL,
    source_type    text NOT NULL,
    config         jsonb NOT NULL DEFAULT '{}',
    secrets        bytea,
    enabled        boolean NOT NULL DEFAULT true,
    sync_schedule  text CHECK (sync_schedule IN ('hourly', 'daily', 'weekly')),
    collection_id  uuid REFERENCES docindex.collections (id) ON DELETE SET NULL,
    created_by     uuid REFERENCES docindex.users (id) ON DELETE SET NULL,
    cursor         bytea,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    last_sync_at   timestamptz
);
CREATE INDEX sources_collection_idx ON docindex.sources (collection_id);

-- One row per sync run. A run is 'running' while a process works on it and renews heartbeat_at;
-- at most one run of a source is running at a time (the partial unique index), which is what
-- keeps two servers from syncing the same source together.
CREATE TABLE docindex.sync_runs (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    source_id     uuid NOT NULL REFERENCES docindex.sources (id) ON DELETE CASCADE,
    trigger       text NOT NULL CHECK (trigger IN ('manual', 'schedule', 'event')),
    status        text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'failed')),
    holder        text NOT NULL,
    full_listing  boolean NOT NULL DEFAULT false,
    seen          integer NOT NULL DEFAULT 0,
    created       integer NOT NULL DEFAULT 0,
    updated       integer NOT NULL DEFAULT 0,
    deleted       integer NOT NULL DEFAULT 0,
    skipped       integer NOT NULL DEFAULT 0,
    failed        integer NOT NULL DEFAULT 0,
    errors        jsonb NOT NULL DEFAULT '[]',
    error         text,
    started_at    timestamptz NOT NULL DEFAULT now(),
    heartbeat_at  timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz
);
CREATE UNIQUE INDEX sync_runs_one_running ON docindex.sync_runs (source_id) WHERE status = 'running';
CREATE INDEX sync_runs_source_idx ON docindex.sync_runs (source_id, started_at DESC);

ALTER TABLE docindex.files
    ADD CONSTRAINT files_source_fk FOREIGN KEY (source_id) REFERENCES docindex.sources (id) ON DELETE SET NULL;
