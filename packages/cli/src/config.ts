/**
 * Where the CLI keeps its profiles: $PLATFORM_CONFIG_DIR, else the user's config directory
 * ($XDG_CONFIG_HOME or ~/.config on Unix, %APPDATA% on Windows) under platform/config.json, written
 * with mode 0600 in a 0700 directory because it holds bearer tokens. PLATFORM_TOKEN and
 * PLATFORM_API_URL override the profile; PLATFORM_PROFILE (or --profile) picks it.
 */
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";

export const DEFAULT_API_URL = "http://127.0.0.1:8080";

export interface Profile {
  api_url: string;
  token?: string;
  /** who the token belongs to, for display */
  email?: string;
  /** database credentials the API showed once (create, rotate-password), so `db connect` can use them */
  databases?: Record<string, { url: string; slug?: string | null }>;
}

export interface ConfigFile {
  profiles: Record<string, Profile>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PLATFORM_CONFIG_DIR) return env.PLATFORM_CONFIG_DIR;
  if (process.platform === "win32" && env.APPDATA) return path.join(env.APPDATA, "platform");
  return path.join(env.XDG_CONFIG_HOME || path.join(env.HOME || homedir(), ".config"), "platform");
}

export const configPath = (env: NodeJS.ProcessEnv = process.env) => path.join(configDir(env), "config.json");

export async function readConfig(env: NodeJS.ProcessEnv = process.env): Promise<ConfigFile> {
  try {
    const parsed = JSON.parse(await readFile(configPath(env), "utf8")) as Partial<ConfigFile>;
    return { profiles: parsed.profiles && typeof parsed.profiles === "object" ? parsed.profiles : {} };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { profiles: {} };
    throw new Error(`cannot read ${configPath(env)}: ${(err as Error).message}`, { cause: err });
  }
}

/** Written to a temporary file and renamed, both 0600, so a crash never leaves half a file or a readable token. */
export async function writeConfig(config: ConfigFile, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = configDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = configPath(env);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(config, null, 2) + "\n", { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
  return file;
}

export async function updateProfile(
  name: string,
  change: (p: Profile | undefined) => Profile | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const config = await readConfig(env);
  const next = change(config.profiles[name]);
  if (next) config.profiles[name] = next;
  else delete config.profiles[name];
  return writeConfig(config, env);
}

/** The profile in effect: the file's, with the environment's overrides on top. */
export interface Session {
  profileName: string;
  apiUrl: string;
  token: string | undefined;
  profile: Profile | undefined;
}

export async function resolveSession(
  opts: { profile?: string; apiUrl?: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<Session> {
  const profileName = opts.profile ?? env.PLATFORM_PROFILE ?? "default";
  const profile = (await readConfig(env)).profiles[profileName];
  return {
    profileName,
    apiUrl: (opts.apiUrl ?? env.PLATFORM_API_URL ?? profile?.api_url ?? DEFAULT_API_URL).replace(/\/+$/, ""),
    token: env.PLATFORM_TOKEN || profile?.token,
    profile,
  };
}
