/** Buckets and their S3 access keys, as the API changes them; the gateway serves what these rows say. */
import { randomBytes } from "node:crypto";
import type { Principal, InstanceFilter } from "../auth/principal.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError, found, notFound } from "../http/errors.js";
import type { Kernel } from "../kernel/kernel.js";
import type { SecretBox } from "../kernel/secrets.js";
import { isUniqueViolation, isUuid, type Db } from "../store/db.js";
import type { FastifyBaseLogger } from "fastify";
import type { BlobStore } from "./storage/types.js";
import { bucketNameProblem } from "./names.js";
import { BUCKET_KIND } from "./metering.js";
import * as repo from "./repo.js";

export interface BucketsServiceDeps {
  db: Db;
  kernel: Pick<Kernel, "admit" | "assertMayManage">;
  secrets: SecretBox;
  store: BlobStore;
  log: FastifyBaseLogger;
  /** the S3 region buckets are in (S3_REGION), for organization deploy rules on regions */
  region?: string;
}

export interface BucketDetail extends repo.BucketRow {
  uploads_in_progress: number;
  upload_bytes: number;
}

const ACCESS_KEY_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** 20 characters like AWS access key ids: "PK" and 18 random base32 characters. */
function newAccessKeyId(): string {
  const bytes = randomBytes(18);
  let id = "PK";
  for (const b of bytes) id += ACCESS_KEY_ALPHABET[b & 31];
  return id;
}

const matchesRef = (b: { id: string; name: string }, refs: string[]) => refs.includes(b.id) || refs.includes(b.name);

export class BucketsService {
  constructor(private readonly d: BucketsServiceDeps) {}

  async create(p: Principal, body: { name: string }): Promise<repo.BucketRow> {
    const problem = bucketNameProblem(body.name);
    if (problem) throw new ApiError("invalid_request", `The bucket name ${problem} (S3 naming rules).`);
    try {
      return await auditedTransaction(this.d.db, p, async (tx) => {
        // an empty bucket costs nothing; admission still applies the owner's rules
        await this.d.kernel.admit(tx, {
          owner: p.owner,
          accountId: p.accountId,
          kind: BUCKET_KIND,
          size: "standard",
          storageGb: 0,
          region: this.d.region,
        });
        return repo.insertBucket(tx, { name: body.name, owner: p.owner, accountId: p.accountId });
      });
    } catch (err) {
      if (isUniqueViolation(err, "buckets_name_live"))
        throw new ApiError(
          "slug_taken",
          `The bucket name "${body.name}" is taken; bucket names are unique platform-wide.`,
        );
      throw err;
    }
  }

  async list(p: Principal, filter: InstanceFilter): Promise<repo.BucketRow[]> {
    const rows = await repo.listBuckets(this.d.db, p.owner);
    return filter === null ? rows : rows.filter((b) => matchesRef(b, filter));
  }

  async detail(p: Principal, ref: string): Promise<BucketDetail> {
    const row = found(await repo.findBucket(this.d.db, p.owner, ref), "bucket");
    const pending = await repo.pendingUploads(this.d.db, row.id);
    return { ...row, uploads_in_progress: pending.uploads, upload_bytes: pending.bytes };
  }

  /** Deletes a bucket; one holding objects or uploads only with `force`, which deletes them too. */
  async remove(p: Principal, ref: string, force: boolean): Promise<void> {
    const blobs = await auditedTransaction(this.d.db, p, async (tx) => {
      const row = found(await repo.findBucket(tx, p.owner, ref, true), "bucket");
      if (!force) {
        const pending = await repo.pendingUploads(tx, row.id);
        if (row.object_count > 0 || pending.uploads > 0)
          throw new ApiError(
            "bucket_not_empty",
            `The bucket holds ${row.object_count} objects and ${pending.uploads} uploads in progress; delete them first or pass ?force=1.`,
          );
      }
      return repo.deleteBucket(tx, row.id);
    });
    // the rows are gone: the bytes go now, and the sweep removes whatever this misses
    for (let i = 0; i < blobs.length; i += 100)
      await this.d.store
        .remove(blobs.slice(i, i + 100))
        .catch((err) => this.d.log.warn({ err }, "removing a deleted bucket's blobs failed"));
  }

  async createKey(
    p: Principal,
    body: { name: string; bucket_ids?: string[]; permission: "read" | "read_write" },
  ): Promise<{ row: repo.KeyRow; secret: string }> {
    const secret = randomBytes(30).toString("base64url");
    // the secret is part of the transaction's result: a retry of its Idempotency-Key answers this one (http/idempotent-change.ts)
    return auditedTransaction(this.d.db, p, async (tx) => {
      let bucketIds: string[] | null = null;
      if (body.bucket_ids !== undefined) {
        bucketIds = [];
        for (const ref of new Set(body.bucket_ids)) {
          const b = await repo.findBucket(tx, p.owner, ref);
          if (!b) throw new ApiError("not_found", `No bucket ${ref} for this account.`);
          // writing into a company bucket is changing it: its responsible member or an admin (reading is anyone's)
          if (body.permission === "read_write")
            await this.d.kernel.assertMayManage(tx, p, { label: `bucket "${b.name}"`, accountId: b.account_id });
          bucketIds.push(b.id);
        }
      } else if (body.permission === "read_write") {
        const label = "a read_write key for every bucket";
        await this.d.kernel.assertMayManage(tx, p, { label, accountId: null });
      }
      const row = await repo.insertKey(tx, {
        name: body.name,
        accessKeyId: newAccessKeyId(),
        secretSealed: this.d.secrets.seal(secret, "bucket_keys.secret_sealed"),
        owner: p.owner,
        accountId: p.accountId,
        permission: body.permission,
        bucketIds,
      });
      return { row, secret };
    });
  }

  /** The owner's live keys; an instance-limited caller sees those limited to its buckets. */
  async listKeys(p: Principal, filter: InstanceFilter): Promise<repo.KeyRow[]> {
    const rows = await repo.listKeys(this.d.db, p.owner);
    if (filter === null) return rows;
    const permitted = (await repo.listBuckets(this.d.db, p.owner))
      .filter((b) => matchesRef(b, filter))
      .map((b) => b.id);
    return rows.filter(
      (k) => k.bucket_ids !== null && k.bucket_ids.length > 0 && k.bucket_ids.every((id) => permitted.includes(id)),
    );
  }

  async revokeKey(p: Principal, id: string): Promise<void> {
    if (!isUuid(id)) throw notFound("access key");
    await auditedTransaction(this.d.db, p, async (tx) => {
      const key = found(await repo.revokeKey(tx, p.owner, id), "access key");
      // another member's key is theirs to revoke (or an admin's); the refusal rolls the revocation back
      await this.d.kernel.assertMayManage(tx, p, { label: `access key "${key.name}"`, accountId: key.account_id });
    });
  }
}
