// What the browser tests share: starting `svc design` (not a test itself:
// `node --test` runs the *.test.mjs files only).

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** Starts `svc design DOC` (the binary in SVC_BIN) with `env` added, and
 * resolves with the child and its address once printed. */
export function startDesigner(doc, env = {}) {
  const child = spawn(process.env.SVC_BIN, ["design", doc, "--no-open"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("svc design printed no address in 30 s")), 30_000);
    createInterface({ input: child.stdout }).once("line", (line) => {
      clearTimeout(timer);
      resolve({ child, url: line.trim().split(" ").pop() });
    });
    child.once("exit", (code) => reject(new Error(`svc design exited with ${code}`)));
  });
}
