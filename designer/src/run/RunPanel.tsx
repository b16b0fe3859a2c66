// The run panel: builds the document being edited for the chosen targets,
// sends a request (a form from the state schema, or raw JSON), shows each
// target's answer, its events and tokens as they come, the differences
// between targets, and resumes a paused thread (docs/designer.md).

import { useEffect, useMemo, useRef, useState } from "react";
import { ApiError, type RunAnswer, type RunLine, type RunResult, run, saveCase, stopRuns } from "../api/client.ts";
import { type Json, type JsonObject, type Model, PLATFORMS, type Platform, targetOf } from "../model/types.ts";
import {
  type FormValues,
  type RunEvent,
  buildText,
  caseSource,
  comparison,
  draftState,
  formFields,
  formatMs,
  formProblems,
  hasCheckpointer,
  highlights,
  initialValues,
  interrupted as pausedOn,
  randomId,
  resumeThread,
  resumeValue,
  stateFromForm,
  summary,
  timeline,
  usageText,
  valuesFromState,
} from "./request.ts";
import type { RunMark } from "./highlight.ts";

interface HistoryItem {
  at: string;
  platforms: Platform[];
  request: JsonObject;
  summary: string;
}

interface Live {
  phases: Partial<Record<Platform, string>>;
  events: Partial<Record<Platform, RunEvent[]>>;
}

const PHASE_TEXT: Record<string, string> = { compile: "compiling", build: "building", start: "starting", run: "running" };

const pretty = (v: unknown) => JSON.stringify(v, null, 2);

export interface RunPanelProps {
  model: Model;
  platforms: Platform[];
  onHighlight: (marks: Map<string, RunMark>) => void;
  onSelectNode: (id: string) => void;
  /** Told when a run starts (a pending stop is then cancelled) and ends. */
  onBusy: (busy: boolean) => void;
}

