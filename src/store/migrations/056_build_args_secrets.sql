-- Build-time values (issue 29): plain build arguments (`buildah --build-arg`) and build secrets (`buildah
-- --secret`), kept apart from a pod's runtime env. Secrets are one sealed JSON document (AES-GCM under the
-- platform key, column name as associated data); the API shows only `build_secrets_meta` (fingerprints).
ALTER TABLE builds
  ADD COLUMN build_args jsonb NOT NULL DEFAULT '{}',
  ADD COLUMN build_secrets_sealed text,
  ADD COLUMN build_secrets_meta jsonb NOT NULL DEFAULT '{}';
