// The relevance benchmark's planted facts: forty distinctive sentences, each written into one
// known Claude Code conversation among generated noise, with near misses (a word that begins like
// the fact's noun, each of its two object words alone) planted in other conversations, and the
// five queries a person would type to find each fact again: the exact word, another form of its
// verb, the noun with one typo, the first letters as typed, and two of its words in another order.

import { join } from "node:path";
import { editDistance } from "../lib/edit_distance.ts";
import { appendClaudeTurns, encodeCwd } from "./_claude.ts";
import { mulberry32, Planter, RESERVED_TERMS, TextGen, Vocabulary } from "./_text.ts";

/** One planted fact, as written in the table below. */
interface FactWords {
  /** The distinctive noun: long enough to mistype, unknown to the corpus's vocabulary. */
  noun: string;
  /** A word that begins as the noun does (4 to 7 letters alike), planted elsewhere. */
  near: string;
  /** The verb as the fact writes it, and another form of it, as a person remembers it. */
  verb: [written: string, remembered: string];
  /** Two words the fact writes in this order; each is also planted alone elsewhere. */
  object: [string, string];
}

// Regular verbs, so that both forms share their stem under Porter's or Snowball's English rules,
// none sharing a stem with another fact's words or with the corpus's most frequent words.
const FACTS: readonly FactWords[] = [
  {
    noun: "porcupine",
    near: "porcelain",
    verb: ["rotated", "rotating"],
    object: ["signing", "keys"],
  },
  {
    noun: "thermostat",
    near: "thermometer",
    verb: ["calibrated", "calibrating"],
    object: ["sensor", "offsets"],
  },
  {
    noun: "nectarine",
    near: "nectar",
    verb: ["quarantined", "quarantining"],
    object: ["upload", "buckets"],
  },
  {
    noun: "barracuda",
    near: "barracks",
    verb: ["throttled", "throttling"],
    object: ["webhook", "senders"],
  },
  {
    noun: "gondolier",
    near: "gondola",
    verb: ["deprecated", "deprecating"],
    object: ["legacy", "endpoints"],
  },
  {
    noun: "pomegranate",
    near: "pomelo",
    verb: ["encrypted", "encrypting"],
    object: ["backup", "tarballs"],
  },
  {
    noun: "peppermint",
    near: "pepperoni",
    verb: ["reconciled", "reconciling"],
    object: ["billing", "ledger"],
  },
  {
    noun: "gingerbread",
    near: "gingerly",
    verb: ["truncated", "truncating"],
    object: ["audit", "trail"],
  },
  {
    noun: "accordion",
    near: "accordingly",
    verb: ["normalized", "normalizing"],
    object: ["postal", "addresses"],
  },
  {
    noun: "rattlesnake",
    near: "rattled",
    verb: ["compressed", "compressing"],
    object: ["weekly", "snapshots"],
  },
  {
    noun: "caterpillar",
    near: "caterer",
    verb: ["archived", "archiving"],
    object: ["stale", "tickets"],
  },
  {
    noun: "harpsichord",
    near: "harpoon",
    verb: ["scheduled", "scheduling"],
    object: ["maintenance", "window"],
  },
  {
    noun: "lighthouse",
    near: "lightweight",
    verb: ["amortized", "amortizing"],
    object: ["hosting", "costs"],
  },
  {
    noun: "watermelon",
    near: "watermark",
    verb: ["interpolated", "interpolating"],
    object: ["telemetry", "gaps"],
  },
  {
    noun: "trampoline",
    near: "tramway",
    verb: ["provisioned", "provisioning"],
    object: ["staging", "clusters"],
  },
  {
    noun: "chandelier",
    near: "chandler",
    verb: ["decommissioned", "decommissioning"],
    object: ["mail", "relays"],
  },
  {
    noun: "dragonfly",
    near: "dragonfruit",
    verb: ["replicated", "replicating"],
    object: ["invoice", "mirrors"],
  },
  {
    noun: "hummingbird",
    near: "humming",
    verb: ["hydrated", "hydrating"],
    object: ["profile", "caches"],
  },
  {
    noun: "flamingo",
    near: "flamenco",
    verb: ["sanitized", "sanitizing"],
    object: ["comment", "fields"],
  },
  {
    noun: "armadillo",
    near: "armada",
    verb: ["memoized", "memoizing"],
    object: ["pricing", "lookups"],
  },
  {
    noun: "tangerine",
    near: "tangent",
    verb: ["escalated", "escalating"],
    object: ["pager", "incidents"],
  },
  {
    noun: "snowflake",
    near: "snowfall",
    verb: ["consolidated", "consolidating"],
    object: ["regional", "warehouses"],
  },
  {
    noun: "jellyfish",
    near: "jellybean",
    verb: ["deduplicated", "deduplicating"],
    object: ["customer", "contacts"],
  },
  {
    noun: "mongoose",
    near: "mongodb",
    verb: ["allocated", "allocating"],
    object: ["worker", "threads"],
  },
  {
    noun: "cathedral",
    near: "catheter",
    verb: ["benchmarked", "benchmarking"],
    object: ["parser", "variants"],
  },
  {
    noun: "boomerang",
    near: "boomer",
    verb: ["refactored", "refactoring"],
    object: ["checkout", "flow"],
  },
  {
    noun: "lemonade",
    near: "lemongrass",
    verb: ["debounced", "debouncing"],
    object: ["resize", "events"],
  },
  {
    noun: "horseshoe",
    near: "horseradish",
    verb: ["sharded", "sharding"],
    object: ["tenant", "metrics"],
  },
  {
    noun: "crocodile",
    near: "crocus",
    verb: ["bisected", "bisecting"],
    object: ["flaky", "regression"],
  },
  {
    noun: "parachute",
    near: "paradigm",
    verb: ["annotated", "annotating"],
    object: ["training", "images"],
  },
  {
    noun: "quicksilver",
    near: "quicksand",
    verb: ["authenticated", "authenticating"],
    object: ["partner", "callbacks"],
  },
  {
    noun: "labyrinth",
    near: "labyrinthine",
    verb: ["checkpointed", "checkpointing"],
    object: ["optimizer", "moments"],
  },
  {
    noun: "tortoise",
    near: "tortilla",
    verb: ["decrypted", "decrypting"],
    object: ["vault", "secrets"],
  },
  {
    noun: "dandelion",
    near: "dandruff",
    verb: ["evicted", "evicting"],
    object: ["idle", "connections"],
  },
  {
    noun: "scarecrow",
    near: "scarlet",
    verb: ["invalidated", "invalidating"],
    object: ["thumbnail", "previews"],
  },
  {
    noun: "nightingale",
    near: "nightly",
    verb: ["negotiated", "negotiating"],
    object: ["codec", "settings"],
  },
  {
    noun: "wheelbarrow",
    near: "wheelbase",
    verb: ["orchestrated", "orchestrating"],
    object: ["release", "trains"],
  },
  {
    noun: "periscope",
    near: "perimeter",
    verb: ["partitioned", "partitioning"],
    object: ["ingest", "journal"],
  },
  {
    noun: "raspberry",
    near: "raspy",
    verb: ["prefetched", "prefetching"],
    object: ["font", "bundles"],
  },
  {
    noun: "marmalade",
    near: "marmot",
    verb: ["quantized", "quantizing"],
    object: ["embedding", "weights"],
  },
];

