-- Buckets (src/buckets): S3-compatible buckets, their access keys, and the metadata of the objects the gateway
-- stores. Bytes live in the storage backend as blobs named by uuid; a blob is part of an object only once a
-- row here names it, so an upload that never committed its row leaves nothing visible (the sweep removes it).

CREATE TABLE buckets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- S3 naming rules; unique platform-wide among live buckets (the S3 namespace is one)
  name text NOT NULL,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  -- with the unfolded rows of bucket_usage_deltas: the bytes and objects stored
  size_bytes bigint NOT NULL DEFAULT 0,
  object_count bigint NOT NULL DEFAULT 0,
  -- the id the bucket's request counts are metered under (usage records are unique per resource id and interval)
  requests_meter_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE UNIQUE INDEX buckets_name_live ON buckets (name) WHERE deleted_at IS NULL;
CREATE INDEX buckets_owner ON buckets (owner_kind, owner_id, created_at) WHERE deleted_at IS NULL;

-- S3 access keys: the secret is sealed (SigV4 needs it in plain on the server), shown once at creation.
CREATE TABLE bucket_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  access_key_id text NOT NULL UNIQUE,
  secret_sealed text NOT NULL,
  name text NOT NULL,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org', 'partner_child')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  permission text NOT NULL CHECK (permission IN ('read', 'read_write')),
  -- null: every bucket of the owner, present and future
  bucket_ids uuid[],
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX bucket_keys_owner ON bucket_keys (owner_kind, owner_id, created_at);

-- One row per object (no versioning): its blobs in order (one for a plain PUT, the parts of a multipart upload).
CREATE TABLE bucket_objects (
  bucket_id uuid NOT NULL REFERENCES buckets (id),
  key text COLLATE "C" NOT NULL,
  size bigint NOT NULL CHECK (size >= 0),
  etag text NOT NULL,
  blobs uuid[] NOT NULL,
  blob_sizes bigint[] NOT NULL,
  content_type text NOT NULL,
  -- content-encoding, cache-control, content-disposition, content-language, expires
  headers jsonb NOT NULL DEFAULT '{}',
  -- x-amz-meta-*, names lowercase without the prefix
  metadata jsonb NOT NULL DEFAULT '{}',
  -- {"crc32": "base64", ...}; a multipart object's are composite ("...-N")
  checksums jsonb NOT NULL DEFAULT '{}',
  last_modified timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (bucket_id, key)
);
-- which blobs rows still name, for the sweep of orphan blobs
CREATE INDEX bucket_objects_blobs ON bucket_objects USING gin (blobs);

CREATE TABLE bucket_uploads (
  id uuid PRIMARY KEY,
  bucket_id uuid NOT NULL REFERENCES buckets (id),
  key text COLLATE "C" NOT NULL,
  content_type text NOT NULL,
  headers jsonb NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  checksum_algorithm text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bucket_uploads_bucket ON bucket_uploads (bucket_id, key);

CREATE TABLE bucket_upload_parts (
  upload_id uuid NOT NULL REFERENCES bucket_uploads (id) ON DELETE CASCADE,
  part_number integer NOT NULL CHECK (part_number BETWEEN 1 AND 10000),
  bucket_id uuid NOT NULL,
  blob uuid NOT NULL,
  size bigint NOT NULL,
  etag text NOT NULL,
  checksums jsonb NOT NULL DEFAULT '{}',
  last_modified timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (upload_id, part_number)
);
CREATE INDEX bucket_upload_parts_blob ON bucket_upload_parts (blob);
CREATE INDEX bucket_upload_parts_bucket ON bucket_upload_parts (bucket_id);

-- Changes of a bucket's size and count, appended by each object change (no hot row for writers of one bucket to
-- queue on) and folded into buckets.size_bytes / object_count every minute; readers add what is not folded yet.
CREATE TABLE bucket_usage_deltas (
  id bigserial PRIMARY KEY,
  bucket_id uuid NOT NULL,
  bytes bigint NOT NULL,
  objects bigint NOT NULL
);
CREATE INDEX bucket_usage_deltas_bucket ON bucket_usage_deltas (bucket_id);

-- Requests the gateways counted, flushed every few seconds; metering claims them for one interval (metered_for).
CREATE TABLE bucket_requests (
  id bigserial PRIMARY KEY,
  bucket_id uuid NOT NULL REFERENCES buckets (id),
  requests bigint NOT NULL CHECK (requests > 0),
  counted_at timestamptz NOT NULL DEFAULT now(),
  metered_for timestamptz
);
CREATE INDEX bucket_requests_pending ON bucket_requests (bucket_id) WHERE metered_for IS NULL;
CREATE INDEX bucket_requests_metered ON bucket_requests (bucket_id, metered_for);
