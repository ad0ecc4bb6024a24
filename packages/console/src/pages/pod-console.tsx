import { useEffect, useRef, useState } from "react";
import { api, unwrap, type Pod } from "../api";
import { useI18n } from "../i18n";
import { TextField } from "../fields";
import { Card, ErrorNote, Submit, useAction } from "../ui";
import { splitArgs } from "./apps-common";

const TAIL = 200;
const KEEP = 2000;
const POLL_MS = 2000;

/**
 * The lines of `fresh` (the log's last lines now) that `prev` (its last lines at the previous poll) did not have:
 * the longest end of the old window found at the start of the new one marks where the new lines begin. Lines
 * carry no timestamps, so a run of identical lines can be under-counted; with no overlap at all, every fresh
 * line is new (more than a window's worth arrived between two polls).
 */
export function newLines(prev: string[], fresh: string[]): string[] {
  if (prev.length === 0) return fresh;
  for (let m = 0; m <= fresh.length; m++) {
    const head = fresh.slice(0, fresh.length - m);
    const n = Math.min(head.length, prev.length);
    if (n === 0) break;
    let same = true;
    for (let i = 1; i <= n && same; i++) same = head[head.length - i] === prev[prev.length - i];
    if (same) return fresh.slice(fresh.length - m);
  }
  return fresh;
}

/** The pod's logs, followed live: `logs?tail=` every two seconds while it runs, only new lines appended. */
export function PodLogs({ pod }: { pod: Pod }) {
  const { t } = useI18n();
  const [lines, setLines] = useState<string[]>([]);
  const [follow, setFollow] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const lastWindow = useRef<string[]>([]);
  const box = useRef<HTMLPreElement>(null);
  const running = pod.state === "running";

  useEffect(() => {
    if (!running || !follow) return;
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const res = await unwrap(
          api.GET("/v1/pods/{id}/logs", { params: { path: { id: pod.id }, query: { tail: TAIL } } }),
        );
        if (!alive) return;
        const added = newLines(lastWindow.current, res.lines);
        lastWindow.current = res.lines;
        if (added.length) setLines((old) => [...old, ...added].slice(-KEEP));
        setError(null);
      } catch (err) {
        if (alive) setError(err);
      }
      if (alive) timer = setTimeout(poll, POLL_MS);
    };
    void poll();
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [pod.id, running, follow]);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);

  const live = running && follow;
  return (
    <Card
      title={t("pods.logs")}
      actions={
        <div className="actions">
          {live && (
            <span className="live-dot" role="status">
              {t("pods.logsLive")}
            </span>
          )}
          <button
            type="button"
            className="btn small"
            aria-pressed={!follow}
            disabled={!running}
            onClick={() => setFollow((f) => !f)}
          >
            {follow ? t("pods.logsPause") : t("pods.logsFollow")}
          </button>
        </div>
      }
    >
      <ErrorNote error={error} />
      {!running && <p className="hint">{t("pods.logsIdle")}</p>}
      <pre className="logs" ref={box} role="log" aria-label={t("pods.logsLabel")} tabIndex={0} data-testid="pod-logs">
        {lines.length ? lines.join("\n") : <span className="muted">{t("pods.logsEmpty")}</span>}
      </pre>
    </Card>
  );
}

interface ExecResult {
  exit_code: number;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timed_out: boolean;
}

/** A command run in the serving container; its exit code and both outputs. */
export function PodExec({ pod }: { pod: Pod }) {
  const { t } = useI18n();
  const [line, setLine] = useState("");
  const [invalid, setInvalid] = useState<string | null>(null);
  const [result, setResult] = useState<{ command: string; out: ExecResult } | null>(null);
  const action = useAction(async (command: string[]) => {
    const out = await unwrap(
      api.POST("/v1/pods/{id}/exec", { params: { path: { id: pod.id } }, body: { command, timeout_s: 30 } }),
    );
    setResult({ command: line, out });
  });
  return (
    <Card title={t("pods.exec")}>
      <p className="muted">{t("pods.execHint")}</p>
      <form
        className="exec-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const args = splitArgs(line);
          const bad = args === null ? t("v.command") : args.length === 0 ? t("v.required") : null;
          setInvalid(bad);
          if (!bad) void action.run(args!);
        }}
      >
        <TextField
          label={t("pods.execCommand")}
          error={invalid}
          name="exec"
          className="mono"
          spellCheck={false}
          autoComplete="off"
          placeholder="ls -l /"
          value={line}
          onValue={setLine}
        />
        <Submit busy={action.busy}>{t("pods.execRun")}</Submit>
      </form>
      <ErrorNote error={action.error} />
      {result && (
        <div className="exec-result" data-testid="exec-result">
          <p>
            <code>$ {result.command}</code>{" "}
            <span className={`badge ${result.out.exit_code === 0 ? "state-running" : "state-failed"}`}>
              {t("pods.exitCode", { code: result.out.exit_code })}
            </span>
          </p>
          {result.out.stdout && <pre className="logs short">{result.out.stdout}</pre>}
          {result.out.stderr && <pre className="logs short err">{result.out.stderr}</pre>}
          {result.out.timed_out && <p className="note warn">{t("pods.timedOut")}</p>}
          {result.out.truncated && <p className="note warn">{t("pods.truncated")}</p>}
        </div>
      )}
    </Card>
  );
}
