// The JSONPath subset svc/json-path accepts, parsed when the graph
// compiles: `$`, then any of `.name`, `['name']` or `["name"]` (with `\`
// escapes), and `[N]` (an index; negative counts from the end). The
// generated code walks the parsed steps; it never parses a path.

/** A key of an object, or an index of a list. */
export type Step = string | number;

export class PathError extends Error {
  constructor(
    message: string,
    /** The 0-based character where the problem is. */
    readonly at: number,
  ) {
    super(message);
  }
}

const NAME_START = /[A-Za-z_$]/;
const NAME_CHAR = /[A-Za-z0-9_$-]/;
const SUPPORTED = "$ followed by .name, ['name'] or [index] steps";

export function parsePath(path: string): Step[] {
  if (!path.startsWith("$")) {
    throw new PathError(`a path starts with $ (${SUPPORTED})`, 0);
  }
  const steps: Step[] = [];
  let i = 1;
  while (i < path.length) {
    const c = path[i];
    if (c === ".") {
      if (path[i + 1] === ".") {
        throw new PathError(`recursive descent (..) is not supported (${SUPPORTED})`, i);
      }
      let j = i + 1;
      if (j >= path.length || !NAME_START.test(path[j])) {
        const what = path[j] === "*" ? "a wildcard (.*) is" : "a name is expected here, and";
        throw new PathError(`${what} not supported after . (${SUPPORTED})`, j);
      }
      while (j < path.length && NAME_CHAR.test(path[j])) j++;
      steps.push(path.slice(i + 1, j));
      i = j;
    } else if (c === "[") {
      const [step, next] = bracket(path, i);
      steps.push(step);
      i = next;
    } else {
      throw new PathError(`unexpected ${JSON.stringify(c)} (${SUPPORTED})`, i);
    }
  }
  return steps;
}

/** The step of a `[...]` at `start`, and where parsing goes on. */
function bracket(path: string, start: number): [Step, number] {
  const quote = path[start + 1];
  if (quote === "'" || quote === '"') {
    let key = "";
    let j = start + 2;
    while (j < path.length && path[j] !== quote) {
      if (path[j] === "\\") {
        j++;
        if (j >= path.length) break;
      }
      key += path[j];
      j++;
    }
    if (j >= path.length) {
      throw new PathError("the quoted name is not closed", start + 1);
    }
    if (path[j + 1] !== "]") {
      throw new PathError("] is expected after the quoted name", j + 1);
    }
    return [key, j + 2];
  }
  const close = path.indexOf("]", start);
  const inside = close < 0 ? path.slice(start + 1) : path.slice(start + 1, close);
  if (/^-?(0|[1-9][0-9]*)$/.test(inside) && close >= 0) {
    const index = Number(inside);
    if (!Number.isSafeInteger(index) || Math.abs(index) > 2 ** 31 - 1) {
      throw new PathError(`the index ${inside} is too large`, start + 1);
    }
    return [index, close + 1];
  }
  const what =
    inside === "*"
      ? "a wildcard ([*]) is not supported"
      : inside.startsWith("?")
        ? "a filter ([?...]) is not supported"
        : inside.includes(":")
          ? "a slice ([a:b]) is not supported"
          : close < 0
            ? "[ is not closed"
            : `[${inside}] is neither an index nor a quoted name`;
  throw new PathError(`${what} (${SUPPORTED})`, start + 1);
}

/** A path as it reads, for messages: `$.items[0]['a b']`. */
export function describe(steps: Step[]): string {
  return (
    "$" +
    steps
      .map((s) =>
        typeof s === "number"
          ? `[${s}]`
          : /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(s)
            ? `.${s}`
            : `[${JSON.stringify(s)}]`,
      )
      .join("")
  );
}
