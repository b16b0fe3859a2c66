// Which nodes the run panel's last run is in (running) or went through
// (visited), for the canvas.

import { createContext, useContext } from "react";

export type RunMark = "running" | "visited";

export const RunHighlightContext = createContext<Map<string, RunMark>>(new Map());

export const useRunMark = (id: string): RunMark | undefined => useContext(RunHighlightContext).get(id);