/** How a fact is written: `{verb}`, `{noun}`, `{a}` and `{b}` are its words. */
const FACT_SENTENCES = [
  "We {verb} the {noun} {a} {b} before the Friday cut-off, so nothing else should need touching.",
  "Turns out the {noun} job {verb} its {a} {b} twice overnight, which explains the duplicate alerts.",
  "I {verb} every {noun} {a} {b} by hand and wrote the steps into the runbook.",
  "Heads up: the {noun} service {verb} the {a} {b} again after the last deploy.",
  "Last sprint the team {verb} the {a} {b} behind {noun} and nobody has complained since.",
];

/** How a near miss is written, in a conversation of its own. */
const DECOY_SENTENCES = [
  "Side note: the {w} question from last week is still open, parking it for now.",
  "Someone asked about {w} again; I pointed them at the wiki page.",
  "Not related, but {w} showed up in the review twice this morning.",
  "Left a comment about the {w} on the ticket so it does not get lost.",
];

/** The five classes of query, in the order they are reported. */
export const QUERY_CLASSES = ["exact", "form", "typo", "prefix", "order"] as const;
export type QueryClass = typeof QUERY_CLASSES[number];

/** A planted fact, where it is, and the queries that should find it. */
export interface Fact {
  sentence: string;
  /** The conversation holding it, as hits name conversations (`claude:<session id>`). */
  conversation: string;
  queries: Record<QueryClass, string>;
  /** How many letters of the noun the prefix query types. */
  prefixLetters: number;
}

