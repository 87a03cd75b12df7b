// The adversarial searches are made of the store's own commonest words and 3-letter prefixes,
// read in one pass over the index's terms (bench/_adversarial.ts).

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { adversarialQueries } from "../../bench/_adversarial.ts";
import { removeDir, tempDir } from "../_helpers.ts";

Deno.test("adversarialQueries() takes the words in the most records, equals in the index's order, and the prefixes used most", async () => {
  const dir = await tempDir("logbook-adversarial-");
  try {
    const path = join(dir, "history.db");
    const db = new DatabaseSync(path);
    db.exec("CREATE VIRTUAL TABLE fts USING fts5(text)");
    const insert = db.prepare("INSERT INTO fts (text) VALUES (?)");
    // zeta and beta in five records each (a tie: beta comes first in the index), alpha in four
    // though written more often, then a hundred words in one record each.
    for (let i = 0; i < 5; i++) insert.run(`zeta beta${i < 4 ? " alpha alpha alpha" : ""}`);
    for (let i = 0; i < 100; i++) insert.run(`word${String(i).padStart(3, "0")}`);
    db.close();

    const queries = new Map(adversarialQueries(path).map((q) => [q.name, q.query]));
    const common = queries.get("64 commonest words, OR")!.split(" OR ");
    assert.deepEqual(common.slice(0, 4), ["beta", "zeta", "alpha", "word000"]);
    assert.equal(common.length, 64);
    assert.equal(common.at(-1), "word060");
    // The prefixes by how often they are written: wor 100 times, alp 12, bet and zet 5.
    assert.deepEqual(
      queries.get("8 commonest 3-letter prefixes, OR")!.split(" OR ").slice(0, 2),
      ["wor*", "alp*"],
    );
  } finally {
    await removeDir(dir);
  }
});
