// The node kinds, per target: a kind the chosen backend does not build is
// disabled and shows the backend's own reason.

import type { BackendCapabilities } from "../api/client.ts";
import { nodeKinds } from "../inspector/schema.ts";
import { PALETTE_MIME } from "./Canvas.tsx";

export interface KindStatus {
  enabled: boolean;
  reason?: string;
}

export function kindStatus(caps: BackendCapabilities | undefined, platform: string, kind: string): KindStatus {
  if (!caps) return { enabled: true };
  if (caps.nodeKinds.includes(kind)) return { enabled: true };
  const reason = caps.reasons.find((r) => r.requirement === `node-kind:${kind}`)?.reason;
  return { enabled: false, reason: reason ?? `${platform} does not build ${kind} nodes` };
}

/** From the IR's schema: a new kind is here without code. */
const NODE_KINDS = nodeKinds();

export function Palette(props: { caps: BackendCapabilities | undefined; platform: string; onAdd: (kind: string) => void }) {
  return (
    <aside className="palette" aria-label="node kinds">
      <h2>Nodes</h2>
      <p className="dim small">Click to add, or drag onto the canvas.</p>
      <ul>
        {NODE_KINDS.map((kind) => {
          const st = kindStatus(props.caps, props.platform, kind);
          return (
            <li key={kind}>
              <button
                type="button"
                className={`palette-item kind-${kind}`}
                data-testid={`palette-${kind}`}
                disabled={!st.enabled}
                aria-disabled={!st.enabled}
                title={st.enabled ? `add a ${kind} node` : st.reason}
                draggable={st.enabled}
                onDragStart={(e) => {
                  e.dataTransfer.setData(PALETTE_MIME, kind);
                  e.dataTransfer.effectAllowed = "copy";
                }}
                onClick={() => st.enabled && props.onAdd(kind)}
              >
                <span className="palette-kind">{kind}</span>
                {!st.enabled ? <span className="palette-reason">{st.reason}</span> : null}
              </button>
            </li>
          );
        })}
      </ul>
    </aside>
  );
}
