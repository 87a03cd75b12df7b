// Show's figures: the first page of the longest conversation, in-process through
// `pageConversation`, and the show command end to end (from its bundle and from its sources),
// each run beside an empty script with show's flags, the runtime's own start-up.

import type { Redactor } from "../lib/gate/secrets.ts";
import { ADAPTERS } from "../lib/sources/mod.ts";
import { pageConversation } from "../lib/store/conversations.ts";
import type { HistoryStore } from "../lib/store/db.ts";
import { type ConversationRow, TextDeriver } from "../lib/store/records.ts";
import {
  type BundleRuns,
  commandArgs,
  commandEnv,
  timeBundleAndSources,
  timeEmptyScript,
} from "./_measure.ts";
import { taskFlags } from "./_util.ts";

/** The first page of the longest conversation: in-process, and the command spawn to exit. */
export interface ShowReport {
  runs: number[];
  conversation: string;
  records: number;
  page: number;
  cli: BundleRuns;
  /** An empty script's runs with show's flags, each beside the command's run of that index. */
  empty: number[];
}

/** Times the first page of the longest conversation, 9 times in-process then the command's. */
export async function measureShow(options: {
  store: HistoryStore;
  redact: Redactor;
  vars: Record<string, string>;
  work: string;
  runs: number;
  log: (message: string) => void;
}): Promise<ShowReport> {
  const { store, redact, log } = options;
  const longest = store.db.prepare(
    "SELECT * FROM conversations ORDER BY record_count DESC, id LIMIT 1",
  ).get() as unknown as ConversationRow;
  log(`show: first page of ${longest.key} (${longest.record_count} records) ×9`);
  const runs: number[] = [];
  let page = 0;
  for (let i = 0; i <= 9; i++) {
    const t = performance.now();
    const first = pageConversation(store, new TextDeriver(store, ADAPTERS, redact), longest);
    if (i > 0) runs.push(performance.now() - t);
    page = first.records.length;
  }
  log(`show command: first page of ${longest.key} ×${options.runs}`);
  const flags = taskFlags("show");
  const args = commandArgs(flags, "show.ts", [longest.key]);
  const env = commandEnv(options.vars);
  const empty: number[] = [];
  const cli = await timeBundleAndSources(
    options.vars,
    options.runs,
    () => args,
    "show",
    0,
    async (i) => {
      const ms = await timeEmptyScript(options.work, flags, env);
      if (i > 0) empty.push(ms);
    },
  );
  return { runs, conversation: longest.key, records: longest.record_count, page, cli, empty };
}