export function RunPanel(p: RunPanelProps) {
  const fields = useMemo(() => formFields(p.model), [p.model]);
  const target = targetOf(p.model);
  const [chosen, setChosen] = useState<Platform[]>(() => [target]);
  // Until a box is ticked by hand, the targets follow the document's.
  const chosenByHand = useRef(false);
  useEffect(() => {
    if (!chosenByHand.current) setChosen([target]);
  }, [target]);
  const [values, setValues] = useState<FormValues>(() => initialValues(fields));
  const [raw, setRaw] = useState(false);
  const [rawText, setRawText] = useState("");
  const [llm, setLlm] = useState<"echo" | "provider">("echo");
  // Provider variables: this component's memory only, never stored.
  const [env, setEnv] = useState<{ name: string; value: string }[]>([]);
  const [busy, setBusy] = useState(false);
  const [live, setLive] = useState<Live>({ phases: {}, events: {} });
  const [answer, setAnswer] = useState<RunAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [last, setLast] = useState<{ platforms: Platform[]; threadId: string | null; request: JsonObject; llm: "echo" | "provider" } | null>(null);
  const [caseName, setCaseName] = useState("");
  const [caseSaved, setCaseSaved] = useState<{ ok: boolean; text: string } | null>(null);
  const [resumeText, setResumeText] = useState("");
  const [history, setHistory] = useState<HistoryItem[]>([]);
  // A field's problem shows once it has text, or once a run was tried.
  const [tried, setTried] = useState(false);
  const problems = useMemo(() => formProblems(fields, values), [fields, values]);
  const problemOf = (name: string) => (tried || (values[name] ?? "").trim() !== "" ? problems[name] : undefined);

  // New fields (an edited schema) start at their defaults; typed values stay.
  useEffect(() => {
    setValues((v) => ({ ...initialValues(fields), ...Object.fromEntries(Object.entries(v).filter(([k]) => fields.some((f) => f.name === k))) }));
  }, [fields]);

  // The canvas follows the first target of the last run that has events.
  const marks = useMemo(() => {
    const events = (last?.platforms ?? []).map((pl) => live.events[pl] ?? []).find((e) => e.length) ?? [];
    return highlights(events);
  }, [live, last]);
  const { onHighlight } = p;
  useEffect(() => onHighlight(marks), [marks, onHighlight]);

  const formRequest = (): JsonObject | string => {
    if (raw) {
      try {
        const r = JSON.parse(rawText) as Json;
        return typeof r === "object" && r !== null && !Array.isArray(r) ? r : "the request must be a JSON object, such as {\"state\": {...}}";
      } catch (e) {
        return `the request is not JSON: ${e instanceof Error ? e.message : String(e)}`;
      }
    }
    const s = stateFromForm(fields, values);
    return "error" in s ? s.error : { state: s.state };
  };

  const toggleRaw = () => {
    if (!raw) {
      setRawText(pretty({ state: draftState(fields, values) }));
    } else {
      try {
        const r = JSON.parse(rawText) as Json;
        if (isObject(r) && isObject(r.state)) setValues(valuesFromState(fields, r.state));
      } catch {
        /* keep the form as it was */
      }
    }
    setRaw(!raw);
  };

  const send = async (request: JsonObject, platforms: Platform[], record: boolean) => {
    if (!platforms.length) {
      setError("choose one or more targets");
      return;
    }
    setError(null);
    setBusy(true);
    p.onBusy(true);
    setAnswer(null);
    setLive({ phases: {}, events: {} });
    const threadId = typeof request.threadId === "string" ? request.threadId : null;
    setLast({ platforms, threadId, request, llm });
    setCaseSaved(null);
    const onLine = (line: RunLine) => {
      if (line.type === "phase") setLive((l) => ({ ...l, phases: { ...l.phases, [line.platform]: line.phase } }));
      else if (line.type === "event")
        setLive((l) => ({ ...l, events: { ...l.events, [line.platform]: [...(l.events[line.platform] ?? []), line.event as RunEvent] } }));
    };
    try {
      const body = {
        model: p.model,
        platforms,
        request,
        llm: llm === "echo" ? ({ mode: "echo" } as const) : { mode: "provider" as const, env: Object.fromEntries(env.filter((e) => e.name.trim()).map((e) => [e.name.trim(), e.value])) },
      };
      const a = await run(body, onLine);
      setAnswer(a);
      if (record) setHistory((h) => [{ at: new Date().toLocaleTimeString(), platforms, request, summary: summary(a.runs) }, ...h].slice(0, 50));
    } catch (e) {
      setError(e instanceof ApiError ? `${e.message} (${e.code})` : e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
      p.onBusy(false);
    }
  };

  const submit = () => {
    setTried(true);
    const r = formRequest();
    if (typeof r === "string") {
      setError(r);
      return;
    }
    const request = { ...r };
    // One thread id for every target, so that one resume reaches them all.
    if (hasCheckpointer(p.model) && request.threadId === undefined && request.resume === undefined) request.threadId = randomId();
    void send(request, chosen, true);
  };

  const resume = () => {
    const threadId = last ? resumeThread(last.threadId, answer?.runs ?? {}) : null;
    if (!last || !threadId) {
      setError("no thread to resume: the answer named none");
      return;
    }
    void send({ threadId, resume: resumeValue(resumeText) }, last.platforms, true);
  };

  const replay = (h: HistoryItem) => {
    const request = { ...h.request };
    if (typeof request.threadId === "string" && request.resume === undefined) request.threadId = randomId();
    if (isObject(request.state)) setValues(valuesFromState(fields, request.state));
    setRawText(pretty(request));
    chosenByHand.current = true;
    setChosen(h.platforms);
    void send(request, h.platforms, true);
  };

  const shown = (answer ? (Object.keys(answer.runs) as Platform[]) : last?.platforms) ?? [];
  const source = answer && !busy ? caseSource(answer.runs, shown) : null;

  // The run as a case of the document's test file; `svc test` runs it on
  // every target with the stand-in model, so only echo-model runs qualify.
  const saveAsCase = async () => {
    if (!source || !last) return;
    try {
      const { platform, ...from } = source;
      const saved = await saveCase({ model: p.model, name: caseName.trim(), request: last.request, ...from });
      setCaseSaved({ ok: true, text: `saved as case ${saved.cases} of ${saved.path} (from ${platform}'s answer)` });
      setCaseName("");
    } catch (e) {
      setCaseSaved({ ok: false, text: e instanceof ApiError ? `${e.message} (${e.code})` : e instanceof Error ? e.message : String(e) });
    }
  };
  const interrupted = answer ? (pausedOn(answer.runs) as Platform[]) : [];

  return (
    <aside className="run-panel" data-testid="run-panel">
      <header>
        <b>Run</b>
        <span className="dim">the document as edited, built and started on this machine</span>
      </header>
      <section className="run-targets">
        {(p.platforms.length ? p.platforms : [...PLATFORMS]).map((pl) => (
          <label key={pl}>
            <input
              type="checkbox"
              data-testid={`run-platform-${pl}`}
              checked={chosen.includes(pl)}
              onChange={(e) => {
                chosenByHand.current = true;
                const on = e.target.checked;
                setChosen((c) => (on ? [...c.filter((x) => x !== pl), pl] : c.filter((x) => x !== pl)));
              }}
            />
            {pl}
          </label>
        ))}
      </section>
      <section className="run-llm">
        <label>
          <input type="radio" name="run-llm" data-testid="run-llm-echo" checked={llm === "echo"} onChange={() => setLlm("echo")} /> offline echo model
        </label>
        <label>
          <input type="radio" name="run-llm" data-testid="run-llm-provider" checked={llm === "provider"} onChange={() => setLlm("provider")} /> the document's provider
        </label>
        {llm === "provider" ? (
          <div className="run-env">
            <div className="dim">Variables added to this machine's environment for the services (kept in this page's memory only, never saved).</div>
            {env.map((e, i) => (
              <div key={i} className="run-env-row">
                <input type="text" data-testid="run-env-name" aria-label="variable name" spellCheck={false} placeholder="OPENAI_API_KEY" value={e.name} onChange={(ev) => setEnv((all) => all.map((x, j) => (j === i ? { ...x, name: ev.target.value } : x)))} />
                <input data-testid="run-env-value" type="password" aria-label="variable value" autoComplete="off" value={e.value} onChange={(ev) => setEnv((all) => all.map((x, j) => (j === i ? { ...x, value: ev.target.value } : x)))} />
                <button type="button" onClick={() => setEnv((all) => all.filter((_, j) => j !== i))} title="Remove">
                  ×
                </button>
              </div>
            ))}
            <button type="button" data-testid="run-env-add" onClick={() => setEnv((all) => [...all, { name: "", value: "" }])}>
              add a variable
            </button>
          </div>
        ) : null}
      </section>
      <section className="run-request">
        <div className="run-request-head">
          <b>Request</b>
          <label>
            <input type="checkbox" data-testid="run-raw-toggle" checked={raw} onChange={toggleRaw} /> raw JSON
          </label>
        </div>
        {raw ? (
          <textarea data-testid="run-raw-json" rows={8} value={rawText} onChange={(e) => setRawText(e.target.value)} spellCheck={false} />
        ) : (
          fields.map((f) => (
            <label key={f.name} className="run-field" title={f.description ?? undefined}>
              <span>
                {f.name}
                {f.required ? <b className="req"> *</b> : null} <span className="dim">{f.type}</span>
              </span>
              {f.type === "boolean" ? (
                <select data-testid={`run-field-${f.name}`} value={values[f.name] ?? ""} onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.value }))}>
                  <option value="">(default)</option>
                  <option value="true">true</option>
                  <option value="false">false</option>
                </select>
              ) : (
                <input
                  type="text"
                  data-testid={`run-field-${f.name}`}
                  spellCheck={f.type === "string"}
                  inputMode={f.type === "integer" ? "numeric" : f.type === "number" ? "decimal" : undefined}
                  aria-invalid={problemOf(f.name) !== undefined}
                  value={values[f.name] ?? ""}
                  placeholder={f.type === "array" ? "[...]" : f.type === "object" ? "{...}" : ""}
                  onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.value }))}
                />
              )}
              {problemOf(f.name) ? (
                <span className="run-field-problem err" data-testid={`run-field-problem-${f.name}`}>
                  {problemOf(f.name)}
                </span>
              ) : null}
            </label>
          ))
        )}
        {!raw && !fields.length ? <div className="dim">The document's state has no fields: the request is {"{\"state\": {}}"}.</div> : null}
        <div className="run-actions">
          <button type="button" className="primary" data-testid="run-submit" disabled={busy} onClick={submit}>
            {busy ? "Running…" : "Run"}
          </button>
          <button type="button" data-testid="run-stop" onClick={() => void stopRuns().catch((e) => setError(String(e)))} title="Stop every service the designer started">
            Stop services
          </button>
        </div>
        {error ? (
          <div className="err" data-testid="run-error">
            {error}
          </div>
        ) : null}
      </section>

      {shown.length > 1 && answer ? <Differences answer={answer} platforms={shown} /> : null}

      {source && last ? (
        <section className="run-save-case" data-testid="run-save-case">
          <b>Save as a test case</b>{" "}
          <span className="dim">
            {last.llm === "echo" ? `the request and ${source.platform}'s answer, in the document's NAME.tests.json (svc test)` : "only runs with the offline echo model: svc test stands in for the model the same way"}
          </span>
          <div className="run-actions">
            <input data-testid="run-case-name" placeholder="the case's name" value={caseName} onChange={(e) => setCaseName(e.target.value)} />
            <button type="button" data-testid="run-case-save" disabled={last.llm !== "echo" || !caseName.trim()} onClick={() => void saveAsCase()}>
              Save case
            </button>
          </div>
          {caseSaved ? (
            <div className={caseSaved.ok ? "dim" : "err"} data-testid="run-case-saved">
              {caseSaved.text}
            </div>
          ) : null}
        </section>
      ) : null}

      {interrupted.length ? (
        <section className="run-resume">
          <b>Paused</b> <span className="dim">on {interrupted.join(", ")}: the reviewer's value resumes every target's thread</span>
          <div className="run-actions">
            <input data-testid="run-resume-value" placeholder='a value, or JSON such as {"ok": true}' value={resumeText} onChange={(e) => setResumeText(e.target.value)} />
            <button type="button" className="primary" data-testid="run-resume-submit" disabled={busy} onClick={resume}>
              Resume
            </button>
          </div>
        </section>
      ) : null}

      {shown.map((pl) => (
        <TargetResult key={pl} platform={pl} result={answer?.runs[pl]} phase={live.phases[pl]} events={answer?.runs[pl]?.events ? (answer.runs[pl].events as RunEvent[]) : (live.events[pl] ?? [])} busy={busy} onSelectNode={p.onSelectNode} />
      ))}

      {history.length ? (
        <section className="run-history" data-testid="run-history">
          <b>History</b>
          <ul>
            {history.map((h, i) => (
              <li key={i} data-testid="run-history-item">
                <span className="dim">{h.at}</span> <code>{JSON.stringify(h.request.state ?? h.request)}</code> <span>{h.summary}</span>
                <button type="button" data-testid="run-history-replay" disabled={busy} onClick={() => replay(h)}>
                  replay
                </button>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </aside>
  );
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function Differences({ answer, platforms }: { answer: RunAnswer; platforms: Platform[] }) {
  const how = comparison(answer.runs, answer.differences, platforms);
  if (how === "same") {
    return (
      <section className="run-same" data-testid="run-same">
        Same answer on {platforms.join(", ")}
      </section>
    );
  }
  if (how === "incomplete") {
    return <section className="dim">Not every target answered: nothing to compare.</section>;
  }
  return (
    <section className="run-differences" data-testid="run-differences">
      <b>Differences</b>
      <table>
        <thead>
          <tr>
            <th>field</th>
            {platforms.map((pl) => (
              <th key={pl}>{pl}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {answer.differences.map((d) => (
            <tr key={d.field} data-testid="run-difference" data-field={d.field}>
              <td>
                <code>{d.field}</code>
              </td>
              {platforms.map((pl) => (
                <td key={pl}>
                  <code>{JSON.stringify(d.values[pl] ?? null)}</code>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function TargetResult(p: { platform: Platform; result: RunResult | undefined; phase: string | undefined; events: RunEvent[]; busy: boolean; onSelectNode: (id: string) => void }) {
  const r = p.result;
  const rows = timeline(p.events);
  const body = isObject(r?.body) ? r.body : null;
  return (
    <section className={`run-result${r?.error || (r?.status ?? 200) >= 400 ? " failed" : ""}`} data-testid={`run-result-${p.platform}`}>
      <header>
        <b>{p.platform}</b>
        <span data-testid={`run-phase-${p.platform}`} className="dim">
          {r ? (r.error ? `stopped at ${r.phase}` : "done") : p.busy ? (PHASE_TEXT[p.phase ?? ""] ?? "waiting") : ""}
        </span>
        {r?.status !== undefined ? (
          <span className={`run-status${r.status >= 400 ? " err" : ""}`} data-testid={`run-status-${p.platform}`}>
            {r.status}
          </span>
        ) : null}
        {r?.ms !== undefined ? <span className="dim" title="the request's time">{formatMs(r.ms)}</span> : null}
        {r?.build ? <span className="dim" data-testid={`run-build-${p.platform}`}>{buildText(r.build)}</span> : null}
        {usageText(r?.body) ? (
          <span className="dim" title="what the run spent on model calls" data-testid={`run-usage-${p.platform}`}>
            {usageText(r?.body)}
          </span>
        ) : null}
      </header>
      {r?.error ? (
        <div className="err" data-testid={`run-failure-${p.platform}`}>
          {r.error.message} <code>{r.error.code}</code>
        </div>
      ) : null}
      {r?.diagnostics?.length ? (
        <ul className="run-places">
          {r.diagnostics.map((d, i) => (
            <li key={i} className={d.node ? "link" : undefined} onClick={() => d.node && p.onSelectNode(d.node)}>
              <code>{d.code}</code> {d.node ? <b>{d.node}</b> : null} {d.message}
            </li>
          ))}
        </ul>
      ) : null}
      {r?.locations?.length ? (
        <ul className="run-places" data-testid={`run-locations-${p.platform}`}>
          {r.locations.map((l, i) => (
            <li key={i} className={l.node ? "link" : undefined} onClick={() => l.node && p.onSelectNode(l.node)}>
              {l.node ? (
                <b>
                  {l.node} line {l.line}, column {l.column}
                </b>
              ) : (
                <code>
                  {l.file}:{l.fileLine}
                </code>
              )}{" "}
              {l.message}
            </li>
          ))}
        </ul>
      ) : null}
      {body && body.interrupt !== undefined ? (
        <div className="run-interrupt" data-testid={`run-interrupt-${p.platform}`}>
          <b>paused</b> <code>{pretty(body.interrupt)}</code>
        </div>
      ) : null}
      {rows.length ? (
        <ol className="run-timeline" data-testid={`run-timeline-${p.platform}`}>
          {rows.map((row) => (
            <li key={row.key} className={`tl-${row.state}`}>
              <span>{row.label}</span>
              {row.tokens ? <div className="tokens">{row.tokens}</div> : null}
              {row.patch !== undefined ? <code className="patch">{JSON.stringify(row.patch)}</code> : null}
            </li>
          ))}
        </ol>
      ) : null}
      {r?.body !== undefined ? (
        <pre className="run-body" data-testid={`run-body-${p.platform}`}>
          {pretty(r.body)}
        </pre>
      ) : null}
      {r?.log ? (
        <details>
          <summary>output</summary>
          <pre className="run-log">{r.log}</pre>
        </details>
      ) : null}
    </section>
  );
}
