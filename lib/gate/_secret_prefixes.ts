// Provider tokens the gate recognises by a literal prefix (`npm_`, `SG.`, `hvs.`…): what must
// follow each prefix, and the label it is redacted with. The gate's finders locate the prefixes.

/** A provider token known by its prefix. */
export interface Prefixed {
  /** The label the token is redacted with (one of `SECRET_LABELS`). */
  label: string;
  /** What must follow the prefix: a sticky pattern with its own right boundary. */
  body: RegExp;
  /** Only the body is secret: the prefix is the name of a field (`AccountKey=`). */
  valueOnly?: boolean;
  /** A further test of the body, for bodies that ordinary words could match. */
  check?: (body: string) => boolean;
}

/** Letters and digits: random tokens have both, identifiers and words seldom do. */
function lettersAndDigits(body: string): boolean {
  return /[0-9]/.test(body) && /[A-Za-z]/.test(body);
}

/** Upper and lower case: random letter-only tokens have both, identifiers seldom do. */
function mixedCase(body: string): boolean {
  return /[a-z]/.test(body) && /[A-Z]/.test(body);
}

// Right boundaries: a token ends where its alphabet does.
const END = "(?![A-Za-z0-9_-])";

/** The entries of one or more prefixes that share a label and a body. */
function shape(
  prefixes: string | string[],
  label: string,
  body: string,
  extra: Omit<Prefixed, "label" | "body"> = {},
): [string, Prefixed][] {
  const known = { label, body: new RegExp(body, "y"), ...extra };
  return (typeof prefixes === "string" ? [prefixes] : prefixes).map((p) => [p, known]);
}

const LETTERS_AND_DIGITS = { check: lettersAndDigits };

