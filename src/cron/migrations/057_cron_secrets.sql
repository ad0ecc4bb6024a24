-- Cron jobs' secrets (issue 29). secret_env_sealed: the job's own secret env, values and who set each when, one
-- sealed JSON document (src/cron/secrets.ts); the API shows only fingerprints. A job made from a pod takes that
-- pod's release: source_release its number, release_env_sealed its env and secrets (sealed), given to each run.
ALTER TABLE cron_jobs
  ADD COLUMN secret_env_sealed text,
  ADD COLUMN source_release integer,
  ADD COLUMN release_env_sealed text;
