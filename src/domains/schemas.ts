import { Type } from "@sinclair/typebox";
import { Nullable, Timestamp } from "../http/schemas.js";

export const tags = ["domains"];

/** how a domain was verified: the TXT record or the CNAME (null: not verified) */
const Method = Type.Unsafe<"txt" | "cname" | null>({ type: "string", enum: ["txt", "cname"], nullable: true });

const Record = Type.Object({ name: Type.String(), value: Type.String() });

export const Domain = Type.Object({
  id: Type.String({ format: "uuid" }),
  domain: Type.String({ description: "lower case, ASCII (xn-- form for internationalized names)" }),
  app: Type.Object({
    kind: Type.String({ description: "the app's kind when the domain was added: pod, group or site" }),
    slug: Type.String(),
  }),
  app_exists: Type.Boolean({
    description: "whether the slug still names one of the owner's apps; a domain of a deleted app is not served",
  }),
  status: Type.Union([Type.Literal("pending"), Type.Literal("verified")], {
    description: "pending: not served yet; verified: served by the edge (while the app exists)",
  }),
  verified_at: Nullable(Timestamp),
  verified_by: Method,
  verification: Type.Object(
    {
      txt: Record,
      cname: Record,
    },
    {
      description:
        "either record verifies the domain: the TXT record _platform-verify.<domain> with the token, or <domain> a CNAME to <slug>.<APPS_DOMAIN> (which also routes its traffic to the edge)",
    },
  ),
  last_checked_at: Nullable(Timestamp),
  last_check: Nullable(Type.String({ description: "what the last verification found, in one sentence" })),
  created_at: Timestamp,
});

const RecordCheck = Type.Object({
  name: Type.String(),
  expected: Type.String(),
  found: Type.Array(Type.String()),
  error: Nullable(
    Type.String({ description: "no_record, timeout, unreachable or failed when DNS gave no answer; else null" }),
  ),
});

export const Verification = Type.Object({
  verified: Type.Boolean(),
  method: Method,
  reason: Nullable(Type.String({ description: "why it is not verified (null when verified)" })),
  checks: Nullable(
    Type.Object(
      { txt: RecordCheck, cname: RecordCheck },
      { description: "what DNS answered; null when the domain was verified already (nothing asked)" },
    ),
  ),
  domain: Domain,
});

export const Provider = Type.Object({
  domain: Type.String(),
  provider: Type.String({
    description:
      "cloudflare, route53, google, gabia, namecheap, godaddy, azure, digitalocean, vercel, netlify, ns1, cafe24, hosting.kr, hetzner, ovh or unknown",
  }),
  zone: Nullable(Type.String({ description: "the name whose NS records answered (the zone apex)" })),
  nameservers: Type.Array(Type.String()),
  autosetup_supported: Type.Boolean({ description: "true: cf-autosetup can write the records (Cloudflare)" }),
  problem: Nullable(Type.String({ description: "timeout, unreachable or failed when DNS gave no NS answer" })),
});

export const Autosetup = Type.Object({
  zone: Type.Object({ id: Type.String(), name: Type.String() }),
  records: Type.Array(
    Type.Object({
      id: Type.String(),
      type: Type.String(),
      name: Type.String(),
      content: Type.String(),
      proxied: Type.Boolean(),
      action: Type.Union([Type.Literal("created"), Type.Literal("updated"), Type.Literal("unchanged")]),
    }),
  ),
  domain: Domain,
});

export const AppParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 64, description: "app slug" }) });
export const DomainParams = Type.Object({
  slug: Type.String({ minLength: 1, maxLength: 64, description: "app slug" }),
  id: Type.String({ minLength: 1, maxLength: 253, description: "domain id or the domain name" }),
});
export const IdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 253, description: "domain id or the domain name" }),
});
