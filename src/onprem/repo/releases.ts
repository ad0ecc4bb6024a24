/** SQL of published release bundles. */
import { allRows, oneRow, type Queryable } from "../../store/db.js";

export interface ReleaseRow {
  id: string;
  version: string;
  architecture: string;
  size: number;
  sha256: string;
  filename: string;
  published_at: Date;
}

const COLUMNS = "id, version, architecture, size, sha256, filename, published_at";

export async function insertRelease(q: Queryable, r: Omit<ReleaseRow, "published_at">): Promise<ReleaseRow> {
  const { rows } = await q.query<ReleaseRow>(
    `INSERT INTO onprem_releases (id, version, architecture, size, sha256, filename) VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING ${COLUMNS}`,
    [r.id, r.version, r.architecture, r.size, r.sha256, r.filename],
  );
  return rows[0];
}

export async function findRelease(q: Queryable, id: string): Promise<ReleaseRow | null> {
  return oneRow<ReleaseRow>(q, `SELECT ${COLUMNS} FROM onprem_releases WHERE id = $1`, [id]);
}

export async function listReleases(q: Queryable): Promise<ReleaseRow[]> {
  return allRows<ReleaseRow>(
    q,
    `SELECT ${COLUMNS} FROM onprem_releases ORDER BY published_at DESC, id DESC LIMIT 1000`,
  );
}

/** The newest release of each architecture. */
export async function latestReleases(q: Queryable): Promise<ReleaseRow[]> {
  return allRows<ReleaseRow>(
    q,
    `SELECT DISTINCT ON (architecture) ${COLUMNS} FROM onprem_releases
      ORDER BY architecture, published_at DESC, id DESC`,
  );
}
