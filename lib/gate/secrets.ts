// Finding secrets in text: the built-in shapes (provider tokens, private keys, credentials in
// assignments, URLs and auth headers), the spans they cover, and the text rebuilt with each span
// replaced by `[REDACTED:<label>]`. Also what every redaction shares: the `Redactor` a derived text
// passes through, `redactSecrets` (the built-in shapes alone) and `mapStrings`, the walk that
// passes a whole JSON-like value through one.

import { PREFIXED, SEPARATED_PREFIXES } from "./_secret_prefixes.ts";
import { visibleMap } from "../invisible.ts";

/** The labels the built-in secret patterns redact with (user labels come from config). */
export const SECRET_LABELS = [
  "openai-key",
  "anthropic-key",
  "github-token",
  "gitlab-token",
  "slack-token",
  "slack-webhook",
  "aws-access-key-id",
  "aws-secret-key",
  "google-api-key",
  "stripe-key",
  "jwt",
  "private-key",
  "bearer-token",
  "basic-auth",
  "password",
  "secret",
  "age-secret-key",
  "atlassian-token",
  "azure-client-secret",
  "azure-storage-key",
  "brevo-key",
  "databricks-token",
  "digitalocean-token",
  "docker-token",
  "doppler-token",
  "fcm-server-key",
  "figma-token",
  "google-oauth-secret",
  "google-oauth-token",
  "grafana-token",
  "groq-key",
  "heroku-key",
  "huggingface-token",
  "langsmith-key",
  "linear-key",
  "mailchimp-key",
  "mailgun-key",
  "newrelic-key",
  "notion-token",
  "npm-token",
  "onepassword-token",
  "openrouter-key",
  "perplexity-key",
  "planetscale-token",
  "postman-key",
  "pulumi-token",
  "pypi-token",
  "replicate-token",
  "rubygems-token",
  "sendgrid-key",
  "sentry-token",
  "shopify-token",
  "square-token",
  "supabase-token",
  "telegram-bot-token",
  "terraform-token",
  "twilio-key",
  "vault-token",
  "xai-key",
] as const;

/** The shape of a label, the same rule config applies to the keys of `secrets`. */
export const LABEL_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

// ---------------------------------------------------------------------------------------------
// Finding secrets.
//
// Three global regexes find the candidates: provider key shapes and anchors (`TOKEN_FINDER`),
// provider prefixes that end in `_`, `-`, `.` or `~` (`PREFIX_FINDER`), and key words followed by
// a separator (`KEY_FINDER`). Each alternative starts with a character that is rarer than the
// secret's first one, with lookbehinds checking the prefix, so the common case (no secret) is a
// linear scan with no work per character in JavaScript. What needs context (private keys,
// assignments, bearer tokens, credentials in URLs) is decided by a handler, and prefixed tokens
// are checked against the body their provider uses (`_secret_prefixes.ts`).
//
// Keep the first characters of `TOKEN_FINDER`'s alternatives few: V8 skips ahead over text that
// cannot start a match only while that set is small, and past it the scan is several times slower.
// That is why prefixes ending in a separator are found from the separator, in their own regex.
//
// Near misses, on purpose left alone:
// - provider prefixes inside words or with short bodies: `task-sk-learn`, `sk-learn`, `ghp_` with
//   fewer than 36 characters, `AKIA` with fewer than 16 upper-case characters after it, and `sk-`
//   or Slack bodies without a digit; a prefixed body of the wrong length or alphabet
//   (`npm_install`, `hf_hub_download`, `SG.` with short parts);
// - hashes, UUIDs and base64 payloads (no prefix, and the prefixes need a word boundary);
// - `-----BEGIN PUBLIC KEY-----`, certificates, and a private key header named in prose with
//   neither key material after it nor an END line (a header with material but no END is redacted
//   to the end of the text, and an END line with key material before it and no header, as in a
//   piece cut from a longer text, is redacted back to where the material starts);
// - `Bearer` followed by a short word; without an `Authorization:` before it, the token must be
//   20 or more characters with letters and digits;
// - assignments whose value is empty, a placeholder (`${TOKEN}`, `<token>`, `***`, `{{ x }}`),
//   an earlier `[REDACTED:…]`, or code: a call, a member path (`process.env.TOKEN`), a type or
//   keyword (`string`, `None`, `await`), a camelCase or snake_case identifier without digits
//   (`getPassword`, `user_token`), or the key's own name (`password=password`); except that 40
//   base64 characters after an AWS secret access key's name are always its value, and 40 shaped
//   as one (both cases, not words run together) after any name that says a secret (`secret`,
//   `aws-secret`, `SECRET_KEY`), whatever separates them;
// - after such a name, 40 characters that are not shaped as an AWS secret key when only spaces
//   separate them, or when the name's words are written apart (`secret key`): a SHA-1, an
//   upper-case id, an identifier (`secret 3f2a…`, `the secret getSecretAccessKeyFrom…`);
// - a key word mid-line in prose or code (`the password: must be…`, `token = tok`) unless the
//   value has six or more characters with both letters and digits. A quoted value, a quoted key
//   (`"password": …`), `KEY=value` with nothing around `=`, a `--flag`, or a key alone at the start
//   of its line (`password: hunter2`) is taken as a real assignment.

/** `text` with the characters that are special in a regular expression escaped. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A pattern matching any of `words`, factored on their endings (`(?:np|…)m_` rather than
 * `npm_|…`): in a lookbehind, which is matched backwards, it rules a word out at its first
 * differing character instead of trying every word in turn.
 */
