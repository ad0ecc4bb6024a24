/** Invitation tokens, the link they travel in, and the invitation e-mail. */
import { createHash, randomBytes } from "node:crypto";
import type { MailMessage } from "../../kernel/contracts.js";

/** Invitation validity (spec, Limits). */
export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;

/** A new token: 32 random bytes, base64url; only its SHA-256 is stored. */
export function newToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString("base64url");
  return { token, hash: hashToken(token) };
}

export const hashToken = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

export const inviteLink = (base: string, token: string) => `${base}/invite?token=${encodeURIComponent(token)}`;

/** a***@example.com: enough for the invitee to recognise the address, little for whoever else sees the link */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  if (at <= 0) return "***";
  return `${email[0]}***${email.slice(at)}`;
}

export function inviteMail(m: {
  to: string;
  orgName: string;
  inviter: string;
  role: string;
  link: string;
  expiresAt: Date;
}): MailMessage {
  const until = m.expiresAt.toISOString().replace("T", " ").slice(0, 16) + " UTC";
  const text = [
    `${m.inviter} invited you to join the organization "${m.orgName}" as ${m.role}.`,
    "",
    `Accept the invitation: ${m.link}`,
    "",
    `The link works until ${until}. Sign in (or sign up) with ${m.to} to accept it.`,
    "If you did not expect this invitation, ignore this mail.",
    "",
    "---",
    `${m.inviter} 님이 조직 "${m.orgName}"에 ${m.role === "admin" ? "관리자" : "구성원"}로 초대했습니다.`,
    `초대 수락: ${m.link}`,
    `링크는 ${until}까지 유효합니다. ${m.to} 계정으로 로그인(또는 가입)해 수락하세요.`,
  ].join("\n");
  return { to: m.to, subject: `Invitation to ${m.orgName} / ${m.orgName} 초대`, text };
}
