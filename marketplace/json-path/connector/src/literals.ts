// Values written into generated code. Steps become a list literal of each
// language; the default goes in as JSON text, which each runtime decodes the
// way it decodes request bodies, so it is the same kind of value as the
// state's own.

import type { Step } from "./path";

/** A string literal of Go and Java (JSON's escapes are valid in both). */
export function cString(s: string): string {
  return JSON.stringify(s);
}

/** A string literal as ruff formats it: double quotes unless the text holds
 * double quotes and no single ones. */
export function pyString(s: string): string {
  const body = JSON.stringify(s).slice(1, -1);
  if (s.includes('"') && !s.includes("'")) {
    return `'${body.replace(/\\"/g, '"')}'`;
  }
  return `"${body}"`;
}

export function goSteps(steps: Step[]): string {
  return `[]any{${steps.map((s) => (typeof s === "number" ? String(s) : cString(s))).join(", ")}}`;
}

export function pySteps(steps: Step[]): string {
  return `[${steps.map((s) => (typeof s === "number" ? String(s) : pyString(s))).join(", ")}]`;
}

export function javaSteps(steps: Step[]): string {
  return `java.util.List.<Object>of(${steps.map((s) => (typeof s === "number" ? String(s) : cString(s))).join(", ")})`;
}