/** What `plantFacts` wrote. */
export interface FactLayer {
  facts: Fact[];
  /** Conversations holding near misses. */
  decoys: number;
  /** Bytes written (all of them under `<corpus>/claude/projects`). */
  bytes: number;
  /** Query words the corpus's own vocabulary holds by chance (they make a query easier or harder). */
  collisions: string[];
}

/**
 * Writes the facts and their near misses as new Claude Code conversations into the corpus at
 * `out` (generated by `generateCorpus` with the same `seed`), each among generated turns without
 * planted terms, and returns where each fact is and its queries. Deterministic for a seed.
 */
export function plantFacts(out: string, seed: number): FactLayer {
  const random = mulberry32(seed ^ 0x31fac7);
  // The corpus's own words around the facts, as in every other conversation.
  const vocabulary = new Vocabulary(seed, RESERVED_TERMS);
  const gen = new TextGen(random, vocabulary, new Planter(0, vocabulary, random));
  gen.planting = false;
  const known = new Set(vocabulary.words);
  const collisions = FACTS.flatMap(distinctive).filter((w) => known.has(w));
  let bytes = 0;
  const conversation = (sentence: string, asUser: boolean): string => {
    const cwd = `/home/dev/src/${gen.name()}`;
    const sessionId = gen.uuid();
    const path = join(out, "claude", "projects", encodeCwd(cwd), `${sessionId}.jsonl`);
    Deno.mkdirSync(join(out, "claude", "projects", encodeCwd(cwd)), { recursive: true });
    Deno.writeTextFileSync(path, "");
    const noise = () => gen.lognormal(5_000, 0.8, 1_000, 30_000);
    bytes += appendClaudeTurns(gen, path, sessionId, cwd, noise());
    const text = `${gen.prose(gen.int(10, 60), cwd)} ${sentence} ${
      gen.prose(gen.int(10, 60), cwd)
    }`;
    const line = JSON.stringify(factLine(gen, { sessionId, cwd, text, asUser })) + "\n";
    Deno.writeTextFileSync(path, line, { append: true });
    bytes += new TextEncoder().encode(line).length;
    bytes += appendClaudeTurns(gen, path, sessionId, cwd, noise());
    return `claude:${sessionId}`;
  };

  const facts = FACTS.map((f, i): Fact => {
    const sentence = FACT_SENTENCES[i % FACT_SENTENCES.length]!
      .replace("{verb}", f.verb[0]).replace("{noun}", f.noun)
      .replace("{a}", f.object[0]).replace("{b}", f.object[1]);
    const letters = 3 + (i % 4);
    const prefix = f.noun.slice(0, letters);
    return {
      sentence,
      conversation: conversation(sentence, i % 2 === 0),
      queries: {
        exact: f.noun,
        form: f.verb[1],
        typo: typoOf(f, random, known),
        // Three or four letters alone begin hundreds of words: a person who typed that few has
        // typed a word before them.
        prefix: letters <= 4 ? `${f.verb[0]} ${prefix}` : prefix,
        order: `${f.object[1]} ${f.object[0]}`,
      },
      prefixLetters: letters,
    };
  });

  // Near misses, two to a conversation, never both object words of one fact together.
  const decoys = FACTS.flatMap((f, i) =>
    [f.near, f.near, f.object[0], f.object[1]].map((word) => ({ word, fact: i }))
  );
  for (let i = decoys.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [decoys[i], decoys[j]] = [decoys[j]!, decoys[i]!];
  }
  let conversations = 0;
  while (decoys.length) {
    const first = decoys.shift()!;
    const at = decoys.findIndex((d) => d.fact !== first.fact);
    const pair = at < 0 ? [first] : [first, ...decoys.splice(at, 1)];
    const sentences = pair.map((d) => gen.pick(DECOY_SENTENCES).replace("{w}", d.word));
    conversation(sentences.join(` ${gen.prose(gen.int(20, 80))} `), gen.chance(0.5));
    conversations++;
  }
  return { facts, decoys: conversations, bytes, collisions };
}

