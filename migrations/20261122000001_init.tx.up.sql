-- Library-owned tables live in their own schema so a host application's tables never collide.
-- The schema itself is created by docindex.Migrate before the migrations table.

CREATE TABLE docindex.users (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email       text NOT NULL,
    subject     text,
    name        text NOT NULL DEFAULT '',
    -- Global admin: set from the JWT roles claim on every sign-in, or by `docindex apikey create --admin`.
    is_admin    boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
-- Shares match users by e-mail, case-insensitively: one user per address.
CREATE UNIQUE INDEX users_email_key ON docindex.users (lower(email));

CREATE TABLE docindex.collections (
    id                             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                           text NOT NULL UNIQUE,
    display_name                   text NOT NULL,
    description                    text NOT NULL DEFAULT '',
    created_by                     uuid REFERENCES docindex.users (id) ON DELETE SET NULL,
    owner_id                       uuid NOT NULL REFERENCES docindex.users (id),
    visibility                     text NOT NULL DEFAULT 'private'
                                   CHECK (visibility IN ('private', 'shared', 'public')),
    search_language                text NOT NULL DEFAULT 'english',
    type                           text NOT NULL DEFAULT 'rag' CHECK (type IN ('rag', 'dataset')),
    chunking_strategy              text NOT NULL DEFAULT 'recursive'
                                   CHECK (chunking_strategy IN ('recursive', 'markdown', 'semantic')),
    chunk_size                     integer,
    chunk_overlap                  integer,
    dataset_mode                   text NOT NULL DEFAULT '' CHECK (dataset_mode IN ('', 'imported', 'live')),
    live_schema                    jsonb,
    last_ingested_at               timestamptz,
    structured_extraction_enabled  boolean NOT NULL DEFAULT false,
    extraction_instructions        text NOT NULL DEFAULT '',
    extraction_max_pages           integer,
    image_descriptions_enabled     boolean NOT NULL DEFAULT false,
    image_description_mode         text NOT NULL DEFAULT '' CHECK (image_description_mode IN ('', 'all', 'empty_pages')),
    embedding_model                text NOT NULL DEFAULT '',
    embedding_dimensions           integer,
    created_at                     timestamptz NOT NULL DEFAULT now(),
    updated_at                     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX collections_owner_idx ON docindex.collections (owner_id);

CREATE TABLE docindex.shares (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    collection_id   uuid NOT NULL REFERENCES docindex.collections (id) ON DELETE CASCADE,
    type            text NOT NULL CHECK (type IN ('user', 'directory_group', 'public')),
    target          text NOT NULL DEFAULT '',
    target_display  text NOT NULL DEFAULT '',
    role            text NOT NULL CHECK (role IN ('viewer', 'admin')),
    created_at      timestamptz NOT NULL DEFAULT now()
);
-- One share per target: user targets compare case-insensitively (they are e-mail addresses).
CREATE UNIQUE INDEX shares_target_key ON docindex.shares (collection_id, type, lower(target));
CREATE INDEX shares_target_idx ON docindex.shares (type, lower(target));

CREATE TABLE docindex.api_keys (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id       uuid NOT NULL REFERENCES docindex.users (id) ON DELETE CASCADE,
    client_name   text NOT NULL,
    key_hash      bytea NOT NULL UNIQUE,
    permissions   text[] NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz,
    revoked_at    timestamptz
);

CREATE TABLE docindex.files (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    collection_id    uuid REFERENCES docindex.collections (id) ON DELETE SET NULL,
    name             text NOT NULL,
    blob_path        text NOT NULL,
    size_bytes       bigint,
    content_type     text,
    status           text NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'indexed', 'indexed_with_warning', 'failed')),
    source_id        uuid,
    external_id      text,
    version          text NOT NULL DEFAULT '',
    content_hash     text NOT NULL DEFAULT '',
    source_metadata  jsonb NOT NULL DEFAULT '{}',
    page_count       integer,
    warning          text NOT NULL DEFAULT '',
    created_by       uuid REFERENCES docindex.users (id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    last_indexed_at  timestamptz
);
CREATE INDEX files_collection_idx ON docindex.files (collection_id, created_at DESC);
CREATE UNIQUE INDEX files_source_item_key ON docindex.files (source_id, external_id) WHERE source_id IS NOT NULL;

-- One global FIFO queue. seq orders it; a job's file id is kept without a foreign key so a job
-- outlives its file (the job detail then omits the file).
CREATE TABLE docindex.jobs (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq            bigint GENERATED ALWAYS AS IDENTITY,
    file_id        uuid,
    collection_id  uuid,
    type           text NOT NULL CHECK (type IN ('index', 'reindex', 'delete', 'rebuild_fts')),
    status         text NOT NULL DEFAULT 'queued'
                   CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    retry_count    integer NOT NULL DEFAULT 0,
    max_retries    integer NOT NULL DEFAULT 3,
    error          text,
    run_after      timestamptz NOT NULL DEFAULT now(),
    worker_id      text,
    heartbeat_at   timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    started_at     timestamptz,
    completed_at   timestamptz
);
CREATE INDEX jobs_queued_idx ON docindex.jobs (seq) WHERE status = 'queued';
CREATE INDEX jobs_running_idx ON docindex.jobs (heartbeat_at) WHERE status = 'running';
CREATE INDEX jobs_file_idx ON docindex.jobs (file_id, created_at DESC);
CREATE INDEX jobs_collection_idx ON docindex.jobs (collection_id);
CREATE INDEX jobs_status_idx ON docindex.jobs (status);

-- Leadership for singleton background work (scheduler, rescuer): one row per name with an
-- expiring lease, taken and renewed through the database clock.
CREATE TABLE docindex.leaders (
    name        text PRIMARY KEY,
    holder      text NOT NULL,
    expires_at  timestamptz NOT NULL
);
