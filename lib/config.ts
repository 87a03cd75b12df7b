// Loads logbook's settings: the global and project `config.json` files and the environment,
// validated and merged in precedence order over the defaults.

import type * as Jsonc from "jsonc-parser";
import { dirname, isAbsolute, join, resolve } from "./path.ts";
import { nodeModule } from "./node_builtins.ts";
import { type Env, isOff } from "./env.ts";
// Every agent's name can head a section of a config file, above that file's top level.
import { type Agent, AGENTS, isAgent, OTHER_AGENTS } from "./agents.ts";

const LABEL = /^[A-Za-z0-9_.-]{1,64}$/;
const EXPECTED_LABEL = 'expected a label of 1 to 64 letters, digits, "_", "." or "-"';

/** What one layer may set, every one optional: a file's top level or an agent section. */
export interface Settings {
  history?: {
    ingest?: boolean;
    /** Extra transcript roots per agent (`history.roots.codex`): any agent but logbook. */
    roots?: { [A in Agent]?: string[] };
  };
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  tokenBudget?: number;
  secrets?: Record<string, string>;
  allowedSecrets?: string[];
  /** USD per million tokens by model name, over the prices logbook ships (`usage`). */
  prices?: Record<string, ModelPrice>;
  /** Read only to be ignored with a warning: `logbook mirror enable` turns a mirror on. */
  mirror?: boolean;
  team?: { url?: string; projects?: string[]; machine?: string; raw?: boolean };
  dashboard?: { port?: number };
}

/** A whole config file: the settings, plus one section per agent (and an editor's `$schema`). */
export type ConfigFile = Settings & { $schema?: string } & { [A in Agent]?: Settings };

/**
 * One problem in a config file: a value of the wrong shape, a key that is not a label, or keys
 * that are not settings at all (which only warn).
 */
type Issue =
  | { code: "invalid" | "invalid_key"; path: (string | number)[]; message: string }
  | { code: "unrecognized_keys"; path: (string | number)[]; keys: string[] };

/** Checks one value at `path`, pushing what is wrong with it onto `issues`. */
type Check = (value: unknown, path: (string | number)[], issues: Issue[]) => void;

// The file's rules, checked by hand (a schema library costs every command's start-up ~25 ms).
const EXPECTED_STRING = "expected a string";

function rule(test: (value: unknown) => boolean, message: string): Check {
  return (value, path, issues) => {
    if (!test(value)) issues.push({ code: "invalid", path, message });
  };
}

function string(options: { min?: number; message?: string; minMessage?: string } = {}): Check {
  return (value, path, issues) => {
    if (typeof value !== "string") {
      issues.push({ code: "invalid", path, message: options.message ?? EXPECTED_STRING });
    } else if (options.min !== undefined && value.length < options.min) {
      issues.push({ code: "invalid", path, message: options.minMessage ?? EXPECTED_STRING });
    }
  };
}

function strictObject(shape: Record<string, Check>, message = "expected an object"): Check {
  return (value, path, issues) => {
    if (!isObject(value)) {
      issues.push({ code: "invalid", path, message });
      return;
    }
    for (const [key, check] of Object.entries(shape)) {
      if (value[key] !== undefined) check(value[key], [...path, key], issues);
    }
    const keys = Object.keys(value).filter((key) => !Object.hasOwn(shape, key));
    if (keys.length) issues.push({ code: "unrecognized_keys", path, keys });
  };
}

function arrayOf(item: Check, message: string): Check {
  return (value, path, issues) => {
    if (!Array.isArray(value)) issues.push({ code: "invalid", path, message });
    else value.forEach((element, i) => item(element, [...path, i], issues));
  };
}

function integer(min: number, max: number, message: string): Check {
  return rule(
    (v) => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max,
    message,
  );
}

function httpUrl(value: unknown): boolean {
  if (typeof value !== "string") return false;
  try {
    return /^https?:$/.test(new URL(value.trim()).protocol);
  } catch {
    return false;
  }
}

const boolean = rule((v) => typeof v === "boolean", "expected a boolean");
const label = rule((v) => typeof v === "string" && LABEL.test(v), EXPECTED_LABEL);
const text = string({ min: 1, minMessage: "expected a non-empty string" });
const roots = arrayOf(
  string({ min: 1, message: "expected a path", minMessage: "expected a non-empty path" }),
  "expected an array of paths",
);
const SECRETS_MESSAGE = "expected an object mapping labels to values";
const secretValue = string({ min: 4, minMessage: "expected at least 4 characters" });