/** The words of a fact that the corpus should not hold (its object words may be common). */
function distinctive(f: FactWords): string[] {
  return [f.noun, f.near, ...f.verb];
}

/**
 * The noun with one typing slip (a letter left out, two swapped, a neighbour key hit, a letter
 * doubled), never in its first letter, never a word the corpus holds, and at least two edits from
 * the near miss, so that the noun is the one closest word.
 */
function typoOf(f: FactWords, random: () => number, known: Set<string>): string {
  const word = f.noun;
  for (let attempt = 0; attempt < 100; attempt++) {
    const at = 1 + Math.floor(random() * (word.length - 1));
    const c = word[at]!;
    let typo: string;
    switch (Math.floor(random() * 4)) {
      case 0:
        typo = word.slice(0, at) + word.slice(at + 1);
        break;
      case 1:
        if (at === word.length - 1) continue;
        typo = word.slice(0, at) + word[at + 1] + c + word.slice(at + 2);
        break;
      case 2: {
        const keys = NEIGHBOURS[c] ?? "";
        if (!keys) continue;
        typo = word.slice(0, at) + keys[Math.floor(random() * keys.length)] + word.slice(at + 1);
        break;
      }
      default:
        typo = word.slice(0, at) + c + word.slice(at);
    }
    if (
      typo !== word && editDistance(typo, word) === 1 && editDistance(typo, f.near) >= 2 &&
      !known.has(typo)
    ) {
      return typo;
    }
  }
  throw new Error(`No typo of "${word}" is one edit from it alone`);
}

/** Keys beside each letter on a QWERTY keyboard. */
const NEIGHBOURS: Record<string, string> = {
  a: "qwsz",
  b: "vghn",
  c: "xdfv",
  d: "serfcx",
  e: "wsdr",
  f: "drtgvc",
  g: "ftyhbv",
  h: "gyujnb",
  i: "ujko",
  j: "huikmn",
  k: "jiolm",
  l: "kop",
  m: "njk",
  n: "bhjm",
  o: "iklp",
  p: "ol",
  q: "wa",
  r: "edft",
  s: "awedxz",
  t: "rfgy",
  u: "yhji",
  v: "cfgb",
  w: "qase",
  x: "zsdc",
  y: "tghu",
  z: "asx",
};

/** A Claude Code line holding `text`: the user's prompt, or a reply's text block. */
function factLine(
  gen: TextGen,
  at: { sessionId: string; cwd: string; text: string; asUser: boolean },
): Record<string, unknown> {
  const base = {
    parentUuid: null,
    isSidechain: false,
    userType: "external",
    cwd: at.cwd,
    sessionId: at.sessionId,
    version: "2.1.41",
    gitBranch: "main",
    uuid: gen.uuid(),
    timestamp: new Date(Date.UTC(2026, 5, 1, 12) + gen.int(0, 3_600_000)).toISOString(),
  };
  if (at.asUser) return { ...base, type: "user", message: { role: "user", content: at.text } };
  return {
    ...base,
    type: "assistant",
    requestId: `req_011C${gen.hex(18)}`,
    message: {
      model: "claude-opus-4-6",
      id: `msg_01${gen.hex(22)}`,
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: at.text }],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: gen.int(1, 9), output_tokens: gen.int(10, 400) },
    },
  };
}
