import { Type, type TObject, type TProperties } from "@sinclair/typebox";
import { Nullable } from "../http/schemas.js";

const Traffic = {
  requests: Type.Integer(),
  errors_4xx: Type.Integer(),
  errors_5xx: Type.Integer(),
  bytes_out: Type.Integer({ description: "bytes sent to visitors (rows of before the 074 migration count 0)" }),
  p50_ms: Nullable(Type.Number()),
  p95_ms: Nullable(Type.Number()),
};

const Runtime = {
  cpu_percent: Nullable(Type.Number({ description: "percent of one CPU, averaged over the step" })),
  memory_bytes: Nullable(Type.Integer({ description: "highest memory use sampled in the step" })),
  restarts: Type.Integer({ description: "restarts during the step" }),
  net_rx_bytes: Nullable(
    Type.Integer({ description: "bytes the runtime counted received during the step (null: not sampled)" }),
  ),
  net_tx_bytes: Nullable(Type.Integer({ description: "bytes the runtime counted sent during the step" })),
};

const at = Type.String({ format: "date-time", description: "start of the step" });

/** `{<id>, from, to, step, points}`, the one shape of every metrics answer */
const seriesOf = <P extends TProperties>(idName: string, point: TObject<P>) =>
  Type.Object({
    [idName]: Type.String(),
    from: Type.String({ format: "date-time" }),
    to: Type.String({ format: "date-time" }),
    step: Type.Integer({ description: "seconds per point" }),
    points: Type.Array(point),
  });

export const PodMetrics = seriesOf(
  "pod_id",
  Type.Object({
    at,
    ...Runtime,
    memory_limit_bytes: Nullable(Type.Integer()),
    ...Traffic,
    p99_ms: Nullable(Type.Number()),
  }),
);

export const GroupMetrics = seriesOf(
  "group_id",
  Type.Object({
    at,
    ...Runtime,
    cpu_percent: Nullable(
      Type.Number({ description: "members' CPU added (percent of one CPU), averaged over the step" }),
    ),
    memory_bytes: Nullable(Type.Integer({ description: "members' memory added; the step's highest minute" })),
    replicas: Type.Integer({ description: "most members sampled in one minute of the step" }),
    ...Traffic,
    p99_ms: Nullable(Type.Number()),
  }),
);

export const SiteMetrics = seriesOf("site_id", Type.Object({ at, ...Traffic }));

export const DatabaseMetrics = seriesOf(
  "database_id",
  Type.Object({
    at,
    connections: Nullable(Type.Integer({ description: "most client sessions sampled in the step" })),
    max_connections: Nullable(Type.Integer()),
    commits_per_second: Nullable(Type.Number()),
    size_bytes: Nullable(Type.Integer({ description: "all the server's databases on disk; the step's highest" })),
    cache_hit_ratio: Nullable(Type.Number({ description: "block hits / (hits + reads) during the step" })),
    replication_lag_bytes: Nullable(
      Type.Integer({ description: "with HA: the standby's replay lag; the step's highest" }),
    ),
    replication_lag_seconds: Nullable(Type.Number()),
    base_backup_age_seconds: Nullable(
      Type.Integer({ description: "age of the newest full backup; the step's highest" }),
    ),
    archived_wal_age_seconds: Nullable(Type.Integer({ description: "age of the last archived WAL segment" })),
  }),
);

export const WindowParams = Type.Object({
  from: Type.Optional(Type.String({ format: "date-time", description: "default: an hour before to" })),
  to: Type.Optional(Type.String({ format: "date-time", description: "default: now" })),
  step: Type.Optional(
    Type.Integer({
      minimum: 60,
      maximum: 86_400,
      default: 60,
      description:
        "seconds per point, a multiple of 60; whole hours read the hourly roll-up (90 days), finer steps the minutes (7 days)",
    }),
  ),
});