function suffixAlternation(words: readonly string[]): string {
  const byLast = new Map<string, string[]>();
  let ended = false;
  for (const word of words) {
    if (word === "") {
      ended = true;
      continue;
    }
    const last = word.at(-1)!;
    byLast.set(last, [...(byLast.get(last) ?? []), word.slice(0, -1)]);
  }
  const branches = [...byLast].map(([last, rests]) =>
    (rests.every((rest) => rest === "") ? "" : suffixAlternation(rests)) + escapeRegExp(last)
  );
  const pattern = branches.length === 1 ? branches[0]! : `(?:${branches.join("|")})`;
  return ended ? `(?:${pattern})?` : pattern;
}

/** Lower rank loses to higher rank when spans start at the same place. */
const RANK_GENERIC = 1;
const RANK_PROVIDER = 2;
/** The rank of a user's labelled value: above any built-in shape. */
export const RANK_LABELLED = 3;
const RANK_MARKER = 4;
/** The rank of quarantined content: above everything, so it is withheld whole. */
export const RANK_QUARANTINE = 5;

/** A stretch of text to redact (or, for an existing marker, to keep as it is). */
export interface Span {
  start: number;
  end: number;
  /** The label, or `""` for an existing `[REDACTED:…]` marker, which is kept. */
  label: string;
  rank: number;
  /** What replaces the stretch when it is not `[REDACTED:<label>]` (quarantine references). */
  replacement?: string | undefined;
}

/** Group numbers of `TOKEN_FINDER`, in the order of its alternatives. */
const G_SK = 1;
const G_STRIPE = 2;
const G_A = 3;
const G_JWT = 4;
const G_SLACK = 5;
const G_GIT = 6;
const G_LETTERED = 7;
const G_PRIVATE_KEY = 8;
const G_COLON = 9;
const G_AUTH = 10;

// Character classes of key bodies: base64url, alphanumeric, AWS's upper case and digits.
const B64URL = "[A-Za-z0-9_-]";
const ALNUM = "[A-Za-z0-9]";
// Left boundaries: a token may not continue a word, but it may follow a JSON escape (`\n`, `\t`)
// in raw JSON bytes, whose letter is preceded by a backslash.
const UNESCAPED = "(?<!\\\\)";
const NOT_B64URL_BEFORE = `(?<!${UNESCAPED}[A-Za-z0-9_-]`;

// Separate regexes rather than one: past a certain size V8 stops computing the skip tables that
// make the scan fast, and one regex holding every family would be over it (several times slower).
const TOKEN_FINDER = new RegExp(
  [
    // sk-…, sk-proj-…, sk-ant-…: found at "k-", then "sk" checked behind with a left boundary.
    `(k-(?<=${NOT_B64URL_BEFORE})sk-)${B64URL}{20,})`,
    `(k_(?<=(?<!${UNESCAPED}[A-Za-z0-9_])[sr]k_)(?:live|test)_${ALNUM}{16,})`,
    `(A(?<!${UNESCAPED}${ALNUM}A)(?:(?:KIA|SIA)[A-Z0-9]{16}(?!${ALNUM})|Iza${B64URL}{35}(?!${B64URL})|` +
    "TATT3|GE-SECRET-KEY-1|ccountKey=))",
    `(J(?<=${NOT_B64URL_BEFORE})eyJ)${B64URL}{8,}\\.eyJ${B64URL}{8,}\\.${B64URL}{16,})`,
    `(xox[abeoprs]-${NOT_B64URL_BEFORE}xox[abeoprs]-)[A-Za-z0-9-]{10,})`,
    `(g(?<!${UNESCAPED}[A-Za-z0-9_]g)(?:h[pousr]_${ALNUM}{36,}|ithub_pat_[A-Za-z0-9_]{30,}|` +
    `l(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent|wt|ffct)-${B64URL}{20,}))`,
    // Prefixes of `_secret_prefixes.ts` that end in a letter or digit.
    `(d(?<!${UNESCAPED}${B64URL}d)api|E(?<!${UNESCAPED}[A-Za-z0-9_+/-]E)AAA|` +
    `S(?<!${UNESCAPED}${B64URL}S)K)`,
    "(-----(?:BEGIN|END) )",
    // `scheme://`, a Firebase server key's `:APA91b`, a Telegram bot token's `:AA`.
    "(:(?:\\/\\/|APA91b|AA))",
    "((?:[Bb]earer|BEARER|[Bb]asic|BASIC)[ \\t]+)",
  ].join("|"),
  "g",
);

/** Group numbers of `PREFIX_FINDER`: a prefix from `SEPARATED_PREFIXES`, and the others. */
const G_SEPARATED = 1;
const G_TERRAFORM = 2;
const G_MAILCHIMP = 3;
const G_AZURE = 4;

// Found at the separator that ends the prefix, the prefix checked behind with a left boundary.
// Read backwards, the alternation branches on one character at a time (`suffixAlternation`),
// so a separator that ends no prefix costs a comparison or two.
const PREFIX_FINDER = new RegExp(
  `[_.~-](?<=${NOT_B64URL_BEFORE})(?:(${suffixAlternation(SEPARATED_PREFIXES)})|` +
    // Terraform Cloud: `<14>.atlasv1.<body>`; Mailchimp: 32 hex digits, `-us` and a number.
    `([A-Za-z0-9]{14}\\.atlasv1\\.)|([0-9a-f]{32}-)(?=us[0-9]))|` +
    // An Azure AD client secret: three characters, a digit and `Q~`.
    `(?<!${UNESCAPED}[A-Za-z0-9_~.-])([A-Za-z0-9_~.]{3}[0-9]Q~))`,
  "g",
);

