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

-- An object write in one round trip (src/buckets/gateway/repo.ts putObject): under the key's lock (an advisory
-- lock, since the row may not exist yet; the multipart completion takes the same one) and a share lock on the
-- live bucket row (a bucket deleted meanwhile makes it 'bucket_gone'), checks the write conditions against the
-- current object (If-None-Match: * -> p_if_none_match; If-Match -> p_if_match, the accepted ETags), writes the row
-- and the size delta. Outcome: ok | bucket_gone | precondition_failed | no_such_key; replaced: the blobs of the
-- object it replaced (the caller removes them after the commit).
CREATE FUNCTION bucket_put_object(
  p_bucket uuid, p_key text, p_size bigint, p_etag text, p_blobs uuid[], p_blob_sizes bigint[], p_content_type text,
  p_headers jsonb, p_metadata jsonb, p_checksums jsonb, p_if_none_match boolean, p_if_match text[]
) RETURNS TABLE (outcome text, replaced uuid[], modified timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
  cur_size bigint;
  cur_etag text;
  cur_blobs uuid[];
  existed boolean;
  at timestamptz;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_bucket::text || '/' || p_key, 7312022));
  PERFORM 1 FROM buckets WHERE id = p_bucket AND deleted_at IS NULL FOR SHARE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'bucket_gone'::text, NULL::uuid[], NULL::timestamptz;
    RETURN;
  END IF;
  SELECT o.size, o.etag, o.blobs INTO cur_size, cur_etag, cur_blobs
    FROM bucket_objects o WHERE o.bucket_id = p_bucket AND o.key = p_key FOR UPDATE;
  existed := FOUND;
  IF existed AND p_if_none_match THEN
    RETURN QUERY SELECT 'precondition_failed'::text, NULL::uuid[], NULL::timestamptz;
    RETURN;
  END IF;
  IF p_if_match IS NOT NULL AND NOT existed THEN
    RETURN QUERY SELECT 'no_such_key'::text, NULL::uuid[], NULL::timestamptz;
    RETURN;
  END IF;
  IF p_if_match IS NOT NULL AND NOT (cur_etag = ANY (p_if_match)) THEN
    RETURN QUERY SELECT 'precondition_failed'::text, NULL::uuid[], NULL::timestamptz;
    RETURN;
  END IF;
  INSERT INTO bucket_objects AS o (bucket_id, key, size, etag, blobs, blob_sizes, content_type, headers, metadata, checksums)
  VALUES (p_bucket, p_key, p_size, p_etag, p_blobs, p_blob_sizes, p_content_type, p_headers, p_metadata, p_checksums)
  ON CONFLICT (bucket_id, key) DO UPDATE SET size = EXCLUDED.size, etag = EXCLUDED.etag, blobs = EXCLUDED.blobs,
    blob_sizes = EXCLUDED.blob_sizes, content_type = EXCLUDED.content_type, headers = EXCLUDED.headers,
    metadata = EXCLUDED.metadata, checksums = EXCLUDED.checksums, last_modified = now()
  RETURNING o.last_modified INTO at;
  INSERT INTO bucket_usage_deltas (bucket_id, bytes, objects)
  VALUES (p_bucket, p_size - COALESCE(cur_size, 0), CASE WHEN existed THEN 0 ELSE 1 END);
  RETURN QUERY SELECT 'ok'::text, cur_blobs, at;
END;
$$;
