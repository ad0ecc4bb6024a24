/**
 * The images a Dockerfile reads from outside the build: `FROM` bases and `--from=` sources (COPY, ADD,
 * RUN --mount) that name no earlier stage. The builder runs without network, so the runner pulls exactly
 * these first, each checked against the owner's image access (another owner's namespace is refused before
 * anything is pulled). Variables in image names come only from `ARG`s before the first FROM with a default
 * (the API takes no build arguments); any other `$` is refused, since the image could not be checked.
 */

export class DockerfileError extends Error {}

interface Instruction {
  keyword: string;
  args: string;
}

/** Instructions with continuations joined, comments and heredoc bodies dropped. */
function instructions(text: string): Instruction[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let escape = "\\";
  // parser directives: only at the very top, before any other line
  for (const line of lines) {
    const m = /^\s*#\s*([a-zA-Z]+)\s*=\s*(\S+)\s*$/.exec(line);
    if (!m) break;
    if (m[1].toLowerCase() === "escape" && (m[2] === "`" || m[2] === "\\")) escape = m[2];
  }
  const out: Instruction[] = [];
  let current = "";
  const heredoc: string[] = [];
  for (const raw of lines) {
    if (heredoc.length) {
      // the body of a heredoc (RUN <<EOF ... EOF) is the command's input, not instructions
      if (raw.replace(/^\t+/, "").trim() === heredoc[0]) heredoc.shift();
      continue;
    }
    if (!current && /^\s*#/.test(raw)) continue;
    if (current && /^\s*#/.test(raw)) continue; // comments inside a continued instruction are skipped too
    const line = raw.trimEnd();
    if (line.endsWith(escape)) {
      current += line.slice(0, -1) + " ";
      continue;
    }
    current += line;
    const m = /^\s*([A-Za-z]+)\s*(.*)$/.exec(current);
    current = "";
    if (!m) continue;
    out.push({ keyword: m[1].toUpperCase(), args: m[2].trim() });
    for (const h of m[2].matchAll(/<<-?\s*["']?([A-Za-z_][A-Za-z0-9_]*)["']?/g)) heredoc.push(h[1]);
  }
  return out;
}

function substitute(value: string, args: Map<string, string>): string {
  const replaced = value.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (whole, a, b) => {
    const name = (a ?? b) as string;
    const v = args.get(name);
    if (v === undefined)
      throw new DockerfileError(`"${value}" uses $${name}, which no ARG with a default before the first FROM sets.`);
    return v;
  });
  if (replaced.includes("$"))
    throw new DockerfileError(`"${value}" uses a variable form the builder cannot resolve before building.`);
  return replaced;
}

/** The external images a Dockerfile needs, in order of first use, without duplicates and without `scratch`. */
export function externalImages(text: string): string[] {
  const args = new Map<string, string>();
  const stages: string[] = [];
  const images: string[] = [];
  const add = (image: string) => {
    if (image.toLowerCase() !== "scratch" && !images.includes(image)) images.push(image);
  };
  const isStage = (name: string) => stages.includes(name.toLowerCase()) || /^\d+$/.test(name);
  let seenFrom = false;
  for (const { keyword, args: rest } of instructions(text)) {
    if (keyword === "ARG" && !seenFrom) {
      for (const m of rest.matchAll(/([A-Za-z_][A-Za-z0-9_]*)(?:=("[^"]*"|'[^']*'|\S*))?/g)) {
        if (m[2] !== undefined) args.set(m[1], m[2].replace(/^["']|["']$/g, ""));
      }
      continue;
    }
    if (keyword === "FROM") {
      seenFrom = true;
      const words = rest.split(/\s+/).filter((w) => !w.startsWith("--"));
      if (!words.length) throw new DockerfileError("A FROM instruction names no image.");
      const image = substitute(words[0], args);
      if (!isStage(image)) add(image);
      if (words.length >= 3 && words[1].toUpperCase() === "AS") stages.push(words[2].toLowerCase());
      else stages.push(`#${stages.length}`);
      continue;
    }
    if (!seenFrom) continue;
    // COPY --from=x, ADD --from=x, RUN --mount=type=bind,from=x
    for (const m of rest.matchAll(/--(?:from=(\S+)|mount=(\S+))/g)) {
      const from = m[1] ?? /(?:^|,)from=([^,]+)/.exec(m[2] ?? "")?.[1];
      if (!from) continue;
      const name = substitute(from.replace(/^["']|["']$/g, ""), args);
      if (!isStage(name)) add(name);
    }
  }
  if (!seenFrom) throw new DockerfileError("The Dockerfile has no FROM instruction.");
  return images;
}
