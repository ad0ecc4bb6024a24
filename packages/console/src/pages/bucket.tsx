import { useState } from "react";
import { api, unwrap, PlatformApiError } from "../api";
import { useI18n, when } from "../i18n";
import { Link, useRouter } from "../router";
import { Card, CopyButton, ErrorNote, Spinner, TypeToConfirm, useLoad } from "../ui";
import { bytes } from "../upload";
import { BucketsTabs, objectsText, type Bucket } from "./buckets";

const path = (id: string) => ({ params: { path: { id } } });

/** One bucket: where clients reach it, its size, how to use it with the AWS CLI or an SDK, deletion. */
export function BucketPage({ id }: { id: string }) {
  const { t, locale } = useI18n();
  const bucket = useLoad(async () => (await unwrap(api.GET("/v1/buckets/{id}", path(id)))) as Bucket, [id]);
  if (!bucket.data) return bucket.error ? <ErrorNote error={bucket.error} /> : <Spinner label={t("common.loading")} />;
  const b = bucket.data;
  const uploads = b.uploads_in_progress ?? 0;
  return (
    <>
      <BucketsTabs />
      <div className="page-head">
        <div>
          <Link to="/buckets" className="crumb">
            ← {t("bk.title")}
          </Link>
          <h1 className="mono-title">{b.name}</h1>
          <p className="muted">
            {bytes(b.size_bytes, locale)} · {objectsText(t, b.object_count)}
          </p>
        </div>
        <Link to={`/buckets/keys?bucket=${encodeURIComponent(b.id)}`} className="btn primary">
          {t("bk.issueFor")}
        </Link>
      </div>
      <Card title={t("bk.details")}>
        <div className="mini-stats">
          <div>
            <span className="muted small">{t("bk.size")}</span>
            <span className="mini-value" data-testid="bucket-size">
              {bytes(b.size_bytes, locale)}
            </span>
          </div>
          <div>
            <span className="muted small">{t("bk.objects")}</span>
            <span className="mini-value" data-testid="bucket-objects">
              {b.object_count}
            </span>
          </div>
          <div>
            <span className="muted small">{t("bk.region")}</span>
            <span className="mini-value mono-value">{b.region}</span>
          </div>
          <div>
            <span className="muted small">{t("bk.created")}</span>
            <span className="mini-value small-value">{when(locale, b.created_at)}</span>
          </div>
        </div>
        <dl className="props flush bucket-props">
          <dt>{t("bk.endpoint")}</dt>
          <dd className="copy-line">
            <code data-testid="endpoint">{b.endpoint}</code>
            <CopyButton text={b.endpoint} label={t("bk.endpoint")} />
          </dd>
          <dt>{t("bk.virtualHost")}</dt>
          <dd className="copy-line">
            <code>{b.virtual_host}</code>
            <CopyButton text={b.virtual_host} label={t("bk.virtualHost")} />
          </dd>
          {uploads > 0 && (
            <>
              <dt>{t("bk.uploads")}</dt>
              <dd>{t("bk.uploadsValue", { n: uploads, size: bytes(b.upload_bytes ?? 0, locale) })}</dd>
            </>
          )}
        </dl>
      </Card>
      <UsageCard bucket={b} />
      <DeleteCard bucket={b} onRefused={bucket.reload} />
    </>
  );
}

const TOOLS = ["cli", "js", "python"] as const;
const TOOL_NAMES: Record<(typeof TOOLS)[number], string> = { cli: "AWS CLI", js: "JavaScript", python: "Python" };