// Prefixes ending in `_`, `-` or `.`: the gate's prefix finder looks for them from that last
// character, which keeps its scan fast.
const SEPARATED: [string, Prefixed][] = [
  ...shape("npm_", "npm-token", `[A-Za-z0-9]{36}${END}`, LETTERS_AND_DIGITS),
  ...shape("hf_", "huggingface-token", `[A-Za-z0-9]{34,40}${END}`, { check: mixedCase }),
  ...shape("api_org_", "huggingface-token", `[A-Za-z0-9]{34}${END}`, { check: mixedCase }),
  ...shape(["dop_v1_", "doo_v1_", "dor_v1_"], "digitalocean-token", `[a-f0-9]{64}${END}`),
  ...shape(["shpat_", "shpss_", "shpca_", "shppa_"], "shopify-token", `[a-fA-F0-9]{32}${END}`),
  ...shape("lin_api_", "linear-key", `[A-Za-z0-9]{40}${END}`, LETTERS_AND_DIGITS),
  ...shape("ntn_", "notion-token", `[0-9]{11}[A-Za-z0-9]{35}${END}`),
  ...shape("secret_", "notion-token", `[A-Za-z0-9]{43}${END}`, LETTERS_AND_DIGITS),
  ...shape(
    "sntrys_",
    "sentry-token",
    "eyJ[A-Za-z0-9+/=]{30,}_[A-Za-z0-9+/]{43}(?![A-Za-z0-9+/_-])",
  ),
  ...shape("sntryu_", "sentry-token", `[a-f0-9]{64}${END}`),
  ...shape(
    ["pscale_tkn_", "pscale_pw_", "pscale_oauth_"],
    "planetscale-token",
    "[A-Za-z0-9_=-]{32,64}(?![A-Za-z0-9_=-])",
    LETTERS_AND_DIGITS,
  ),
  ...shape("sbp_", "supabase-token", `[a-f0-9]{40}${END}`),
  ...shape("sb_secret_", "supabase-token", "[A-Za-z0-9_-]{24,}", LETTERS_AND_DIGITS),
  ...shape("dckr_pat_", "docker-token", `[A-Za-z0-9_-]{27}${END}`),
  ...shape("figd_", "figma-token", `[A-Za-z0-9_-]{38,45}${END}`, LETTERS_AND_DIGITS),
  ...shape("r8_", "replicate-token", `[A-Za-z0-9]{37}${END}`, LETTERS_AND_DIGITS),
  ...shape(["lsv2_pt_", "lsv2_sk_"], "langsmith-key", `[a-f0-9]{32}_[a-f0-9]{10}${END}`),
  ...shape("ops_", "onepassword-token", "eyJ[A-Za-z0-9+/]{250,}={0,3}"),
  ...shape("whsec_", "stripe-key", "[A-Za-z0-9+/]{32,}={0,2}", LETTERS_AND_DIGITS),
  ...shape("rubygems_", "rubygems-token", `[a-f0-9]{48}${END}`),
  ...shape("pypi-", "pypi-token", "AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
  ...shape("PMAK-", "postman-key", `[a-fA-F0-9]{24}-[a-fA-F0-9]{34}${END}`),
  ...shape("pul-", "pulumi-token", `[a-f0-9]{40}${END}`),
  ...shape("HRKU-", "heroku-key", `[A-Za-z0-9_-]{60}${END}`, LETTERS_AND_DIGITS),
  ...shape(
    ["sq0atp-", "sq0csp-"],
    "square-token",
    `[A-Za-z0-9_-]{22,60}${END}`,
    LETTERS_AND_DIGITS,
  ),
  ...shape("GOCSPX-", "google-oauth-secret", `[A-Za-z0-9_-]{28}${END}`),
  ...shape("NRAK-", "newrelic-key", `[A-Z0-9]{27}${END}`),
  ...shape("pplx-", "perplexity-key", `[A-Za-z0-9]{48}${END}`, LETTERS_AND_DIGITS),
  ...shape("key-", "mailgun-key", `[0-9a-f]{32}${END}`, LETTERS_AND_DIGITS),
  ...shape(["hvs.", "hvb."], "vault-token", "[A-Za-z0-9_-]{90,}", LETTERS_AND_DIGITS),
  ...shape("ya29.", "google-oauth-token", "[A-Za-z0-9_-]{30,}", LETTERS_AND_DIGITS),
  ...shape(["xapp-", "xoxe.xoxp-", "xoxe.xoxb-"], "slack-token", "[0-9]-[A-Za-z0-9-]{20,}"),
  ...shape("xai-", "xai-key", `[A-Za-z0-9]{80}${END}`, LETTERS_AND_DIGITS),
  ...shape("xkeysib-", "brevo-key", `[a-f0-9]{64}-[A-Za-z0-9]{16}${END}`),
  ...shape("glsa_", "grafana-token", `[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}${END}`),
  ...shape("gsk_", "groq-key", `[A-Za-z0-9]{52}${END}`, LETTERS_AND_DIGITS),
  ...shape("SG.", "sendgrid-key", `[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}${END}`),
  ...shape(
    "glc_",
    "grafana-token",
    "[A-Za-z0-9+/]{32,400}={0,2}(?![A-Za-z0-9+/=_-])",
    LETTERS_AND_DIGITS,
  ),
  ...shape(
    ["dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."],
    "doppler-token",
    `[A-Za-z0-9]{40,44}${END}`,
    LETTERS_AND_DIGITS,
  ),
];

// Prefixes without a separator at their end: the gate's token finder looks for them from their
// first letter, beside other shapes that start with a letter (`A` of `AKIA`).
const LETTERED: [string, Prefixed][] = [
  ...shape("ATATT3", "atlassian-token", "[A-Za-z0-9_=-]{150,}", LETTERS_AND_DIGITS),
  ...shape(
    "AGE-SECRET-KEY-1",
    "age-secret-key",
    "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}(?![A-Za-z0-9])",
  ),
  ...shape("AccountKey=", "azure-storage-key", "[A-Za-z0-9+/]{86}==", { valueOnly: true }),
  ...shape("dapi", "databricks-token", `[a-f0-9]{32}(?:-[0-9])?${END}`, LETTERS_AND_DIGITS),
  ...shape("EAAA", "square-token", "[A-Za-z0-9_-]{60}(?![A-Za-z0-9_+/=-])", {
    check: (body) => lettersAndDigits(body) && mixedCase(body),
  }),
  ...shape("SK", "twilio-key", `[0-9a-fA-F]{32}${END}`, LETTERS_AND_DIGITS),
];

/** Each prefix exactly as a finder captures it, with what must follow it. */
export const PREFIXED: ReadonlyMap<string, Prefixed> = new Map([...SEPARATED, ...LETTERED]);

/** The prefixes the gate's prefix finder looks for (each ends in `_`, `-` or `.`). */
export const SEPARATED_PREFIXES: readonly string[] = SEPARATED.map(([prefix]) => prefix);