/** One model's prices in config: USD per million tokens (cache prices default to 0). */
export interface ModelPrice {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

const PRICE_MESSAGE = "expected a number of USD per million tokens, 0 or more";
const usd = rule((v) => typeof v === "number" && Number.isFinite(v) && v >= 0, PRICE_MESSAGE);
const priceShape = strictObject({
  input: usd,
  output: usd,
  cacheWrite: usd,
  cacheRead: usd,
}, 'expected {"input", "output", "cacheWrite", "cacheRead"} in USD per million tokens');
const priceCheck: Check = (value, path, issues) => {
  priceShape(value, path, issues);
  if (isObject(value) && (value.input === undefined || value.output === undefined)) {
    issues.push({ code: "invalid", path, message: 'expected at least "input" and "output"' });
  }
};

const settingsShape: Record<string, Check> = {
  history: strictObject({
    ingest: boolean,
    roots: strictObject(Object.fromEntries(OTHER_AGENTS.map((agent) => [agent, roots]))),
  }),
  model: text,
  baseUrl: rule(httpUrl, "expected an http(s) URL"),
  apiKey: text,
  tokenBudget: integer(1, Number.MAX_SAFE_INTEGER, "expected a positive integer"),
  secrets: (value, path, issues) => {
    if (!isObject(value)) {
      issues.push({ code: "invalid", path, message: SECRETS_MESSAGE });
      return;
    }
    for (const [key, secret] of Object.entries(value)) {
      if (!LABEL.test(key)) {
        issues.push({ code: "invalid_key", path: [...path, key], message: EXPECTED_LABEL });
      } else secretValue(secret, [...path, key], issues);
    }
  },
  allowedSecrets: arrayOf(label, "expected an array of labels"),
  prices: (value, path, issues) => {
    if (!isObject(value)) {
      issues.push({
        code: "invalid",
        path,
        message: "expected an object mapping models to prices",
      });
      return;
    }
    for (const [model, price] of Object.entries(value)) priceCheck(price, [...path, model], issues);
  },
  mirror: boolean,
  team: strictObject({
    url: rule(
      (v) => typeof v === "string" && /^postgres(ql)?:\/\//.test(v),
      "expected a postgres:// URL",
    ),
    projects: arrayOf(
      string({
        min: 1,
        message: "expected a project directory",
        minMessage: "expected a non-empty path",
      }),
      "expected an array of project directories",
    ),
    machine: rule(
      (v) => typeof v === "string" && /^[A-Za-z0-9._-]{1,64}$/.test(v),
      "expected a machine name of letters, digits, dot, dash or underscore",
    ),
    raw: boolean,
  }),
  dashboard: strictObject({
    port: integer(1, 65535, "expected a port number from 1 to 65535"),
  }),
};

const settingsCheck = strictObject(settingsShape);

/** A whole config file's rules: the settings, one section per agent, an editor's `$schema`. */
const configFileCheck = strictObject({
  $schema: string(),
  ...settingsShape,
  ...Object.fromEntries(AGENTS.map((agent) => [agent, settingsCheck])),
}, "expected a JSON object");

/** The resolved settings: every layer merged over the defaults, root paths absolute. */
export interface Config {
  history: {
    ingest: boolean;
    /** Extra transcript roots per agent, absolute; an agent without any has none. */
    roots: { [A in Agent]?: string[] };
  };
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  /** Absent means the per-model default. */
  tokenBudget?: number;
  /** Label to value, for values to be redacted as `[REDACTED:<label>]`. */
  secrets: Record<string, string>;
  /** Labels whose values may be sent to a model. */
  allowedSecrets: string[];
  /** USD per million tokens by model name, over the prices logbook ships (`usage`). */
  prices: Record<string, ModelPrice>;
  dashboard: { port: number };
  /** The shared team database `logbook push` sends to (see `lib/team/`). */
  team?: { url?: string; projects?: string[]; machine?: string; raw?: boolean };
}

/** The settings in force when no file or variable sets them. */
export const DEFAULTS: Config = deepFreeze({
  history: {
    ingest: true,
    roots: Object.fromEntries(OTHER_AGENTS.map((agent) => [agent, []])),
  },
  secrets: {},
  allowedSecrets: [],
  prices: {},
  dashboard: { port: 8787 },
});

/** A config file or variable that cannot be used; `file`, `key` or `variable` say which. */
export class ConfigError extends Error {
  override name = "ConfigError";
  /** The config file at fault, when it is a file. */
  readonly file?: string;
  /** The key path at fault, such as `history.ingest`. */
  readonly key?: string;
  /** The environment variable at fault, when it is one. */
  readonly variable?: string;

