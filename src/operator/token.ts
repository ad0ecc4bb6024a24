import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { newSecret } from "../auth/secrets.js";

/** OPERATOR_TOKEN, or one generated at first start and kept 0600 in the data directory. */
export async function resolveOperatorToken(
  configured: string | null,
  dataDir: string,
): Promise<{ token: string; file: string | null; generated: boolean }> {
  if (configured) return { token: configured, file: null, generated: false };
  const file = path.join(dataDir, "operator-token");
  if (existsSync(file)) return { token: (await readFile(file, "utf8")).trim(), file, generated: false };
  await mkdir(dataDir, { recursive: true });
  const token = newSecret("op_operator_");
  await writeFile(file, token + "\n", { mode: 0o600, flag: "wx" }).catch(async (err) => {
    if ((err as { code?: string }).code !== "EEXIST") throw err;
  });
  await chmod(file, 0o600);
  return { token: (await readFile(file, "utf8")).trim(), file, generated: true };
}
