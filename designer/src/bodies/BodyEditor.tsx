// Native bodies, one tab per platform. Each platform's text is its own:
// switching tabs never translates or copies a body.

import { useMemo } from "react";
import type { Extension } from "@codemirror/state";
import { python } from "@codemirror/lang-python";
import { java } from "@codemirror/lang-java";
import { go } from "@codemirror/lang-go";
import { CodeMirror } from "../ui/CodeMirror.tsx";
import { PlatformTabs } from "../ui/PlatformTabs.tsx";
import { PLATFORMS, type Platform } from "../model/types.ts";

const LANG: Record<Platform, () => Extension> = { "python-svc": python, "java-svc": java, go };

/** A node's body, per platform. */
export const NODE_SIGNATURE: Record<Platform, string> = {
  "python-svc": "Body of def node(state: dict) -> dict: return a dict patch of state fields.",
  "java-svc": "Statements that assign result (Object); state is a read-only Map<String, Object>.",
  go: "Body of func(ctx context.Context, state State) (State, error): return a State patch.",
};

export interface BodyEditorProps {
  active: Platform;
  onTab: (p: Platform) => void;
  get: (p: Platform) => string;
  set: (p: Platform, text: string) => void;
  /** Platforms whose tab a diagnostic points at. */
  flagged: Set<string>;
  onBlur?: () => void;
  /** What the body is, per platform (default: a node's body). */
  signature?: Record<Platform, string>;
}

export function BodyEditor(props: BodyEditorProps) {
  const active = props.active;
  const language = useMemo(() => LANG[active](), [active]);
  return (
    <div className="body-editor">
      <PlatformTabs
        platforms={PLATFORMS}
        active={active}
        onTab={props.onTab}
        has={(p) => Boolean(props.get(p))}
        flagged={(p) => props.flagged.has(p)}
        testIdPrefix="body-tab"
        entry="body"
      />
      <div className="help">{(props.signature ?? NODE_SIGNATURE)[active]}</div>
      <CodeMirror
        key={active}
        testId="body-editor"
        ariaLabel={`${active} body`}
        value={props.get(active)}
        language={language}
        onChange={(t) => props.set(active, t)}
        onBlur={props.onBlur}
        className="code"
      />
    </div>
  );
}