  constructor(
    message: string,
    where: { file?: string; key?: string; variable?: string; cause?: unknown } = {},
  ) {
    super(message, where.cause === undefined ? undefined : { cause: where.cause });
    if (where.file !== undefined) this.file = where.file;
    if (where.key !== undefined) this.key = where.key;
    if (where.variable !== undefined) this.variable = where.variable;
  }
}

/** Where to look for settings, and for which agent. */
export interface LoadConfigOptions {
  /** Read for the variables that override files, and for `HOME` when expanding `~/`. */
  env: Env;
  /** The directory holding the global `config.json`. */
  configDir: string;
  /** The project root whose `.logbook/config.json` applies, if any. */
  projectRoot?: string;
  /** The agent whose sections apply above each file's top level. */
  agent?: Agent;
}

/** The resolved settings and where they came from. */
export interface LoadedConfig {
  config: Config;
  /** The config files read, highest precedence first (the project's, then the global one). */
  files: string[];
  /**
   * Unknown keys, unusable roots and keys ignored (a project's file setting what only the user may,
   * a `mirror`), one sentence each; they do not stop the load.
   */
  warnings: string[];
  /** `<projectRoot>/.logbook` when that directory exists. */
  projectConfigDir?: string;
}

/**
 * Reads the global and project config files and the environment, and merges them, highest
 * precedence first: environment variables; the project file's section for `agent`; the project
 * file's top level; the global file's section for `agent`; the global top level; `DEFAULTS`.
 * Objects merge deeply; arrays and scalars replace. Missing files are skipped. A project's file
 * sets only what `PROJECT_MAY_SET` allows, and no file sets `mirror` (each key ignored warns).
 *
 * @throws {ConfigError} when a file cannot be read, is not valid JSON or has an invalid value,
 *   or when a variable has an invalid value.
 * @example
 * const { config, warnings } = loadConfig({ env: Deno.env, configDir, projectRoot, agent: "codex" });
 */
export function loadConfig(opts: LoadConfigOptions): LoadedConfig {
  const warnings: string[] = [];
  const files: string[] = [];
  const layers: Settings[] = []; // lowest precedence first

  const globalFile = resolve(opts.configDir, "config.json");
  let projectFile: string | undefined;
  let projectConfigDir: string | undefined;
  if (opts.projectRoot !== undefined) {
    const dir = resolve(opts.projectRoot, ".logbook");
    if (isDirectory(dir)) {
      projectConfigDir = dir;
      // A config dir set to the project's own `.logbook` must not count twice.
      if (join(dir, "config.json") !== globalFile) projectFile = join(dir, "config.json");
    }
  }

  let userLabels = new Set<string>();
  for (const file of [globalFile, projectFile]) {
    if (file === undefined) continue;
    let parsed = readConfigFile(file, warnings);
    if (parsed === undefined) continue;
    files.unshift(file);
    dropMirror(parsed, file, warnings);
    if (file === projectFile) parsed = projectSettings(parsed, file, userLabels, warnings);
    else userLabels = secretLabels(parsed);
    const { $schema: _, ...rest } = parsed;
    const top: Settings = Object.fromEntries(
      Object.entries(rest).filter(([key]) => !isAgent(key)),
    );
    const section = opts.agent === undefined ? undefined : parsed[opts.agent];
    for (const settings of [top, section]) {
      if (settings !== undefined) layers.push(resolveRoots(settings, file, opts.env, warnings));
    }
  }
  layers.push(settingsFromEnv(opts.env));

  let merged: unknown = DEFAULTS;
  for (const layer of layers) merged = deepMerge(merged, layer);
  const result: LoadedConfig = { config: merged as Config, files, warnings };
  if (projectConfigDir !== undefined) result.projectConfigDir = projectConfigDir;
  return result;
}

/**
 * What a project's own `.logbook/config.json` may set, by key path (`*` is any label), and why it
 * may not set the rest: this is the one list. A repository is not the user: whoever wrote the
 * file may make logbook redact more, capture less here, or pick which model the user's own
 * endpoint answers with and how much context it gets (cost, never reach: the request still goes
 * only where the user's own config sends it). Everything else is the user's alone: endpoints,
 * keys and team targets (`baseUrl`, `apiKey`, `team.*`: where the user's prompts, key and
 * records go), `allowedSecrets` (which secrets reach a model), `history.roots` (which files are
 * read), `dashboard.port` (where the user's history is served) and mirrors (see `dropMirror`).
 * A rule returns undefined to keep the value, or why it is ignored.
 */
const PROJECT_MAY_SET = new Map<string, ProjectRule>([
  ["model", () => undefined],
  ["tokenBudget", () => undefined],
  // Never on: the user may have turned capture off everywhere.
  [
    "history.ingest",
    (value) => value === false ? undefined : "a project's file can only turn capture off",
  ],
  // A new label, never a new value for one of the user's own (that would stop its redaction).
  [
    "secrets.*",
    (_value, label, user) => user.has(label) ? "your own config sets that label" : undefined,
  ],
]);

/** Whether a project's file may set a value: undefined when it may, else why not. */
type ProjectRule = (value: unknown, label: string, userLabels: Set<string>) => string | undefined;

/** Why a project's file may not set a key that `PROJECT_MAY_SET` does not list. */
const ONLY_YOURS = "only your own config or the environment can set it";

/**
 * A project file's settings with only what `PROJECT_MAY_SET` allows, in its top level and in each
 * agent section; each key left out is named in a warning. `user` holds the labels of the user's
 * own secrets.
 */
function projectSettings(
  parsed: ConfigFile,
  file: string,
  user: Set<string>,
  warnings: string[],
): ConfigFile {
  // `within` is the key path inside one layer's settings, `named` the path the warning names.
  const allowed = (value: unknown, within: string[], named: string[]): unknown => {
    const rule = PROJECT_MAY_SET.get(within.join(".")) ??
      PROJECT_MAY_SET.get(`${within.slice(0, -1).join(".")}.*`);
    if (rule === undefined && isObject(value)) {
      // Into objects down to each key set, so that a warning names it (`team.url`).
      const out = Object.entries(value).flatMap(([key, inner]) => {
        const section = named.length === 0 && (AGENTS as readonly string[]).includes(key);
        const kept = section
          ? allowed(inner, [], [key])
          : allowed(inner, [...within, key], [...named, key]);
        return kept === undefined ? [] : [[key, kept] as const];
      });
      return out.length || within.length === 0 ? Object.fromEntries(out) : undefined;
    }
    const why = rule === undefined ? ONLY_YOURS : rule(value, within.at(-1) ?? "", user);
    if (why === undefined) return value;
    warnings.push(
      `Ignored "${shown(named.join("."))}" in the project config "${shown(file)}": ${why}`,
    );
    return undefined;
  };
  const { $schema: _, ...settings } = parsed;
  return allowed(settings, [], []) as ConfigFile;
}

/**
 * Drops `mirror` wherever a file sets it, with a warning: only `logbook mirror enable`, run by
 * the user, turns a mirror on (a repository's file once could, and the global file never did).
 */
function dropMirror(parsed: ConfigFile, file: string, warnings: string[]): void {
  const places: [Settings | undefined, string][] = [
    [parsed, "mirror"],
    ...AGENTS.map((agent): [Settings | undefined, string] => [parsed[agent], `${agent}.mirror`]),
  ];
  for (const [settings, named] of places) {
    if (settings?.mirror === undefined) continue;
    delete settings.mirror;
    warnings.push(
      `Ignored "${named}" in "${shown(file)}": a config file cannot turn a mirror on: run ` +
        '"logbook mirror enable" in a project to mirror it',
    );
  }
}

/** The labels of every secret a file sets, at its top level or in any agent section. */
function secretLabels(parsed: ConfigFile): Set<string> {
  return new Set(
    [parsed, ...AGENTS.map((agent) => parsed[agent])].flatMap((s) => Object.keys(s?.secrets ?? {})),
  );
}

/** Control characters and bidi controls: what a terminal would act on rather than show. */
// deno-lint-ignore no-control-regex -- control characters are exactly what is escaped
const UNPRINTABLE = /[\0-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with control and bidi characters written as escapes, safe inside a warning. */
function shown(text: string): string {
  return text.replace(
    UNPRINTABLE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Reads, parses and validates one file; `undefined` when it does not exist. */
function readConfigFile(file: string, warnings: string[]): ConfigFile | undefined {
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(file);
  } catch (err) {
    // A missing file, or a missing directory on the way to it, means no settings there.
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    if (err instanceof Deno.errors.IsADirectory) {
      throw new ConfigError(`Cannot read config "${file}": it is a directory`, {
        file,
        cause: err,
      });
    }
    if (err instanceof Deno.errors.PermissionDenied) {
      throw new ConfigError(`Cannot read config "${file}": permission denied`, {
        file,
        cause: err,
      });
    }
    throw err;
  }

  let source: string;
  try {
    source = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (err) {
    throw new ConfigError(`Cannot read config "${file}": it is not valid UTF-8`, {
      file,
      cause: err,
    });
  }

  let json: unknown;
  try {
    json = JSON.parse(source);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    const at = jsonErrorAt(source);
    const detail = at === undefined
      ? err.message
      : `${at.reason} at ${lineColumn(source, at.offset)}`;
    throw new ConfigError(`Invalid JSON in config "${file}": ${detail}`, { file, cause: err });
  }

  const issues: Issue[] = [];
  configFileCheck(json, [], issues);
  const invalid = issues.filter((issue) => issue.code !== "unrecognized_keys");
  if (invalid.length > 0) {
    const details = invalid.map((issue) => describeIssue(issue, json)).join("; ");
    const key = keyPath(invalid[0]!.path);
    throw new ConfigError(
      `Invalid config "${file}": ${details}`,
      key === "" ? { file } : { file, key },
    );
  }
  // Unknown keys are dropped with a warning so that a newer build's file still loads.
  for (const issue of issues) {
    if (issue.code !== "unrecognized_keys") continue;
    const parent = valueAt(json, issue.path) as Record<string, unknown>;
    for (const key of issue.keys) {
      warnings.push(`Unknown key "${shown(keyPath([...issue.path, key]))}" in "${shown(file)}"`);
      delete parent[key];
    }
  }
  return json as ConfigFile;
}

/** Makes every root in `settings` absolute: `~/` against HOME, relative against the file's dir. */
function resolveRoots(settings: Settings, file: string, env: Env, warnings: string[]): Settings {
  const given = settings.history?.roots;
  if (given === undefined) return settings;
  const home = env.get("HOME") || undefined;
  const base = dirname(file);
  const out: { [A in Agent]?: string[] } = {};
  for (const [agent, paths] of Object.entries(given)) {
    if (paths === undefined) continue;
    const resolved: string[] = [];
    out[agent as keyof typeof out] = resolved;
    for (const path of paths) {
      if (path === "~" || path.startsWith("~/")) {
        if (home === undefined) {
          // A missing home should not stop every command: this one root is skipped.
          warnings.push(
            `Cannot expand "${path}" in "${file}" (key "history.roots.${agent}"): HOME is not set`,
          );
          continue;
        }
        resolved.push(resolve(home, path.slice(2)));
      } else {
        resolved.push(isAbsolute(path) ? resolve(path) : resolve(base, path));
      }
    }
  }
  return { ...settings, history: { ...settings.history, roots: out } };
}

/** The settings that environment variables set; an empty variable counts as unset. */
function settingsFromEnv(env: Env): Settings {
  const get = (name: string) => {
    const value = env.get(name)?.trim();
    return value === "" ? undefined : value;
  };
  const out: Settings = {};

  const ingest = get("LOGBOOK_INGEST");
  if (ingest !== undefined) {
    if (isOff(ingest)) out.history = { ingest: false };
    else if (/^(1|true|yes|on)$/i.test(ingest)) out.history = { ingest: true };
    else {
      throw envError("LOGBOOK_INGEST", "on or off (or 1 or 0, true or false, yes or no)", ingest);
    }
  }

  const teamUrl = get("LOGBOOK_TEAM_URL");
  if (teamUrl !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(teamUrl)) {
      throw envError("LOGBOOK_TEAM_URL", "a postgres:// URL", teamUrl);
    }
    out.team = { url: teamUrl };
  }

  const model = get("LOGBOOK_MODEL");
  if (model !== undefined) out.model = model;

  const baseUrl = get("OPENAI_BASE_URL");
  if (baseUrl !== undefined) {
    if (!httpUrl(baseUrl)) {
      throw envError("OPENAI_BASE_URL", "an http(s) URL", baseUrl);
    }
    out.baseUrl = baseUrl;
  }

  const apiKey = get("OPENAI_API_KEY");
  if (apiKey !== undefined) out.apiKey = apiKey;

  const budget = get("LOGBOOK_TOKEN_BUDGET");
  if (budget !== undefined) {
    const n = /^\d+$/.test(budget) ? Number(budget) : NaN;
    if (!Number.isSafeInteger(n) || n < 1) {
      throw envError("LOGBOOK_TOKEN_BUDGET", "a positive whole number", budget);
    }
    out.tokenBudget = n;
  }
  return out;
}

/** `Environment variable "LOGBOOK_INGEST" expects on or off (…), got "maybe"`. */
function envError(variable: string, expects: string, value: string): ConfigError {
  return new ConfigError(
    `Environment variable "${variable}" expects ${expects}, got ${JSON.stringify(value)}`,
    { variable },
  );
}

/** Merges `over` onto `base` into a new value: plain objects deeply, anything else replaced. */
function deepMerge(base: unknown, over: unknown): unknown {
  if (over === undefined) return copy(base);
  if (!isObject(base) || !isObject(over)) return copy(over);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(base)) out[key] = copy(value);
  for (const [key, value] of Object.entries(over)) {
    if (value !== undefined) out[key] = deepMerge(out[key], value);
  }
  return out;
}

/** A copy that shares no object or array with `value`, so callers may not alter `DEFAULTS`. */
function copy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copy);
  if (isObject(value)) return deepMerge({}, value);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return false;
    }
    throw err;
  }
}

