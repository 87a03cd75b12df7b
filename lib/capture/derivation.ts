// Which derivation made a source's derived rows. Each adapter versions what it derives from the
// same bytes (`LineAdapter.derivation`); DERIVATION versions what every record goes through after
// its adapter. Capture records both with each source it creates (`sources.derivation`), and a
// source recorded with others (or with none: captured before versions were recorded) is derived
// again from its raw records (`rederive.ts`).

/**
 * The version of what every record goes through after its adapter: the gate, the index text
 * (`indexText`: CJK bigrams, invisible characters left out), the flags and fragments of
 * `derive.ts`, and the titles `batch_plan.ts` cuts. Raise it by one, with a line below saying
 * why, in the change that makes the same bytes stored or indexed differently: capture then
 * derives every stored source again.
 *
 * 1: the version of the build that began recording versions.
 */
export const DERIVATION = 1;

/**
 * What a source derived by `adapter` today records in `sources.derivation`: the shared version
 * and the adapter's (`"1.3"`).
 */
export function derivationOf(adapter: { readonly derivation: number }): string {
  return `${DERIVATION}.${adapter.derivation}`;
}

/** The meta key: the versions every stored source was last found derived with. */
export const DERIVATIONS_KEY = "derivations";

/**
 * The versions of all `adapters` in one string. Kept in meta once no source is left to derive
 * again, so that a run with the same adapters looks no further than this.
 */
export function derivations(adapters: readonly { readonly derivation: number }[]): string {
  return `${DERIVATION}:${adapters.map((a) => a.derivation).join(",")}`;
}
