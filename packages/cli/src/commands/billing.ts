import type { Command } from "commander";
import { unwrap } from "@hosting-platform/sdk";
import { contextOf } from "../context.js";
import { details, table } from "../output.js";

export function billingCommands(program: Command): void {
  const billing = program.command("billing").description("Balance and usage");
  billing
    .command("balance", { isDefault: true })
    .description("Balance, burn rate and hours left")
    .action(async (_opts: unknown, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const balance = await unwrap(ctx.authed().api.GET("/v1/billing/balance"));
      ctx.out.data(balance, () =>
        details(
          balance as never,
          ["currency", "balance", "burn_rate_krw_per_hour", "hours_left", "overdue", "billing_policy"],
          ctx.out.color,
        ),
      );
    });
  billing
    .command("usage")
    .description("Usage per UTC day")
    .option("--from <date>", "YYYY-MM-DD (default 30 days ago)")
    .option("--to <date>", "YYYY-MM-DD (default today)")
    .action(async (opts: { from?: string; to?: string }, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const usage = await unwrap(
        ctx.authed().api.GET("/v1/billing/usage-daily", { params: { query: { from: opts.from, to: opts.to } } }),
      );
      ctx.out.data(usage, () => {
        const rows = usage.days.flatMap((d) =>
          d.kinds.map((k) => ({ date: d.date, kind: k.kind, amount_krw: k.amount_krw })),
        );
        return `${table(rows, ["date", "kind", "amount_krw"], ctx.out.color)}\n\nTotal ${usage.total_krw} KRW (${usage.from} to ${usage.to})`;
      });
    });
}
