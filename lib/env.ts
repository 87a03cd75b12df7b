// The environment as a value, so library code reads variables through an injected object
// (tests pass a plain record; commands pass `Deno.env`).

/** Anything that can look up an environment variable, such as `Deno.env`. */
export interface Env {
  get(name: string): string | undefined;
}

/** An `Env` over a plain record, for tests and for child environments. */
export function envFrom(values: Record<string, string | undefined>): Env {
  return { get: (name) => values[name] };
}

/** True when a variable is set to a value that means "off": `0`, `false`, `no`, `off`. */
export function isOff(value: string | undefined): boolean {
  return value !== undefined && /^(0|false|no|off)$/i.test(value.trim());
}