/** The commands for each tool, with the bucket's endpoint and region; the key comes from the environment. */
function snippet(tool: (typeof TOOLS)[number], b: Bucket): string {
  if (tool === "cli")
    return [
      "export AWS_ACCESS_KEY_ID=<access key id>",
      "export AWS_SECRET_ACCESS_KEY=<secret access key>",
      `export AWS_DEFAULT_REGION=${b.region}`,
      `export AWS_ENDPOINT_URL=${b.endpoint}`,
      "aws configure set default.s3.addressing_style path",
      "",
      `aws s3 cp ./photo.jpg s3://${b.name}/photo.jpg`,
      `aws s3 ls s3://${b.name}/`,
    ].join("\n");
  if (tool === "js")
    return [
      'import { S3Client, PutObjectCommand } from "@aws-sdk/client-s3";',
      "",
      "const s3 = new S3Client({",
      `  endpoint: "${b.endpoint}",`,
      `  region: "${b.region}",`,
      "  forcePathStyle: true, // reads AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
      "});",
      `await s3.send(new PutObjectCommand({ Bucket: "${b.name}", Key: "hello.txt", Body: "Hello" }));`,
    ].join("\n");
  return [
    "import boto3",
    "from botocore.config import Config",
    "",
    "s3 = boto3.client(",
    '    "s3",',
    `    endpoint_url="${b.endpoint}",`,
    `    region_name="${b.region}",`,
    '    config=Config(s3={"addressing_style": "path"}),',
    ")  # reads AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
    `s3.upload_file("photo.jpg", "${b.name}", "photo.jpg")`,
  ].join("\n");
}

function UsageCard({ bucket }: { bucket: Bucket }) {
  const { t } = useI18n();
  const [tool, setTool] = useState<(typeof TOOLS)[number]>("cli");
  const text = snippet(tool, bucket);
  return (
    <Card title={t("bk.usage")}>
      <p className="muted flush">{t("bk.usageIntro")}</p>
      <div className="small-tabs snippet-tabs" role="group" aria-label={t("bk.usage")}>
        {TOOLS.map((x) => (
          <button key={x} type="button" className="btn small" aria-pressed={tool === x} onClick={() => setTool(x)}>
            {TOOL_NAMES[x]}
          </button>
        ))}
      </div>
      <div className="snippet">
        <pre data-testid="snippet">
          <code>{text}</code>
        </pre>
        <CopyButton text={text} label={t("bk.copySnippet")} />
      </div>
    </Card>
  );
}

/** Deletion with the name typed; a bucket holding anything needs "delete all objects too" (?force=1). */
function DeleteCard({ bucket: b, onRefused }: { bucket: Bucket; onRefused: () => void }) {
  const { t, locale } = useI18n();
  const { navigate } = useRouter();
  const [force, setForce] = useState(false);
  const [refused, setRefused] = useState(false);
  const remove = async () => {
    try {
      await unwrap(
        api.DELETE("/v1/buckets/{id}", { params: { path: { id: b.id }, query: force ? { force: "1" } : {} } }),
      );
    } catch (err) {
      if (err instanceof PlatformApiError && err.code === "bucket_not_empty") {
        setRefused(true);
        onRefused();
      }
      throw err;
    }
    navigate("/buckets");
  };
  const notEmpty = b.object_count > 0 || (b.uploads_in_progress ?? 0) > 0 || refused;
  return (
    <Card title={t("bk.delete")}>
      <TypeToConfirm
        expected={b.name}
        hint={t("bk.deleteHint", { name: b.name })}
        label={t("bk.delete")}
        onConfirm={remove}
        errorNote={(error) =>
          error instanceof PlatformApiError &&
          error.code === "bucket_not_empty" && (
            <div className="note error" role="alert" data-testid="not-empty">
              <span>{t("bk.notEmpty")}</span>
              <span className="code">
                {t("common.errorCode")}: <code>bucket_not_empty</code>
              </span>
            </div>
          )
        }
      >
        {notEmpty && (
          <div className="field">
            <label className="check">
              <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} />
              {t("bk.force")}
            </label>
            <p className="hint">
              {t("bk.forceHint", { objects: objectsText(t, b.object_count), size: bytes(b.size_bytes, locale) })}
            </p>
          </div>
        )}
      </TypeToConfirm>
    </Card>
  );
}
