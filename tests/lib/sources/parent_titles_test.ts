// The titles Claude Code's helper copies take from their session: a compaction's and a side
// question's, from the session's title or, without one, its short id; no other conversation's.

import assert from "node:assert/strict";
import { titledByParent, titleFromParent } from "../../../lib/sources/parent_titles.ts";

const SESSION = "9fca650e-c4d4-4601-8350-b8ea11fbd1ea";

Deno.test("titleFromParent() names a helper's copy after its session", () => {
  const compaction = `claude:${SESSION}/agent-acompact-bd10ba`;
  const aside = `claude:${SESSION}/agent-aside_question-8685694c2bcf7b75`;
  assert.equal(
    titleFromParent(compaction, "Fix the ledger sync"),
    "Compaction of Fix the ledger sync",
  );
  assert.equal(
    titleFromParent(aside, "Fix the ledger sync"),
    "Side question in Fix the ledger sync",
  );
  assert.equal(titleFromParent(compaction, null), "Compaction of claude:9fca650e");
  assert.equal(titleFromParent(aside, "  "), "Side question in claude:9fca650e");
  const long = titleFromParent(compaction, "word ".repeat(30).trim())!;
  assert.ok(long.length <= 80 && long.endsWith("…"), long);
  for (
    const key of [
      `claude:${SESSION}`,
      `claude:${SESSION}/agent-a5d9640a1c26f5806`,
      "codex:acompact-x",
    ]
  ) {
    assert.equal(titleFromParent(key, "Fix the ledger sync"), null, key);
    assert.equal(titledByParent(key), false, key);
  }
  assert.ok(titledByParent(compaction) && titledByParent(aside));
});
