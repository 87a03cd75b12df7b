// What a resume brings back from a session record, and the notes it owes the user (a record from
// another build, a Git branch that changed since).

import { VERSION } from "../version.ts";
import type { SessionRecord } from "./records.ts";

/** What a resume brings back from a record, and nothing else. */
export interface RestoredState {
  messages: SessionRecord["messages"];
  plan: SessionRecord["plan"];
  spend: SessionRecord["spend"];
  branch: SessionRecord["branch"];
  trust: SessionRecord["trust"];
  btw: SessionRecord["btw"];
}

/**
 * The state a resume restores: the conversation, the plan, the spend, the branch, the trust map
 * and allowed commands, and the side questions. Copies, so the record is not shared.
 */
export function restoredState(record: SessionRecord): RestoredState {
  return structuredClone({
    messages: record.messages,
    plan: record.plan,
    spend: record.spend,
    branch: record.branch,
    trust: record.trust,
    btw: record.btw,
  });
}

/** The notes a resume prints: a record from another build, and a changed Git branch. */
export function resumeNotes(
  record: SessionRecord,
  here: { branch: string | null; build?: string },
): string[] {
  const notes: string[] = [];
  const build = here.build ?? VERSION;
  if (record.build !== build) {
    notes.push(
      `This session was recorded by logbook ${
        record.build || "(unknown)"
      }; this is logbook ${build}`,
    );
  }
  if ((record.branch ?? null) !== here.branch) {
    notes.push(
      `The Git branch changed: the session ran on ${branchName(record.branch)}, ` +
        `this is ${branchName(here.branch)}`,
    );
  }
  return notes;
}

function branchName(branch: string | null): string {
  return branch === null ? "no branch" : `"${branch}"`;
}
