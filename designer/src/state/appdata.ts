// What the server told us (capabilities, connectors) and the last
// validation, for the components that show them.

import { createContext, useContext } from "react";
import type { BackendCapabilities, Connector } from "../api/client.ts";
import type { Diagnostic, Platform } from "../model/types.ts";

export interface AppData {
  platform: Platform;
  capabilities: Record<string, BackendCapabilities>;
  connectors: Connector[];
  diagnostics: Diagnostic[];
}

export const AppDataContext = createContext<AppData>({ platform: "go", capabilities: {}, connectors: [], diagnostics: [] });

export const useAppData = () => useContext(AppDataContext);