/** `history.roots.claude[0]` for the path `["history", "roots", "claude", 0]`. */
function keyPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const part of path) value = (value as Record<PropertyKey, unknown>)[part];
  return value;
}

/** `key "history.ingest": expected a boolean, got "yes"`, never echoing a secret. */
function describeIssue(
  issue: Exclude<Issue, { code: "unrecognized_keys" }>,
  root: unknown,
): string {
  const key = keyPath(issue.path);
  const where = key === "" ? "" : `key "${key}": `;
  if (issue.code === "invalid_key") return `${where}${issue.message}`;
  // A misplaced or malformed key must not end up in a terminal or a log.
  const inSection = (AGENTS as readonly PropertyKey[]).includes(issue.path[0] ?? "");
  const setting = issue.path[inSection ? 1 : 0];
  const secret = setting === "apiKey" || setting === "secrets";
  return `${where}${issue.message}, got ${describeValue(valueAt(root, issue.path), secret)}`;
}

function describeValue(value: unknown, secret: boolean): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") {
    if (secret) return `a string of ${value.length} characters`;
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  }
  return String(value);
}

/** `line 3, column 2` for an offset into `source`, both counted from 1. */
function lineColumn(source: string, offset: number): string {
  const before = source.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1) + 1;
  return `line ${line}, column ${column}`;
}

