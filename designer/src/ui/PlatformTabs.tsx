// The tab row of a per-platform editor (native bodies, connector templates):
// one tab per platform, marked when the platform has an entry and flagged
// when a diagnostic points at it.
import type { Platform } from "../model/types.ts";

export interface PlatformTabsProps {
  platforms: readonly Platform[];
  active: Platform;
  onTab: (p: Platform) => void;
  /** Whether the platform has an entry (a dot on its tab). */
  has: (p: Platform) => boolean;
  flagged: (p: Platform) => boolean;
  /** `data-testid` of each tab: `<testIdPrefix>-<platform>`. */
  testIdPrefix: string;
  /** What an entry is, for the tab's title. */
  entry: string;
}

export function PlatformTabs(props: PlatformTabsProps) {
  return (
    <div className="tabs" role="tablist">
      {props.platforms.map((p) => (
        <button
          key={p}
          type="button"
          role="tab"
          aria-selected={p === props.active}
          className={`tab${p === props.active ? " active" : ""}${props.flagged(p) ? " flagged" : ""}`}
          data-testid={`${props.testIdPrefix}-${p}`}
          onClick={() => props.onTab(p)}
          title={props.has(p) ? `${p}: has a ${props.entry}` : `${p}: no ${props.entry}`}
        >
          {p}
          {props.has(p) ? <span className="dot" aria-label={`has a ${props.entry}`} /> : null}
        </button>
      ))}
    </div>
  );
}