/**
 * Group numbers of `KEY_FINDER`: the key word from its anchor on, a closing quote, and a
 * separator that counts only before an AWS secret access key's 40 characters.
 */
const G_KEYWORD = 1;
const G_KEY_QUOTE = 2;
const G_AWS_ONLY = 3;

// A key word is found from a letter rarer than its first (the `k` of `token`, the `w` of
// `password`) and checked backwards, then must be followed by a separator: `=`, `:`, `=>`, `:=`,
// or spaces after a `--flag`. Before an AWS secret access key's 40 characters, a name that says
// a secret may also be followed by spaces alone, or by `aws configure`'s `[None]:`.
const KEY_WORDS = [
  "[kK](?:en|EN|ey|EY)(?<=[Tt]oken|TOKEN|(?:[Aa]pi|API)[_-]?[kK]ey|API[_-]?KEY|" +
  "(?:[Ss]ecret|SECRET)[ _-]?(?:(?:[Aa]ccess|ACCESS)[ _-]?)?[kK](?:ey|EY))",
  "[wW](?:ord|ORD|d|D)(?<=[Pp]ass[wW](?:ord|d)|PASSW(?:ORD|D))",
  "cret(?<=[Ss]ecret)|[Cc]RET(?<=SECRET)",
  "phrase(?<=[Pp]assphrase)|PASSPHRASE",
];
/** The end of a name that says a secret: `secret`, `SECRET_KEY`, `Secret Access Key`. */
const SECRET_NAME = "(?:[Ss]ecret|SECRET)(?:[ _-]?(?:(?:[Aa]ccess|ACCESS)[ _-]?)?[kK](?:ey|EY))?";
const KEY_FINDER = new RegExp(
  `(${KEY_WORDS.join("|")})(\\\\{0,3}["'\`])?` +
    "(?:[ \\t]*(?:=>|:=|[:=])|(?<=(?:^|\\s)--[A-Za-z0-9_.-]{0,64})[ \\t]+(?=[^\\s-])|" +
    `(?<=${SECRET_NAME})((?:[ \\t]*\\[[^\\]\\r\\n]{0,16}\\][ \\t]*:)?[ \\t]+)` +
    "(?=[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])))" +
    "[ \\t]*",
  "g",
);

/** An AWS secret access key: 40 base64 characters (after one of its names). */
const AWS_SECRET_VALUE = /^[A-Za-z0-9/+]{40}$/;
/** A name that says a secret, as `SECRET_NAME` (read on the text that ends with the key word). */
const SECRET_NAME_END = /secret(?:[ _-]?(?:access[ _-]?)?key)?$/i;
/** Words run together, each capital starting one (`getSecretAccessKeyFromTheEnvironment`). */
const RUN_TOGETHER_WORDS = /^[A-Za-z][a-z]*(?:[A-Z][a-z]+)*$/;

