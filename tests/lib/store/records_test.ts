// Tests for lib/store/records.ts: a conversation row in the form it is shown or sent.

import assert from "node:assert/strict";
import { redactSecrets } from "../../../lib/gate/secrets.ts";
import { projectKey } from "../../../lib/paths.ts";
import { conversationJson, type ConversationRow } from "../../../lib/store/records.ts";
import { fake } from "../_secret_shapes.ts";

Deno.test("conversationJson() passes every string through the gate, and the project key too", () => {
  const token = "ghp" + "_" + fake(36);
  const root = `/home/dev/${token}`;
  const row: ConversationRow = {
    id: 7,
    key: "claude:5e1d6a52-3c4b-4f6e-8a9d-0b1c2d3e4f5a",
    agent: "claude",
    native_id: "5e1d6a52-3c4b-4f6e-8a9d-0b1c2d3e4f5a",
    source_id: 1,
    project_root: root,
    project_key: projectKey(root),
    cwd: `${root}/app`,
    branch: `fix/${token}`,
    title: `Rotate ${token}`,
    first_ts: 0,
    last_ts: 1000,
    message_count: 2,
    record_count: 2,
    bytes: 10,
    parent_key: null,
    subagent: 0,
    archived: 0,
    agent_version: "2.1.40",
    agent_type: `Explore ${token}`,
    gone: 0,
  };
  const shown = conversationJson(row, redactSecrets);
  assert.ok(!JSON.stringify(shown).includes(token), JSON.stringify(shown));
  assert.ok(!JSON.stringify(shown).includes(token.toLowerCase().replace("_", "-")));
  assert.equal(shown.project, "/home/dev/[REDACTED:github-token]");
  assert.equal(shown.cwd, "/home/dev/[REDACTED:github-token]/app");
  assert.equal(shown.branch, "fix/[REDACTED:github-token]");
  assert.equal(shown.title, "Rotate [REDACTED:github-token]");
  assert.equal(shown.agentType, "Explore [REDACTED:github-token]");
  assert.equal(shown.projectKey, `redacted-github-token-${row.project_key!.slice(-12)}`);
  assert.equal(shown.id, row.key, "an id without a secret is as it is");
});
