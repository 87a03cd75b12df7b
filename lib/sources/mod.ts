// The adapters logbook captures with, in the order their sources are read: every agent's in
// lib/agents.ts, loaded with their capture code.

import type { Adapter } from "./adapter.ts";
import { loadAdapters } from "../agents.ts";

/**
 * Every adapter, in capture order: transcripts before what refers to them (persisted tool
 * output, prompt history), so a session's own records come first. An agent's adapters other
 * than its transcripts' `claims` their sources (`adapterOf`).
 */
export const ADAPTERS: readonly Adapter[] = await loadAdapters();