const MARKER = /\[REDACTED:[A-Za-z0-9_.-]{1,64}\]/g;
const PRIVATE_KEY_HEADER = /-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----/y;
const PRIVATE_KEY_FOOTER = /-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----/y;
/** Key material before a footer, read backwards: base64 and (JSON-escaped) line breaks. */
const KEY_MATERIAL_CHAR = /[A-Za-z0-9+/=\r\n\\]/;
const LINE_BREAK = /\n|\\n/;
/** Key material (or PEM headers) right after a BEGIN line, allowing JSON-escaped line breaks. */
const PRIVATE_KEY_BODY = /(?:\s|\\+[rn])*(?:[A-Za-z0-9+/=]{16}|Proc-Type:|Comment:)/y;
const SLACK_WEBHOOK = /hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/-]{8,}/y;
const URL_CREDENTIALS = /[^\s/?#@:"'<>\\]{1,256}:([^\s/?#@"'<>\\]{1,256})@/y;
const AUTH_TOKEN = /[A-Za-z0-9._~+/-]+=*/y;
const AUTH_HEADER_BEFORE = /authorization\\{0,3}["']?[ \t]*[:=][ \t]*\\{0,3}["']?[ \t]*$/i;
const UNQUOTED_VALUE = /[^\s"'`,;&)\]}<>\\[]+/y;
const TYPE_THEN_ASSIGN = /[ \t]*=[ \t]*/y;
const LINE_START_BEFORE = /(?:[\r\n]|\\n)[ \t]*(?:(?:-|export|set|declare|ENV)[ \t]+)?$/;
const TEXT_START_BEFORE = /^[ \t]*(?:(?:-|export|set|declare|ENV)[ \t]+)?$/;
const REST_OF_LINE_EMPTY = /[ \t]*(?:$|[\r\n#]|\\[rn])/y;
const QUOTED_PLACEHOLDER =
  /^(?:\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{[^}]*\}\}|<[^<>]*>|\*+|x+|X+|\.\.\.|…|%s|%\([A-Za-z_]+\)s|\[REDACTED:[A-Za-z0-9_.-]{1,64}\])$/;
/** A key name that names a secret (`DB_PASSWORD`, `apiKey`, `x-auth-token`); its key word. */
const SECRET_KEY =
  /(?:passw(?:or)?d|passphrase|secret(?:[_-]?access)?[_-]?key|api[_-]?key|secret|token)$/i;
const DOTTED_PATH = /^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+[!?]?$/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const CODE_WORDS = new Set([
  "any",
  "async",
  "await",
  "bool",
  "boolean",
  "bytes",
  "env",
  "false",
  "float",
  "function",
  "int",
  "integer",
  "lambda",
  "new",
  "nil",
  "none",
  "null",
  "number",
  "object",
  "optional",
  "password",
  "required",
  "secret",
  "self",
  "str",
  "string",
  "this",
  "token",
  "true",
  "typeof",
  "undefined",
  "unknown",
  "void",
  "yield",
]);

const QUOTE_DOUBLE = 34;
const QUOTE_SINGLE = 39;
const BACKTICK = 96;
const BACKSLASH = 92;
/** How far a quoted value is followed before an unterminated one is cut. */
const MAX_QUOTED = 4096;

function isQuote(code: number): boolean {
  return code === QUOTE_DOUBLE || code === QUOTE_SINGLE || code === BACKTICK;
}

/** A character of a key name such as `DB_PASSWORD`, `spring.datasource.password`, `x-api-key`. */
function isKeyChar(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) ||
    code === 95 || code === 45 || code === 46;
}

function hasDigit(s: string): boolean {
  return /[0-9]/.test(s);
}

function hasLetter(s: string): boolean {
  return /[A-Za-z]/.test(s);
}

/** Collects the built-in secret spans of `text` into `spans`. */
export function findSecrets(text: string, spans: Span[]): void {
  findTokens(text, spans);
  findSeparatedPrefixes(text, spans);
  findAssignments(text, spans);
}

/** Provider key shapes and the anchors of what needs context (`TOKEN_FINDER`). */
function findTokens(text: string, spans: Span[]): void {
  const tokens = TOKEN_FINDER;
  tokens.lastIndex = 0;
  const noFooter = { from: Infinity };
  const provider = (start: number, end: number, label: string) =>
    spans.push({ start, end, label, rank: RANK_PROVIDER });
  let m: RegExpExecArray | null;
  while ((m = tokens.exec(text)) !== null) {
    const at = m.index;
    const found = m[0];
    const end = at + found.length;
    if (m[G_SK] !== undefined) {
      const body = found.slice(2);
      const rest = body.replace(/^(?:ant|proj|svcacct|admin|None|or-v1)-/, "");
      if (rest.length >= 20 && hasDigit(rest) && hasLetter(rest)) {
        const label = body.startsWith("ant-")
          ? "anthropic-key"
          : body.startsWith("or-v1-")
          ? "openrouter-key"
          : "openai-key";
        provider(at - 1, end, label);
      }
    } else if (m[G_STRIPE] !== undefined) {
      provider(at - 1, end, "stripe-key");
    } else if (m[G_A] !== undefined) {
      if (found.startsWith("AKIA") || found.startsWith("ASIA")) {
        provider(at, end, "aws-access-key-id");
      } else if (found.startsWith("AIza")) provider(at, end, "google-api-key");
      else findPrefixed(text, at, found, spans);
    } else if (m[G_JWT] !== undefined) {
      provider(at - 2, end, "jwt");
    } else if (m[G_SLACK] !== undefined) {
      if (hasDigit(found.slice(5))) provider(at, end, "slack-token");
    } else if (m[G_GIT] !== undefined) {
      provider(at, end, found.startsWith("gl") ? "gitlab-token" : "github-token");
    } else if (m[G_LETTERED] !== undefined) {
      findPrefixed(text, at, found, spans);
    } else if (m[G_PRIVATE_KEY] !== undefined) {
      if (found[5] === "E") findKeyTail(text, at, spans);
      else {
        const keyEnd = findPrivateKey(text, at, noFooter);
        if (keyEnd !== -1) {
          provider(at, keyEnd, "private-key");
          tokens.lastIndex = keyEnd;
        }
      }
    } else if (m[G_COLON] !== undefined) {
      if (found === "://") findInUrl(text, at, spans);
      else findAfterColon(text, at, found, spans);
    } else if (m[G_AUTH] !== undefined) {
      findAuthToken(text, at, found, spans);
    }
  }
}

/**
 * Where a private key whose `-----BEGIN ` is at `at` ends: after its END line, or at the end of
 * the text when key material follows the header and no END line does; -1 for a header alone.
 * `noFooter.from` remembers a search for an END line that found none, so many headers without
 * one stay linear.
 */
function findPrivateKey(text: string, at: number, noFooter: { from: number }): number {
  PRIVATE_KEY_HEADER.lastIndex = at;
  if (!PRIVATE_KEY_HEADER.test(text)) return -1;
  const headerEnd = PRIVATE_KEY_HEADER.lastIndex;
  if (headerEnd < noFooter.from) {
    const end = findFooter(text, headerEnd);
    if (end !== -1) return end;
    noFooter.from = headerEnd;
  }
  PRIVATE_KEY_BODY.lastIndex = headerEnd;
  return PRIVATE_KEY_BODY.test(text) ? text.length : -1;
}

/** Provider tokens whose prefix ends in `_`, `-`, `.` or `~` (`PREFIX_FINDER`). */
function findSeparatedPrefixes(text: string, spans: Span[]): void {
  const prefixes = PREFIX_FINDER;
  prefixes.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = prefixes.exec(text)) !== null) {
    const after = m.index + 1;
    const prefix = m[G_SEPARATED] ?? m[G_TERRAFORM] ?? m[G_MAILCHIMP] ?? m[G_AZURE] ?? "";
    const start = after - prefix.length;
    if (m[G_SEPARATED] !== undefined) findPrefixed(text, start, prefix, spans);
    else if (m[G_MAILCHIMP] !== undefined) {
      pushMatch(text, start, after, MAILCHIMP_REST, "mailchimp-key", spans);
    } else if (m[G_TERRAFORM] !== undefined) {
      pushMatch(text, start, after, TERRAFORM_REST, "terraform-token", spans);
    } else pushMatch(text, start, after, AZURE_SECRET_REST, "azure-client-secret", spans);
  }
}

