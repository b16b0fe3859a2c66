// The flat model the unit tests edit: the Rust conversion's own output for
// fixtures/valid/support_triage.graph.json (testdata/, checked against it by
// `cargo test -p svc-cli the_designer_tests_use_this_flat_model`), so the
// app has one conversion, the server's.
import supportTriage from "./testdata/support_triage.flat.json";
import type { Model } from "./types.ts";

const FLAT: Record<string, unknown> = { support_triage: supportTriage };

export function flatFixture(name: string): Model {
  return JSON.parse(JSON.stringify(FLAT[name])) as Model;
}
