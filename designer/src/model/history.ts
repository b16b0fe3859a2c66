// Undo/redo: one stack of immutable model snapshots. Every user action
// commits one snapshot; typing commits many times but coalesces into one
// step while the same field keeps focus and pauses stay under a second.

export interface History<T> {
  past: T[];
  present: T;
  future: T[];
  /** Coalescing key of the last commit (null: the next commit is a new step). */
  lastKey: string | null;
  lastTime: number;
}

export interface CommitOptions {
  /** Commits with the same key less than `COALESCE_MS` apart form one step. */
  key?: string;
  now?: number;
}

export const COALESCE_MS = 1000;
export const HISTORY_LIMIT = 300;

export function createHistory<T>(present: T): History<T> {
  return { past: [], present, future: [], lastKey: null, lastTime: 0 };
}

export function commit<T>(h: History<T>, next: T, opts: CommitOptions = {}): History<T> {
  if (next === h.present) return h;
  const now = opts.now ?? Date.now();
  const key = opts.key ?? null;
  if (key !== null && key === h.lastKey && now - h.lastTime < COALESCE_MS && h.past.length > 0) {
    // Same field, still typing: replace the present, keep the step's start in `past`.
    return { ...h, present: next, future: [], lastTime: now };
  }
  const past = [...h.past, h.present];
  if (past.length > HISTORY_LIMIT) past.splice(0, past.length - HISTORY_LIMIT);
  return { past, present: next, future: [], lastKey: key, lastTime: now };
}

export function canUndo<T>(h: History<T>): boolean {
  return h.past.length > 0;
}

export function canRedo<T>(h: History<T>): boolean {
  return h.future.length > 0;
}

export function undo<T>(h: History<T>): History<T> {
  if (h.past.length === 0) return h;
  const past = h.past.slice(0, -1);
  return { past, present: h.past[h.past.length - 1], future: [h.present, ...h.future], lastKey: null, lastTime: 0 };
}

export function redo<T>(h: History<T>): History<T> {
  if (h.future.length === 0) return h;
  const [next, ...future] = h.future;
  return { past: [...h.past, h.present], present: next, future, lastKey: null, lastTime: 0 };
}

/** Ends the current coalescing run (a field lost focus). */
export function seal<T>(h: History<T>): History<T> {
  return h.lastKey === null ? h : { ...h, lastKey: null };
}