/** Values after a key word that says a secret (`KEY_FINDER`): `password=…`, `"token": "…"`. */
function findAssignments(text: string, spans: Span[]): void {
  const keys = KEY_FINDER;
  keys.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = keys.exec(text)) !== null) {
    // Going on after the value keeps `token=token=token=…` linear.
    keys.lastIndex = Math.max(keys.lastIndex, findAssignedValue(text, m, spans));
  }
}

/** What follows a Mailchimp key's 32 hex digits and `-`: `us` and its data centre. */
const MAILCHIMP_REST = /us[0-9]{1,2}(?![A-Za-z0-9_-])/y;
/** What follows `<14 characters>.atlasv1.` in a Terraform Cloud token. */
const TERRAFORM_REST = /[A-Za-z0-9_=-]{60,70}(?![A-Za-z0-9_=-])/y;
/** What follows `<3 characters><digit>Q~` in an Azure AD client secret. */
const AZURE_SECRET_REST = /[A-Za-z0-9_~.-]{31,34}/y;
/** A Firebase Cloud Messaging server key's start, before its `:APA91b`. */
const FCM_START = /(?<!(?<!\\)[A-Za-z0-9_-])AAAA[A-Za-z0-9_-]{7}$/;
/** What follows a Firebase Cloud Messaging server key's `:APA91b`. */
const FCM_REST = /[A-Za-z0-9_-]{100,}/y;
/** A Telegram bot token's bot id, before its `:AA`. */
const TELEGRAM_START = /(?<!(?<!\\)[A-Za-z0-9_-])[0-9]{8,10}$/;
/** What follows a Telegram bot token's `:AA`. */
const TELEGRAM_REST = /[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/y;

/** A provider token whose prefix (from `_secret_prefixes.ts`) starts at `start`. */
function findPrefixed(text: string, start: number, prefix: string, spans: Span[]): void {
  const known = PREFIXED.get(prefix);
  if (known === undefined) return;
  const bodyStart = start + prefix.length;
  known.body.lastIndex = bodyStart;
  const m = known.body.exec(text);
  if (m === null || (known.check !== undefined && !known.check(m[0]))) return;
  spans.push({
    start: known.valueOnly ? bodyStart : start,
    end: bodyStart + m[0].length,
    label: known.label,
    rank: RANK_PROVIDER,
  });
}

/** Pushes `[start, end of rest)` under `label` when `rest` (sticky) matches at `after`. */
function pushMatch(
  text: string,
  start: number,
  after: number,
  rest: RegExp,
  label: string,
  spans: Span[],
): void {
  rest.lastIndex = after;
  if (rest.test(text)) spans.push({ start, end: rest.lastIndex, label, rank: RANK_PROVIDER });
}

/** A Firebase server key (`AAAA…:APA91b…`) or a Telegram bot token (`123456789:AA…`). */
function findAfterColon(text: string, at: number, found: string, spans: Span[]): void {
  const before = text.slice(Math.max(0, at - 12), at);
  const fcm = found === ":APA91b";
  const head = (fcm ? FCM_START : TELEGRAM_START).exec(before);
  if (head === null) return;
  const start = at - head[0].length;
  pushMatch(
    text,
    start,
    at + found.length,
    fcm ? FCM_REST : TELEGRAM_REST,
    fcm ? "fcm-server-key" : "telegram-bot-token",
    spans,
  );
}

/**
 * A private key's END line with key material before it and no BEGIN line (a key whose start was
 * cut off): redacted back to where the material starts. A footer alone is left as it is.
 */
function findKeyTail(text: string, at: number, spans: Span[]): void {
  PRIVATE_KEY_FOOTER.lastIndex = at;
  if (!PRIVATE_KEY_FOOTER.test(text)) return;
  const end = PRIVATE_KEY_FOOTER.lastIndex;
  // Walking back stops at the first character that cannot be key material, and footers hold
  // such characters, so the walks of several footers never cover the same text.
  let start = at;
  while (start > 0 && KEY_MATERIAL_CHAR.test(text[start - 1]!)) start--;
  // Stopped by prose rather than the start of the text, with a short word before the first line
  // break (`the key is\n…`): that word is prose, and the material starts on the next line.
  let material = text.slice(start, at);
  if (start > 0) {
    const m = LINE_BREAK.exec(material);
    if (m !== null && m.index < 16) {
      start += m.index + m[0].length;
      material = material.slice(m.index + m[0].length);
    }
  }
  if (material.replace(/\\[rn]|\s/g, "").length < 16) return;
  spans.push({ start, end, label: "private-key", rank: RANK_PROVIDER });
}

/** Adds the `[REDACTED:…]` markers already in `text`, to be kept as they are. */
function findMarkers(text: string, spans: Span[]): void {
  MARKER.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = MARKER.exec(text)) !== null) {
    spans.push({ start: m.index, end: m.index + m[0].length, label: "", rank: RANK_MARKER });
  }
}

/** The end of the first private key footer at or after `from`, or -1. */
function findFooter(text: string, from: number): number {
  let i = text.indexOf("-----END ", from);
  while (i !== -1) {
    PRIVATE_KEY_FOOTER.lastIndex = i;
    if (PRIVATE_KEY_FOOTER.test(text)) return PRIVATE_KEY_FOOTER.lastIndex;
    i = text.indexOf("-----END ", i + 9);
  }
  return -1;
}

