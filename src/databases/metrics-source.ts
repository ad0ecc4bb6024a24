import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../store/db.js";
import type { DatabaseSampleSource, DatabaseServerSample } from "../metrics/contract.js";
import type { DatabaseProvider } from "./provider/types.js";
import { databasesToSample } from "./metrics-repo.js";

/** at most this many servers are asked at once (each answer is one short admin session) */
const PARALLEL = 4;

/** The databases side of per-minute metrics (capability "databaseSamples"): asks each running server here. */
export function databaseSampleSource(deps: {
  db: Db;
  provider: DatabaseProvider;
  log: FastifyBaseLogger;
}): DatabaseSampleSource {
  return {
    async sampleHost(hostId) {
      const todo = await databasesToSample(deps.db, hostId);
      const out: DatabaseServerSample[] = [];
      for (let i = 0; i < todo.length; i += PARALLEL) {
        const answers = await Promise.all(
          todo.slice(i, i + PARALLEL).map(async (d) => {
            try {
              const s = await deps.provider.sample(d.id);
              return s && { databaseId: d.id, owner: d.owner, ...s };
            } catch (err) {
              deps.log.warn({ err, database: d.id }, "database metrics: the server did not answer this minute");
              return null;
            }
          }),
        );
        for (const a of answers) if (a) out.push(a);
      }
      return out;
    },
  };
}
