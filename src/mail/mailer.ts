import type { Transporter } from "nodemailer";
import type { FastifyBaseLogger } from "fastify";
import type { Mailer, MailMessage } from "../kernel/contracts.js";
import { ConfigError } from "../config/config.js";

/**
 * Outgoing mail: SMTP through nodemailer when SMTP_URL is set (smtp://user:pass@host:port, smtps:// for implicit
 * TLS), from MAIL_FROM. Without SMTP_URL nothing leaves the platform: each message is written to the log, and
 * senders that hand out links (invitations) put them in their answers instead (`delivers` is false).
 */
export function createMailer(env: Record<string, string | undefined>, log: FastifyBaseLogger): Mailer {
  const from = env.MAIL_FROM || "Platform <no-reply@localhost>";
  const url = env.SMTP_URL;
  if (!url) {
    return {
      delivers: false,
      send: async (m: MailMessage) => {
        log.info({ to: m.to, subject: m.subject, text: m.text }, "mail not sent (SMTP_URL unset); logged instead");
      },
    };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError("SMTP_URL", "must be a URL like smtp://user:password@host:587");
  }
  if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:")
    throw new ConfigError("SMTP_URL", "must start with smtp:// or smtps://");
  // nodemailer loads on the first message: most processes (and test apps) never send one
  let transport: Promise<Transporter> | undefined;
  return {
    delivers: true,
    send: async (m: MailMessage) => {
      transport ??= import("nodemailer").then((mod) => mod.default.createTransport(url));
      await (await transport).sendMail({ from, to: m.to, subject: m.subject, text: m.text, html: m.html });
    },
  };
}