/** Slack webhooks and the password of `scheme://user:password@host`. */
function findInUrl(text: string, at: number, spans: Span[]): void {
  const after = at + 3;
  SLACK_WEBHOOK.lastIndex = after;
  if (SLACK_WEBHOOK.test(text)) {
    const scheme = text.slice(Math.max(0, at - 5), at);
    const start = scheme === "https" ? at - 5 : scheme.endsWith("http") ? at - 4 : at;
    spans.push({
      start,
      end: SLACK_WEBHOOK.lastIndex,
      label: "slack-webhook",
      rank: RANK_PROVIDER,
    });
    return;
  }
  URL_CREDENTIALS.lastIndex = after;
  const m = URL_CREDENTIALS.exec(text);
  const password = m?.[1];
  if (m === null || password === undefined || !secretLooking(password)) return;
  const end = URL_CREDENTIALS.lastIndex - 1;
  spans.push({ start: end - password.length, end, label: "password", rank: RANK_GENERIC });
}

/** `Bearer <token>` (long tokens anywhere, any token after `Authorization:`) and Basic auth. */
function findAuthToken(text: string, at: number, found: string, spans: Span[]): void {
  const start = at + found.length;
  AUTH_TOKEN.lastIndex = start;
  const m = AUTH_TOKEN.exec(text);
  if (m === null) return;
  const token = m[0];
  const header = AUTH_HEADER_BEFORE.test(text.slice(Math.max(0, at - 40), at));
  const basic = found[1] === "a" || found[1] === "A";
  if (basic) {
    if (!header || token.length < 8) return;
  } else if (
    header ? token.length < 8 : token.length < 20 || !hasDigit(token) || !hasLetter(token)
  ) {
    return;
  }
  const label = basic ? "basic-auth" : "bearer-token";
  spans.push({ start, end: start + token.length, label, rank: RANK_GENERIC });
}

/** Whether a value is worth redacting at all: not empty, a placeholder or an earlier marker. */
export function secretLooking(value: string): boolean {
  if (value.length === 0 || QUOTED_PLACEHOLDER.test(value)) return false;
  const first = value.charCodeAt(0);
  return first !== 36 /* $ */ && first !== 123 /* { */ && first !== 60 /* < */;
}

/** The label of an assignment, from the key word it ends with. */
function assignmentLabel(keyword: string): string {
  const k = keyword.toLowerCase();
  if (k.startsWith("pass")) return "password";
  if (k.startsWith("secret") && k.includes("access")) return "aws-secret-key";
  return "secret";
}

/**
 * Whether an unquoted value reads as code or a placeholder rather than a secret:
 * `getPassword()`, `process.env.TOKEN`, `string`, `None`, `userToken`, `db_password`, `$TOKEN`.
 */
