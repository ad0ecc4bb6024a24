/** Human output (aligned tables, colour only on a terminal, spinners) and --json output. */

export interface Output {
  json: boolean;
  /** stdout is a terminal and colour is allowed (NO_COLOR unset) */
  color: boolean;
  /** stderr is a terminal: spinners and progress go there */
  interactive: boolean;
  print(text: string): void;
  error(text: string): void;
  data(value: unknown, human: () => string): void;
}

export function createOutput(json: boolean, env: NodeJS.ProcessEnv = process.env): Output {
  const color = !json && Boolean(process.stdout.isTTY) && !env.NO_COLOR && env.TERM !== "dumb";
  return {
    json,
    color,
    interactive: !json && Boolean(process.stderr.isTTY),
    print: (text) => void process.stdout.write(text.endsWith("\n") ? text : text + "\n"),
    error: (text) => void process.stderr.write(text.endsWith("\n") ? text : text + "\n"),
    data(value, human) {
      if (json) process.stdout.write(JSON.stringify(value, null, 2) + "\n");
      else this.print(human());
    },
  };
}

const paint = (code: number) => (on: boolean, text: string) => (on ? `\x1b[${code}m${text}\x1b[0m` : text);
export const bold = paint(1);
export const dim = paint(2);
export const red = paint(31);
export const green = paint(32);
export const yellow = paint(33);
export const cyan = paint(36);

/** Text without its colour codes. */
// eslint-disable-next-line no-control-regex -- matching the escape character is the point
export const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");
const visible = (s: string) => stripAnsi(s).length;

function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (Array.isArray(value)) return value.map(cell).join(",");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** Columns padded to their widest cell; the header bold and the state column coloured on a terminal. */
export function table(rows: Record<string, unknown>[], columns: string[], color: boolean): string {
  if (!rows.length) return dim(color, "(none)");
  const cells = rows.map((r) => columns.map((c) => colorState(color, c, cell(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => visible(row[i]))));
  const pad = (s: string, w: number) => s + " ".repeat(Math.max(0, w - visible(s)));
  const header = columns.map((c, i) => bold(color, pad(c.toUpperCase(), widths[i]))).join("  ");
  return [
    header,
    ...cells.map((row) =>
      row
        .map((s, i) => pad(s, widths[i]))
        .join("  ")
        .trimEnd(),
    ),
  ].join("\n");
}

/** key: value lines for one object, keys aligned. */
export function details(obj: Record<string, unknown>, keys: string[], color: boolean): string {
  const width = Math.max(...keys.map((k) => k.length));
  return keys
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${dim(color, k.padEnd(width))}  ${colorState(color, k, cell(obj[k]))}`)
    .join("\n");
}

function colorState(color: boolean, column: string, value: string): string {
  if (!color || (column !== "state" && column !== "status")) return value;
  if (/^(running|succeeded|active)$/.test(value)) return green(true, value);
  if (/^(failed|error|removed)$/.test(value)) return red(true, value);
  return yellow(true, value);
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export interface Spinner {
  update(text: string): void;
  stop(final?: string): void;
}

/** A spinner on stderr while waiting; on a non-terminal (or with --json) it prints nothing but the final line. */
export function spinner(out: Output, text: string): Spinner {
  if (!out.interactive) {
    return { update: () => {}, stop: (final) => (final && !out.json ? out.error(final) : undefined) };
  }
  let frame = 0;
  let label = text;
  const draw = () => process.stderr.write(`\r\x1b[2K${cyan(out.color, FRAMES[frame++ % FRAMES.length])} ${label}`);
  draw();
  const timer = setInterval(draw, 80);
  return {
    update: (t) => {
      label = t;
    },
    stop: (final) => {
      clearInterval(timer);
      process.stderr.write("\r\x1b[2K" + (final ? final + "\n" : ""));
    },
  };
}
