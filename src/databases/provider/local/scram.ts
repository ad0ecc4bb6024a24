import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";

/**
 * The SCRAM-SHA-256 verifier PostgreSQL would store for a password. Sending the verifier instead of
 * the password keeps plain text out of server logs and pg_stat_activity. Non-ASCII passwords would need
 * SASLprep, so for those the caller lets the server hash (returns null).
 */
export function scramVerifier(password: string, iterations = 4096): string | null {
  if (!/^[\x20-\x7e]*$/.test(password)) return null;
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password, salt, iterations, 32, "sha256");
  const clientKey = createHmac("sha256", salted).update("Client Key").digest();
  const storedKey = createHash("sha256").update(clientKey).digest();
  const serverKey = createHmac("sha256", salted).update("Server Key").digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString("base64")}$${storedKey.toString("base64")}:${serverKey.toString("base64")}`;
}