function codeLike(value: string, key: string): boolean {
  if (/^[$({[<%*=!?:&|]/.test(value) || value.includes("(")) return true;
  if (DOTTED_PATH.test(value)) return true;
  const lower = value.toLowerCase();
  if (CODE_WORDS.has(lower)) return true;
  if (IDENTIFIER.test(value) && !hasDigit(value)) {
    if (value.includes("_") || /[a-z][A-Z]/.test(value)) return true;
    const bareKey = key.replace(/^-+/, "").toLowerCase();
    if (lower === bareKey || bareKey.endsWith(`.${lower}`)) return true;
  }
  return false;
}

/**
 * The value of `password=…`, `"token": "…"`, `API_KEY: …`, `--secret …`, and their kin. Returns
 * where the value ends (or where the search should go on).
 */
function findAssignedValue(text: string, m: RegExpExecArray, spans: Span[]): number {
  const at = m.index;
  const found = m[0];
  const keyword = m[G_KEYWORD] ?? "";
  // The anchor sits inside the key word; walk back to where the whole key name starts.
  let keyStart = at;
  while (
    keyStart > 0 && at - keyStart < 128 && isKeyChar(text.charCodeAt(keyStart - 1)) &&
    !(keyStart > 1 && text.charCodeAt(keyStart - 2) === BACKSLASH)
  ) {
    keyStart--;
  }
  const keywordEnd = at + keyword.length;
  const key = text.slice(keyStart, keywordEnd);
  const label = assignmentLabel(wordOf(key));
  const valueStart = at + found.length;
  // `scheme://user:password@`: the URL handler decides, so `x-access-token:` is no key here.
  if (text.startsWith("://", keyStart - 3)) return valueStart;
  // A name that says a secret (`aws-secret`, `SECRET_KEY`, `Secret Access Key`): before 40
  // characters shaped as an AWS secret access key, those are one. Its words written apart, or
  // followed by spaces alone, it names nothing else.
  const secretName = SECRET_NAME_END.exec(text.slice(Math.max(0, keywordEnd - 24), keywordEnd));
  if (secretName !== null) {
    const apart = m[G_AWS_ONLY] !== undefined || !/secret/i.test(key);
    const nameStart = keywordEnd - secretName[0].length;
    const aws = /aws/i.test(text.slice(Math.max(0, nameStart - 4), nameStart));
    const end = findAwsSecret(text, valueStart, secretName[0], aws, spans);
    if (end !== -1 || apart) return Math.max(end, valueStart);
  }

  // Quoted values: a literal is a secret whatever the context, unless empty or a placeholder.
  let q = valueStart;
  while (q < text.length && q - valueStart < 3 && text.charCodeAt(q) === BACKSLASH) q++;
  const quote = text.charCodeAt(q);
  if (isQuote(quote)) {
    return pushQuoted(text, q + 1, quote, q - valueStart, label, spans);
  }
  if (q !== valueStart) return q;

  UNQUOTED_VALUE.lastIndex = valueStart;
  const v = UNQUOTED_VALUE.exec(text);
  if (v === null) return valueStart;
  const value = v[0];
  const valueEnd = valueStart + value.length;

  const quotedKey = m[G_KEY_QUOTE] !== undefined && isQuote(text.charCodeAt(keyStart - 1));
  const glued = !/[ \t]/.test(found);
  const flag = key.startsWith("--");
  // A key alone on its line with nothing after the value (`password: hunter2`) is config too.
  let strong = quotedKey || glued || flag;
  if (!strong && atLineStart(text, keyStart)) {
    REST_OF_LINE_EMPTY.lastIndex = valueEnd;
    strong = REST_OF_LINE_EMPTY.test(text);
  }

  if (codeLike(value, key)) {
    // `password: str = "hunter2"`: a type annotation followed by the literal.
    if (CODE_WORDS.has(value.toLowerCase())) {
      TYPE_THEN_ASSIGN.lastIndex = valueEnd;
      if (TYPE_THEN_ASSIGN.test(text)) {
        const literal = TYPE_THEN_ASSIGN.lastIndex;
        const c = text.charCodeAt(literal);
        if (isQuote(c)) return pushQuoted(text, literal + 1, c, 0, label, spans);
      }
    }
    return valueEnd;
  }
  if (!strong && (value.length < 6 || !hasDigit(value) || !hasLetter(value))) {
    return valueEnd;
  }
  spans.push({ start: valueStart, end: valueEnd, label, rank: RANK_GENERIC });
  return valueEnd;
}

/**
 * An AWS secret access key after `name` (the end of a key name that says a secret, `aws` before
 * it or not), its value starting at `valueStart`, quoted or not. After a name that says
 * `secret…access…key`, any 40 characters of its alphabet are the key; after the others
 * (`secret`, `SECRET_KEY`, `aws-secret`), only 40 that are shaped as one (`awsSecretShaped`).
 * Returns where the key ends, or -1.
 */
function findAwsSecret(
  text: string,
  valueStart: number,
  name: string,
  aws: boolean,
  spans: Span[],
): number {
  let start = valueStart;
  while (start < text.length && start - valueStart < 3 && text.charCodeAt(start) === BACKSLASH) {
    start++;
  }
  const quoted = isQuote(text.charCodeAt(start));
  if (quoted) start++;
  else if (start !== valueStart) return -1;
  UNQUOTED_VALUE.lastIndex = start;
  const value = UNQUOTED_VALUE.exec(text)?.[0] ?? "";
  const access = /access/i.test(name);
  if (!(access ? AWS_SECRET_VALUE.test(value) : awsSecretShaped(value))) return -1;
  const label = access || aws ? "aws-secret-key" : "secret";
  spans.push({ start, end: start + value.length, label, rank: RANK_GENERIC });
  return start + value.length;
}

/**
 * 40 characters of an AWS secret access key's alphabet (`[A-Za-z0-9/+]`) in both cases: not a
 * SHA-1 (lower-case hex) or an upper-case id, and not words run together (an identifier).
 */
function awsSecretShaped(value: string): boolean {
  return AWS_SECRET_VALUE.test(value) && /[a-z]/.test(value) && /[A-Z]/.test(value) &&
    !RUN_TOGETHER_WORDS.test(value);
}

/**
 * The label a value under `key` is redacted with when the key names a secret (`password`,
 * `apiKey`, `token`, …), or undefined when it names none.
 */
export function secretKeyLabel(key: string): string | undefined {
  return SECRET_KEY.test(key) ? assignmentLabel(wordOf(key)) : undefined;
}

/** The key word proper at the end of a key name: `password` of `DB_PASSWORD`. */
function wordOf(key: string): string {
  return SECRET_KEY.exec(key)?.[0] ?? key;
}

/** Whether only indentation (or `export `, `- `…) stands between the line start and `at`. */
function atLineStart(text: string, at: number): boolean {
  const from = Math.max(0, at - 40);
  const before = text.slice(from, at);
  return LINE_START_BEFORE.test(before) || (from === 0 && TEXT_START_BEFORE.test(before));
}

/**
 * Pushes the span of a quoted value opened at `start - 1` by `quote` preceded by `depth`
 * backslashes (JSON inside JSON). An unterminated value is cut at the end of its line.
 */
function pushQuoted(
  text: string,
  start: number,
  quote: number,
  depth: number,
  label: string,
  spans: Span[],
): number {
  const limit = Math.min(text.length, start + MAX_QUOTED);
  let end = limit;
  for (let j = start; j < limit; j++) {
    const c = text.charCodeAt(j);
    if (c === 10 || c === 13) {
      end = j;
      break;
    }
    if (c !== quote) continue;
    let backslashes = 0;
    while (j - backslashes > start && text.charCodeAt(j - backslashes - 1) === BACKSLASH) {
      backslashes++;
    }
    if (depth === 0 ? backslashes % 2 === 0 : backslashes === depth) {
      end = j - backslashes;
      break;
    }
  }
  if (secretLooking(text.slice(start, end))) spans.push({ start, end, label, rank: RANK_GENERIC });
  return end;
}

/** Counts kept while a text is rebuilt; absent when only the text is wanted. */
export interface Tally {
  counts: Map<string, number>;
  passed: Map<string, number>;
}

/**
 * Rebuilds `text` with the spans replaced. Overlapping spans merge so nothing leaks between them;
 * the first (or, at the same start, highest-ranked) span names the result, except that a merged
 * stretch is only let through if every part of it is allowed. With `from` and `to`, only that
 * part of the result is built: a stretch running over either edge is replaced in the part inside.
 */
export function applySpans(
  text: string,
  spans: Span[],
  allowed: ReadonlySet<string> | undefined,
  tally: Tally | undefined,
  from = 0,
  to = text.length,
): string {
  const whole = from === 0 && to === text.length;
  if (spans.length === 0) return whole ? text : text.slice(from, to);
  // Markers only matter when something might overlap one, so they are looked for only then.
  findMarkers(text, spans);
  spans.sort((a, b) => a.start - b.start || b.rank - a.rank || b.end - a.end);
  const isAllowed = (label: string) => allowed !== undefined && allowed.has(label);
  const out: string[] = [];
  let last = from;
  let cur: Span | undefined;
  const flush = (s: Span) => {
    if (s.label === "" || s.end <= from || s.start >= to) return;
    const bump = (map: Map<string, number>) => map.set(s.label, (map.get(s.label) ?? 0) + 1);
    if (isAllowed(s.label)) {
      if (tally !== undefined) bump(tally.passed);
      return;
    }
    if (tally !== undefined) bump(tally.counts);
    out.push(text.slice(last, Math.max(last, s.start)), s.replacement ?? `[REDACTED:${s.label}]`);
    last = Math.min(s.end, to);
  };
  for (const s of spans) {
    if (cur === undefined) {
      cur = { ...s };
      continue;
    }
    if (s.start < cur.end) {
      if (s.end <= cur.end) continue;
      // A secret running out of a kept marker, or out of an allowed value, is redacted whole.
      if (cur.label === "" || (isAllowed(cur.label) && !isAllowed(s.label))) {
        cur.label = s.label;
        cur.replacement = s.replacement;
      }
      cur.end = s.end;
      continue;
    }
    flush(cur);
    cur = { ...s };
  }
  if (cur !== undefined) flush(cur);
  if (out.length === 0) return whole ? text : text.slice(from, to);
  out.push(text.slice(last, to));
  return out.join("");
}

// ---------------------------------------------------------------------------------------------
// Markers and JSON-like values.

/**
 * Whether `text` holds a `[REDACTED:<label>]` marker: a value as the gate showed it (a project's
 * path in a link), which names nothing on disk.
 */
export function holdsRedaction(text: string): boolean {
  MARKER.lastIndex = 0;
  return MARKER.test(text);
}

/**
 * Applies `fn` to every string in a JSON-like value, copying arrays and plain objects (other
 * objects are kept as they are). The walk of `redactValue`, and of anything that passes a whole
 * response through a `Redactor`.
 *
 * @example
 * mapStrings(hit, (s) => redact(s)); // every string of `hit` through the gate
 */
export function mapStrings<T>(value: T, fn: (s: string, key: string | undefined) => string): T {
  const walk = (v: unknown, key: string | undefined): unknown => {
    if (typeof v === "string") return fn(v, key);
    if (Array.isArray(v)) return v.map((item) => walk(item, undefined));
    if (v !== null && typeof v === "object") {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return v;
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        Object.defineProperty(out, k, {
          value: walk(item, k),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return v;
  };
  return walk(value, undefined) as T;
}

// ---------------------------------------------------------------------------------------------
// Redacting derived text.

/**
 * A redaction of derived text: called on a text, or through `between` on a piece of a longer text
 * seen with its neighbours (see `Gate.redactBetween`).
 */
export interface Redactor {
  (text: string): string;
  /** Redacts `text` as the middle of `before + text + after`. */
  between(before: string, text: string, after: string): string;
}

/**
 * How much of each neighbour a piece of a longer text is redacted with: longer than any built-in
 * shape but a private key (whose middle is still hidden: see `findKeyTail`), so a secret cut by
 * a piece's edge is seen whole.
 */
export const REDACTION_OVERLAP = 8192;

/**
 * Collects the spans `find` finds in `text` as a reader sees it: a secret with a zero-width
 * character inside (`ghp_…\u200b…`) is found whole, since the index and the eye both read through
 * such characters (`lib/invisible.ts`).
 */
export function findAsSeen(
  text: string,
  spans: Span[],
  find: (text: string, spans: Span[]) => void,
): void {
  const seen = visibleMap(text);
  if (seen === null) return find(text, spans);
  const found: Span[] = [];
  find(seen.text, found);
  for (const span of found) {
    spans.push({ ...span, start: seen.at[span.start]!, end: seen.at[span.end - 1]! + 1 });
  }
}

/**
 * Redacts `text` as the middle of `before + text + after`, with the spans `find` collects in the
 * whole: a secret running over an edge is found whole, and its part inside `text` redacted.
 */
export function redactWindow(
  before: string,
  text: string,
  after: string,
  find: (whole: string, spans: Span[]) => void,
): string {
  for (const [name, value] of [["before", before], ["text", text], ["after", after]]) {
    if (typeof value !== "string") {
      throw new TypeError(`Cannot redact "${name}": expected a string, got ${typeof value}`);
    }
  }
  const whole = before + text + after;
  const spans: Span[] = [];
  find(whole, spans);
  return applySpans(whole, spans, undefined, undefined, before.length, before.length + text.length);
}

/** Redacts built-in secret shapes only (no labelled values, no quarantine). */
export const redactSecrets: Redactor = Object.assign(
  (text: string): string => {
    if (typeof text !== "string") {
      throw new TypeError(`Cannot redact: expected a string, got ${typeof text}`);
    }
    const spans: Span[] = [];
    findSecrets(text, spans);
    return applySpans(text, spans, undefined, undefined);
  },
  {
    between: (before: string, text: string, after: string) =>
      redactWindow(before, text, after, (whole, spans) => findAsSeen(whole, spans, findSecrets)),
  },
);