/**
 * Where JSON text first goes wrong and why, as jsonc-parser finds it (strictly: no comments, no
 * trailing commas), which gives every error's offset where V8's `JSON.parse` messages give only
 * some. Loaded only after `JSON.parse` has failed, and synchronously, as the config is loaded.
 */
function jsonErrorAt(source: string): { offset: number; reason: string } | undefined {
  const jsonc = nodeModule().createRequire(import.meta.url)("jsonc-parser") as typeof Jsonc;
  const errors: Jsonc.ParseError[] = [];
  jsonc.parse(source, errors, {
    disallowComments: true,
    allowTrailingComma: false,
    allowEmptyContent: false,
  });
  const first = errors[0];
  if (!first) return undefined;
  const { offset, length } = first;
  const token = source.slice(offset, offset + length);
  // The string errors are at the string's start, which the reason names.
  const reasons: Record<string, string> = {
    UnexpectedEndOfString: "unterminated string",
    InvalidCharacter: "control character in string",
    InvalidEscapeCharacter: "invalid escape in string",
    InvalidUnicode: "invalid \\u escape in string",
    UnexpectedEndOfComment: "unterminated comment",
    InvalidCommentToken: "comments are not allowed",
  };
  const unexpected = offset >= source.length
    ? "unexpected end of input"
    : `unexpected ${
      JSON.stringify(token.length > 20 ? `${token.slice(0, 20)}…` : token || source[offset])
    }`;
  return { offset, reason: reasons[jsonc.printParseErrorCode(first.error)] ?? unexpected };
}
