import { test } from "node:test";
import assert from "node:assert/strict";
import { canRedo, canUndo, commit, createHistory, redo, seal, undo } from "./history.ts";

test("one commit is one undo step", () => {
  let h = createHistory("a");
  h = commit(h, "b");
  h = commit(h, "c");
  assert.equal(h.present, "c");
  h = undo(h);
  assert.equal(h.present, "b");
  h = undo(h);
  assert.equal(h.present, "a");
  assert.equal(canUndo(h), false);
  h = redo(h);
  h = redo(h);
  assert.equal(h.present, "c");
  assert.equal(canRedo(h), false);
});

test("typing in one field coalesces while pauses stay under a second", () => {
  let h = createHistory("");
  h = commit(h, "h", { key: "f@1", now: 1000 });
  h = commit(h, "he", { key: "f@1", now: 1300 });
  h = commit(h, "hel", { key: "f@1", now: 1900 });
  assert.equal(h.past.length, 1);
  // A pause of a second starts a new step.
  h = commit(h, "hell", { key: "f@1", now: 3000 });
  assert.equal(h.past.length, 2);
  h = undo(h);
  assert.equal(h.present, "hel");
  h = undo(h);
  assert.equal(h.present, "");
});

test("another field, a new focus or a seal starts a new step", () => {
  let h = createHistory(0);
  h = commit(h, 1, { key: "a@1", now: 0 });
  h = commit(h, 2, { key: "b@1", now: 10 });
  h = commit(h, 3, { key: "b@2", now: 20 });
  h = seal(h);
  h = commit(h, 4, { key: "b@2", now: 30 });
  assert.equal(h.past.length, 4);
});

test("an unkeyed commit never coalesces, and a new commit drops the redo stack", () => {
  let h = createHistory(0);
  h = commit(h, 1, { now: 0 });
  h = commit(h, 2, { now: 1 });
  assert.equal(h.past.length, 2);
  h = undo(h);
  assert.equal(canRedo(h), true);
  h = commit(h, 5);
  assert.equal(canRedo(h), false);
  assert.deepEqual(h.past, [0, 1]);
});

test("committing the same snapshot is no step; undo does not coalesce with what follows", () => {
  let h = createHistory("x");
  assert.equal(commit(h, "x"), h);
  h = commit(h, "xy", { key: "k", now: 0 });
  h = undo(h);
  h = commit(h, "xz", { key: "k", now: 10 });
  assert.equal(h.past.length, 1);
  assert.equal(undo(h).present, "x");
});
