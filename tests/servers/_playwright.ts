// playwright-core and axe-core for the browser test, installed with npm at test time (see
// `tests/_npm_packages.ts`: what deno.json names, a user's first `deno task start` downloads),
// and the part of playwright's API the test uses, typed here since its own types are not at hand.

import { join } from "node:path";
import { createRequire } from "node:module";
import { npmPackages } from "../_npm_packages.ts";

/** The versions the browser test was written against. */
const PACKAGES = { "playwright-core": "1.65.1", "axe-core": "4.14.1" };

/** An element inside the page, as a callback run there sees it (untyped: the DOM's own). */
// deno-lint-ignore no-explicit-any
type Element = any;

/** What the test does with a playwright locator. */
export interface Locator {
  locator(selector: string): Locator;
  getByRole(
    role: string,
    options?: { name?: string | RegExp; level?: number; exact?: boolean },
  ): Locator;
  getByLabel(text: string | RegExp): Locator;
  getByText(text: string | RegExp): Locator;
  filter(options: { hasText: string | RegExp }): Locator;
  first(): Locator;
  nth(index: number): Locator;
  count(): Promise<number>;
  click(options?: { position: { x: number; y: number } }): Promise<void>;
  fill(value: string): Promise<void>;
  press(key: string): Promise<void>;
  pressSequentially(text: string): Promise<void>;
  hover(): Promise<void>;
  check(): Promise<void>;
  uncheck(): Promise<void>;
  selectOption(value: string): Promise<string[]>;
  isVisible(): Promise<boolean>;
  textContent(): Promise<string | null>;
  allTextContents(): Promise<string[]>;
  inputValue(): Promise<string>;
  getAttribute(name: string): Promise<string | null>;
  boundingBox(): Promise<{ x: number; y: number; width: number; height: number } | null>;
  waitFor(): Promise<void>;
  evaluate<R>(fn: (element: Element) => R): Promise<R>;
  evaluateAll<R>(fn: (elements: Element[]) => R): Promise<R>;
}

/** A request the test holds (`page.route`) until it lets it go on. */
export interface Route {
  request(): { url(): string };
  continue(): Promise<void>;
}

/** What the test does with a playwright page. */
export interface Page extends Pick<Locator, "locator" | "getByRole" | "getByLabel" | "getByText"> {
  goto(url: string): Promise<unknown>;
  goBack(): Promise<unknown>;
  reload(): Promise<unknown>;
  title(): Promise<string>;
  route(url: RegExp, handler: (route: Route) => void): Promise<void>;
  unroute(url: RegExp): Promise<void>;
  setContent(html: string): Promise<void>;
  url(): string;
  context(): { cookies(): Promise<{ httpOnly: boolean; sameSite: string }[]> };
  keyboard: { press(key: string): Promise<void> };
  mouse: {
    move(x: number, y: number): Promise<void>;
    wheel(dx: number, dy: number): Promise<void>;
  };
  request: { get(url: string): Promise<{ status(): number; text(): Promise<string> }> };
  evaluate(script: string): Promise<unknown>;
  emulateMedia(options: { colorScheme: "light" | "dark" }): Promise<void>;
  screenshot(options: { path: string; fullPage?: boolean }): Promise<unknown>;
  setViewportSize(size: { width: number; height: number }): Promise<void>;
  waitForURL(url: RegExp): Promise<void>;
  waitForEvent(event: "download"): Promise<{ path(): Promise<string> }>;
  on(event: "console", listener: (message: { type(): string; text(): string }) => void): void;
  on(event: "pageerror", listener: (error: Error) => void): void;
  on(
    event: "request" | "requestfailed" | "response",
    listener: (request: { url(): string }) => void,
  ): void;
  on(
    event: "dialog",
    listener: (dialog: { message(): string; dismiss(): Promise<void> }) => void,
  ): void;
  close(): Promise<void>;
}

/** A browser playwright launched. */
export interface Browser {
  newPage(options?: { viewport: { width: number; height: number } }): Promise<Page>;
  close(): Promise<void>;
}

/** playwright-core's entry, as far as the test goes. */
export interface Playwright {
  chromium: {
    launch(options: { executablePath: string; headless: boolean; args: string[] }): Promise<
      Browser
    >;
  };
}

/** playwright-core and axe-core's script, or why they cannot be had here. */
export async function loadPlaywright(): Promise<
  { playwright: Playwright; axe: string } | { missing: string }
> {
  const installed = await npmPackages(PACKAGES);
  if ("missing" in installed) return installed;
  try {
    // axe-core's script is run in the page, so its text is what is needed.
    const axe = await Deno.readTextFile(join(installed.modules, "axe-core", "axe.js"));
    // A CommonJS package outside Deno's npm cache loads through node's require.
    const require = createRequire(import.meta.url);
    return { playwright: require(join(installed.modules, "playwright-core")), axe };
  } catch (err) {
    return {
      missing: `playwright-core cannot be loaded: ${(err as Error).message.split("\n")[0]}`,
    };
  }
}
