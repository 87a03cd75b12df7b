// The dashboard in a real browser (headless Chromium through playwright-core): open the printed
// URL, search with the keyboard, open a hit in its context, export it, page the conversation to
// its end, copy its resume command, fork it and see the fork among its project's sessions, rename
// it, see the projects and the status. Every page is checked by axe-core (no serious or critical
// violation) and photographed in light and dark to tests/artifacts/. A second test opens a
// conversation full of hostile Markdown and HTML and finds that nothing ran. Skipped, saying why,
// without Chromium or without npm to install playwright-core and axe-core with (they are not in
// deno.json, so a user's first `deno task start` does not download them).

import assert from "node:assert/strict";
import { join } from "node:path";
import { loadContext } from "../../lib/context.ts";
import { nearestExistingDir } from "../../lib/sessions/resume.ts";
import { stageMarkersFromEnv } from "../../lib/stage_markers.ts";
import { serveDashboard } from "../../servers/dashboard.ts";
import { ROOT, type World } from "../_helpers.ts";
import { capturedWorld, TOKEN } from "./_dashboard.ts";
import { HOSTILE_ID, HOSTILE_WORD, hostileWorld } from "./_hostile.ts";
import {
  type Browser,
  loadPlaywright,
  type Page,
  type Playwright,
  type Route,
} from "./_playwright.ts";

const CHROMIUM = "/usr/lib/chromium/chromium";
const ARTIFACTS = join(ROOT, "tests", "artifacts");

const LAUNCH = {
  executablePath: CHROMIUM,
  headless: true,
  args: [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
};

/** axe-core's script, run in the page through the DevTools protocol (the page's CSP stays). */
let AXE = "";

/** Violations of impact serious or critical on the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  if (await page.evaluate("typeof window.axe") === "undefined") await page.evaluate(AXE);
  const found = await page.evaluate(`axe.run(document, { resultTypes: ["violations"] })
    .then((r) => r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => v.id + " (" + v.impact + "): " +
        v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")))`) as string[];
  return found;
}

/**
 * Checks the page with axe and photographs it in light and dark (`name` in tests/artifacts/);
 * returns what axe found, by scheme.
 */
async function look(page: Page, name: string, fullPage = true): Promise<string[]> {
  const problems: string[] = [];
  for (const colorScheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme });
    for (const v of await seriousViolations(page)) problems.push(`${name} ${colorScheme}: ${v}`);
    await page.screenshot({
      path: join(ARTIFACTS, `dashboard-${name}-${colorScheme}.png`),
      fullPage,
    });
  }
  await page.emulateMedia({ colorScheme: "light" });
  return problems;
}

/** Waits until the page has scrolled past `y` (the page's policy forbids waitForFunction's eval). */
async function scrolledPast(page: Page, y: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await page.evaluate("window.scrollY") as number > y) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`The page did not scroll past ${y} px`);
}

/** playwright-core and Chromium (and axe-core's script), or why the test cannot run here. */
async function browser(): Promise<{ playwright: Playwright } | { missing: string }> {
  try {
    if (!Deno.statSync(CHROMIUM).isFile) return { missing: `no Chromium at ${CHROMIUM}` };
  } catch {
    return { missing: `no Chromium at ${CHROMIUM} (apt-get install -y chromium)` };
  }
  const loaded = await loadPlaywright();
  if ("missing" in loaded) return loaded;
  AXE = loaded.axe;
  return { playwright: loaded.playwright };
}

const found = await browser();

/** `world` served by a dashboard on a free loopback port, and a browser to open it in. */
async function serve(world: World): Promise<{
  dashboard: ReturnType<typeof serveDashboard>;
  browser: Browser;
  close(): Promise<void>;
}> {
  const { chromium } = (found as { playwright: Playwright }).playwright;
  const dashboard = serveDashboard({
    ctx: loadContext({ env: world.env }),
    hostname: "127.0.0.1",
    port: 0,
    token: TOKEN,
    markers: stageMarkersFromEnv(world.env),
  });
  const browser = await chromium.launch(LAUNCH);
  return {
    dashboard,
    browser,
    close: async () => {
      await browser.close();
      await dashboard.shutdown();
      await world.cleanup();
    },
  };
}

/**
 * A desktop-sized page of `browser`, and what goes wrong on it: script errors and policy
 * violations (`problems`), and requests to anywhere but `url` (`outside`).
 */
async function watchedPage(
  browser: Browser,
  url: string,
): Promise<{ page: Page; problems: string[]; outside: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  page.on("pageerror", (err) => problems.push(err.message));
  const outside: string[] = [];
  page.on("request", (request) => {
    if (!request.url().startsWith(url)) outside.push(request.url());
  });
  return { page, problems, outside };
}

const NAME =
  "a browser opens the printed URL, searches, opens a hit, pages to the end and forks it";

Deno.test({
  name: "playwright" in found ? NAME : `${NAME} (skipped: ${found.missing})`,
  ignore: !("playwright" in found),
  async fn(t) {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const { dashboard, browser, close } = await serve(await capturedWorld({ toolHeavy: true }));
    const accessibility: string[] = [];
    try {
      const { page, problems, outside } = await watchedPage(browser, dashboard.url);

      await t.step("the printed URL sets the cookie and drops the token", async () => {
        await page.goto(dashboard.urlWithToken);
        assert.equal(page.url(), dashboard.url);
        assert.equal(await page.getByRole("heading", { level: 1 }).textContent(), "Search");
        const cookies = await page.context().cookies();
        assert.equal(cookies.length, 1);
        assert.equal(cookies[0]!.httpOnly, true);
        assert.equal(cookies[0]!.sameSite, "Strict");
      });

      await t.step("/ focuses the search box; Enter searches", async () => {
        await page.locator("body").press("/");
        const box = page.getByRole("searchbox", { name: /Search text/ });
        assert.equal(await box.evaluate((el) => el === el.ownerDocument.activeElement), true);
        await box.fill("marmot keyring");
        await box.press("Enter");
        await page.waitForURL(/\?q=/);
        assert.equal(page.url(), `${dashboard.url}?q=marmot+keyring`, "only the query is sent");
        assert.equal(
          await page.locator("details.filters").evaluate((el) => el.hasAttribute("open")),
          false,
          "the filters stay folded after a plain search",
        );
        await page.getByRole("status").filter({ hasText: "2 matches" }).waitFor();
        assert.equal(await page.getByRole("status").first().textContent(), "2 matches");
        assert.equal(await page.locator("li.hit mark").first().textContent(), "marmot");
        assert.equal(
          await page.locator("li.hit a.title").first().textContent(),
          "tundra-mosaic: nightly export batching",
          "a hit shows its conversation's title",
        );
        accessibility.push(...await look(page, "search"));
      });

      await t.step(
        "j moves to the first hit and Enter opens it, the question in view",
        async () => {
          await page.locator("body").click({ position: { x: 5, y: 300 } });
          const current = () =>
            page.locator("li.hit").evaluateAll((els) =>
              els.findIndex((el) => el.classList.contains("current"))
            );
          await page.keyboard.press("j");
          assert.equal(await current(), 0);
          await page.keyboard.press("j");
          assert.equal(await current(), 1, "j moves down");
          await page.keyboard.press("k");
          assert.equal(await current(), 0, "k moves up");
          await page.keyboard.press("k");
          assert.equal(await current(), 0, "and stops at the first");
          assert.equal(
            await page.locator("li.hit").first().locator("a.title").evaluate((el) =>
              el === el.ownerDocument.activeElement
            ),
            true,
            "the current hit's link has the focus",
          );
          await page.keyboard.press("Enter");
          await page.getByRole("heading", {
            level: 1,
            name: "tundra-mosaic: nightly export batching",
          })
            .waitFor();
          const hit = page.locator("article.is-hit");
          assert.equal(await hit.count(), 1);
          assert.equal(await page.locator("article.rec:target").count(), 1);
          assert.match((await hit.textContent()) ?? "", /marmot keyring/);
          // The hit and the user's question before it are both on screen.
          const seen = await page.locator("article.rec").evaluateAll((els) => {
            const view = els[0]!.ownerDocument.defaultView!;
            const at = els.findIndex((el) => el.classList.contains("is-hit"));
            const question = els.slice(0, at).reverse().find((el) =>
              el.classList.contains("role-user") && el.classList.contains("shape-message")
            );
            const visible = (el: (typeof els)[number] | undefined) => {
              if (!el) return false;
              const box = el.getBoundingClientRect();
              return box.bottom > 0 && box.top < view.innerHeight;
            };
            return { hit: visible(els[at]), question: visible(question) };
          });
          assert.deepEqual(seen, { hit: true, question: true });
          await page.locator(".menu.resume > summary").click();
          const copy = page.getByRole("button", { name: "Copy" });
          assert.equal(await copy.isVisible(), true, "the script ran under the policy");
          await page.keyboard.press("Escape");
          assert.equal(await copy.isVisible(), false, "Escape closes the menu");
          const head = await page.locator(".conv-head").boundingBox();
          assert.ok(head && head.height <= 90, `a compact header (${head?.height} px)`);
          accessibility.push(...await look(page, "conversation-hit", false));
        },
      );

      await t.step("export as Markdown and JSON", async () => {
        const download = async (name: string) => {
          await page.locator(".menu.export > summary").click();
          const [file] = await Promise.all([
            page.waitForEvent("download"),
            page.getByRole("link", { name, exact: true }).click(),
          ]);
          return await Deno.readTextFile(await file.path());
        };
        const md = await download("Markdown");
        assert.match(md, /^# tundra-mosaic: nightly export batching\n/);
        assert.match(md, /\n### user · /);
        assert.match(md, /marmot keyring/);
        const json = JSON.parse(await download("JSON"));
        assert.equal(json.conversation.title, "tundra-mosaic: nightly export batching");
        assert.equal(json.records.length, 40);
      });

      await t.step("meta records show with one toggle; a tool call opens in place", async () => {
        await page.getByRole("link", { name: /Start of the conversation/ }).first().click();
        await page.locator("article.rec").first().waitFor();
        const quiet = page.locator("article.quiet").first();
        assert.equal(await quiet.isVisible(), false);
        await page.getByLabel(/Show \d+ meta and empty records?/).check();
        assert.equal(await quiet.isVisible(), true);
        await page.getByLabel(/Show \d+ meta and empty records?/).uncheck();
        const tool = page.locator("details.tool").first();
        await tool.locator(":scope > summary").click();
        assert.equal(await tool.locator("pre.input").isVisible(), true);
        assert.equal(
          await tool.locator(".result-in pre.output").isVisible(),
          true,
          "its result inside",
        );
        // One small raw control per record, shown on hover and on keyboard focus.
        const message = page.locator("article.shape-message").first();
        const control = message.locator(":scope > details.raw > summary");
        const opacity = () =>
          control.evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).opacity);
        await page.mouse.move(0, 0);
        assert.equal(await opacity(), "0", "hidden until asked for");
        await message.hover();
        assert.equal(await opacity(), "1", "shown on hover");
        await page.mouse.move(0, 0);
        await message.locator(".md").click();
        let focused = false;
        for (let i = 0; i < 40 && !focused; i++) {
          await page.keyboard.press("Tab");
          focused = await page.evaluate(
            "document.activeElement?.matches('details.raw > summary') ?? false",
          ) as boolean;
        }
        assert.ok(focused, "reached with the keyboard");
        const shown = await page.evaluate(
          "getComputedStyle(document.activeElement).opacity",
        ) as string;
        assert.equal(shown, "1", "shown on focus");
        await page.keyboard.press("Enter");
        assert.equal(
          await page.locator("details.raw[open] > pre").first().isVisible(),
          true,
          "Enter opens it",
        );
      });

      await t.step("from the start, ten records a page, to the end", async () => {
        await page.getByLabel("Per page").first().selectOption("10");
        await page.getByRole("button", { name: "Show" }).first().click();
        let pages = 1;
        const seen = new Set<string>();
        while (true) {
          for (
            const id of await page.locator(".rec[id^='r']").evaluateAll((els) =>
              els.map((e) => e.id)
            )
          ) {
            seen.add(id);
          }
          const next = page.getByRole("link", { name: "Next →" }).first();
          if (await next.count() === 0) break;
          await next.click();
          pages++;
        }
        assert.equal(pages, 4);
        assert.equal(seen.size, 40);
        assert.equal(await page.getByText("End of the conversation").first().isVisible(), true);
        await page.evaluate("window.scrollTo(0, 0)");
        accessibility.push(...await look(page, "conversation-end"));
      });

      await t.step("the header stays in view while the conversation scrolls", async () => {
        const whole = new URL(page.url());
        whole.search = "";
        await page.goto(whole.href);
        await page.locator("article.rec").first().waitFor();
        await page.mouse.wheel(0, 2500);
        await scrolledPast(page, 1000);
        const box = await page.locator(".conv-head").boundingBox();
        assert.ok(box && Math.abs(box.y) < 1, `the header is at the top (${box?.y})`);
        assert.equal(
          await page.getByRole("heading", { level: 1 }).isVisible(),
          true,
          "its title is visible",
        );
        await page.locator(".menu.resume > summary").click();
      });

      await t.step("the resume command copies; without a clipboard it is selected", async () => {
        // Located by what it copies: its name changes to say what happened.
        const copy = page.locator("button[data-copy-for='resume-cmd']");
        const command = await page.locator("#resume-cmd").textContent();
        await copy.click();
        await copy.filter({ hasText: /^(Copied|Selected: press Ctrl\+C)$/ }).waitFor();
        if (await copy.textContent() === "Copied") {
          // A browser without the clipboard API (or refusing it) gets the fallback.
          await page.evaluate(
            "Object.defineProperty(navigator, 'clipboard', { value: undefined })",
          );
          await copy.filter({ hasText: /^Copy$/ }).waitFor();
          await copy.click();
          await copy.filter({ hasText: "Selected: press Ctrl+C" }).waitFor();
        }
        assert.equal(await page.evaluate("getSelection().toString()"), command);
      });

      await t.step(
        "fork from the conversation page; the fork is listed with its project",
        async () => {
          await page.getByRole("button", { name: "Fork into a logbook session" }).click();
          await page.getByRole("heading", { level: 1, name: "Sessions" }).waitFor();
          const notice = page.getByRole("status").filter({
            hasText: "Forked into a new logbook session",
          });
          await notice.waitFor();
          // The fixture's directory is on no machine: the command runs in its nearest that is.
          assert.ok(
            ((await notice.textContent()) ?? "").includes(
              `“tundra-mosaic: nightly export batching (fork)”. Continue it with cd ${
                nearestExistingDir("/home/dev/src/alpha")
              } && logbook resume `,
            ),
          );
          assert.equal(
            await page.getByLabel("Project directory").inputValue(),
            "/home/dev/src/alpha",
          );
          const first = page.locator("li.session").first();
          assert.match(
            (await first.locator(".meta-line").textContent()) ?? "",
            /^logbook · .* · forked from claude:f332cca8-0b9a-4244-835f-c44f31385301$/,
          );
          assert.equal(
            await first.locator("[id^='title-']").textContent(),
            "tundra-mosaic: nightly export batching (fork)",
          );
          const original = page.locator("li.session").filter({
            hasText: "claude --resume f332cca8-0b9a-4244-835f-c44f31385301",
          });
          assert.equal(await original.count(), 1, "the source conversation is listed too");
          assert.equal(await original.getByRole("button", { name: "Rename" }).count(), 0);
        },
      );

      await t.step("rename the fork on the sessions page", async () => {
        const first = page.locator("li.session").first();
        await first.locator("details.rename > summary").click();
        await first.getByLabel("New title").fill("export batching, continued");
        await first.getByRole("button", { name: "Rename" }).click();
        await page.getByRole("status").filter({
          hasText: "Renamed to “export batching, continued”",
        })
          .waitFor();
        assert.match(
          await page.locator(".notice[role=status]").getAttribute("class") ?? "",
          /\bok\b/,
          "a success looks like one",
        );
        assert.equal(
          await page.locator("li.session").first().locator("[id^='title-']").textContent(),
          "export batching, continued",
        );
        accessibility.push(...await look(page, "sessions-project"));
      });

      await t.step("sessions of every project, and the projects page", async () => {
        await page.getByRole("link", { name: "Sessions", exact: true }).click();
        await page.getByRole("heading", { level: 2, name: "Recent sessions of every project" })
          .waitFor();
        assert.ok(await page.locator("ol.rows.recent > li").count() > 10);
        accessibility.push(...await look(page, "sessions"));
        await page.getByRole("link", { name: "Projects", exact: true }).click();
        await page.getByRole("heading", { level: 1, name: "Projects" }).waitFor();
        assert.ok(await page.locator("ul.projects > li").count() > 3);
        accessibility.push(...await look(page, "projects"));
      });

      await t.step("the usage page: a chart of the days, their numbers in a table", async () => {
        await page.getByRole("link", { name: "Usage", exact: true }).click();
        await page.getByRole("heading", { level: 1, name: "Usage" }).waitFor();
        assert.ok(await page.locator("figure.usage-chart svg[role=group]").count() === 1);
        assert.ok(await page.locator("table tbody tr").count() > 0);
        accessibility.push(...await look(page, "usage"));
      });

      await t.step("the status page", async () => {
        await page.getByRole("link", { name: "Status" }).click();
        await page.getByRole("heading", { level: 1, name: "Status" }).waitFor();
        assert.equal(await page.getByText("Capture is on").isVisible(), true);
        accessibility.push(...await look(page, "status"));
      });

      await t.step(
        "a turn of tool calls: the question, the calls on a line each, the answer",
        async () => {
          await page.goto(`${dashboard.url}?q=flint-meridian`);
          await page.locator("li.hit a.title").first().click();
          await page.locator(".is-hit").waitFor();
          const question = page.locator("article.role-user.shape-message").first();
          assert.match(
            await question.textContent() ?? "",
            /gantry-sorrel build takes nine minutes/,
          );
          const lines = await page.locator("details.tool > summary").allTextContents();
          assert.equal(lines.length, 8);
          assert.match(lines[0]!.replace(/\s+/g, " ").trim(), /^Bash gh run view 4411 .* → 95 B$/);
          const call = page.locator("details.tool").nth(1);
          await call.locator(":scope > summary").click();
          assert.equal(await call.locator(".result-in pre.output").isVisible(), true);
          // A whole-page photograph of a sticky header is taken from the top.
          await page.evaluate("window.scrollTo(0, 0)");
          accessibility.push(...await look(page, "conversation-tools"));
          await page.goto(`${dashboard.url}?q=export&group=1`);
          await page.locator("section.group").first().waitFor();
          accessibility.push(...await look(page, "search-grouped"));
          await page.goto(`${dashboard.url}?project=%2Fhome%2Fdev%2Fsrc%2Falpha`);
          await page.locator("ol.rows.recent").waitFor();
          accessibility.push(...await look(page, "project-conversations"));
        },
      );

      await t.step("on a phone", async () => {
        await page.setViewportSize({ width: 390, height: 844 });
        await page.goto(`${dashboard.url}?q=export`);
        accessibility.push(...await look(page, "search-phone"));
        await page.locator("li.hit a.title").first().click();
        await page.locator(".is-hit").waitFor();
        accessibility.push(...await look(page, "conversation-phone", false));
        const width = await page.locator("body").evaluate((el) => el.scrollWidth);
        assert.ok(width <= 390, `nothing wider than the phone (${width} px)`);
        const head = await page.locator(".conv-head").boundingBox();
        assert.ok(head && head.height <= 120, `a compact header on a phone (${head?.height} px)`);
        const tops = await page.locator(".conv-head .actions > *").evaluateAll((els) =>
          els.map((el) => Math.round(el.getBoundingClientRect().top))
        );
        assert.equal(new Set(tops).size, 1, `the actions in one row (${tops})`);
        const facts = await page.locator(".conv-head .facts").boundingBox();
        assert.ok(facts && facts.height < 30, `the facts on one line (${facts?.height} px)`);
        await page.mouse.wheel(0, 3000);
        await scrolledPast(page, 500);
        const after = await page.locator(".conv-head").boundingBox();
        assert.ok(after && Math.abs(after.y) < 1, `the header stays in view (${after?.y})`);
        await page.screenshot({
          path: join(ARTIFACTS, "dashboard-conversation-phone-scrolled.png"),
        });
        await page.goto(`${dashboard.url}sessions?project=%2Fhome%2Fdev%2Fsrc%2Falpha`);
        accessibility.push(...await look(page, "sessions-project-phone"));
      });

      assert.deepEqual(accessibility, [], "axe finds no serious or critical violation");
      assert.deepEqual(problems, [], "no script error and no policy violation");
      assert.deepEqual(outside, [], "nothing is loaded from anywhere else");
    } finally {
      await close();
    }
  },
});

/** Requests the page makes that the test holds (`page.route`), each waited for in turn. */
class Held {
  readonly routes: Route[] = [];
  readonly #waiting: { n: number; resolve: (route: Route) => void }[] = [];

  add(route: Route): void {
    this.routes.push(route);
    for (const w of this.#waiting.filter((w) => w.n === this.routes.length)) w.resolve(route);
  }

  /** The `n`th request held (1-based), once the page has made it. */
  nth(n: number): Promise<Route> {
    const route = this.routes[n - 1];
    if (route) return Promise.resolve(route);
    return new Promise((resolve) => this.#waiting.push({ n, resolve }));
  }
}

const LIVE_NAME =
  "the search box searches as you type: no Enter, the old hits until the new, no stale answer";

Deno.test({
  name: "playwright" in found ? LIVE_NAME : `${LIVE_NAME} (skipped: ${found.missing})`,
  ignore: !("playwright" in found),
  async fn(t) {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const { dashboard, browser, close } = await serve(await capturedWorld({ toolHeavy: true }));
    const accessibility: string[] = [];
    try {
      const { page, problems, outside } = await watchedPage(browser, dashboard.url);
      const asked: string[] = [];
      page.on("request", (request) => {
        if (request.url().includes("/search/results")) asked.push(request.url());
      });
      // Requests answered, or failed (abandoned by the page), for the test to wait on.
      const ended: string[] = [];
      const endWaiters: { part: string; resolve: () => void }[] = [];
      const end = (request: { url(): string }) => {
        ended.push(request.url());
        for (const w of endWaiters) if (request.url().includes(w.part)) w.resolve();
      };
      page.on("requestfailed", end);
      page.on("response", end);
      const endOf = (part: string) =>
        ended.some((url) => url.includes(part))
          ? Promise.resolve()
          : new Promise<void>((resolve) => endWaiters.push({ part, resolve }));

      await page.goto(dashboard.urlWithToken);
      const box = page.getByRole("searchbox", { name: /Search text/ });
      const region = page.locator("#results");
      const address = (query: string) => new RegExp(`/\\?q=${query}&forgive=typing$`);

      await t.step(
        "a word typed shows its hits without Enter; the address and title follow",
        async () => {
          assert.equal(await region.getAttribute("aria-live"), "polite");
          assert.equal(asked.length, 0, "nothing asked before typing");
          await page.evaluate("window.sameDocument = true");
          await page.locator("body").press("/");
          await box.pressSequentially("marmot");
          await page.waitForURL(address("marmot"));
          await region.locator("li.hit mark").first().waitFor();
          assert.equal(
            (await region.locator("li.hit mark").first().textContent())?.toLowerCase(),
            "marmot",
          );
          assert.equal(await page.evaluate("window.sameDocument"), true, "nothing was submitted");
          assert.equal(await page.title(), "Search: marmot · logbook");
          assert.equal(await region.getAttribute("aria-busy"), "false");
          assert.ok(asked.length >= 1 && asked.length <= 6, `asked ${asked.length} times`);
          accessibility.push(...await look(page, "search-as-you-type"));
        },
      );

      await t.step("j and Enter open a hit; back shows the typed search again", async () => {
        await page.locator("body").click({ position: { x: 5, y: 300 } });
        await page.keyboard.press("j");
        assert.equal(
          await page.locator("li.hit").first().evaluate((el) => el.classList.contains("current")),
          true,
        );
        await page.keyboard.press("Enter");
        await page.locator("article.is-hit").waitFor();
        await page.goBack();
        await page.locator("li.hit mark").first().waitFor();
        assert.match(page.url(), address("marmot"));
        assert.equal(await box.inputValue(), "marmot");
      });

      await t.step(
        "the old hits stay until the new come; an older search's answer is dropped",
        async () => {
          const held = new Held();
          const path = /\/search\/results/;
          await page.route(path, (route) => held.add(route));
          try {
            const before = await region.locator("li.hit").allTextContents();
            assert.ok(before.length > 0);
            await box.fill("export");
            const older = await held.nth(1);
            assert.match(older.request().url(), /[?&]q=export&forgive=typing$/);
            assert.deepEqual(
              await region.locator("li.hit").allTextContents(),
              before,
              "no flicker",
            );
            assert.equal(await region.getAttribute("aria-busy"), "true");
            await box.fill("flint-meridian");
            const newer = await held.nth(2);
            assert.match(newer.request().url(), /[?&]q=flint-meridian&forgive=typing$/);
            assert.deepEqual(await region.locator("li.hit").allTextContents(), before);
            // The newer answer comes first, then the older: the older must not replace it.
            await newer.continue();
            await page.waitForURL(address("flint-meridian"));
            const newest = await region.locator("li.hit").allTextContents();
            assert.ok(newest.some((hit) => /flint-meridian/i.test(hit)), `${newest}`);
            await older.continue().catch(() => {}); // abandoned by the page already, or not
            await endOf("q=export&");
            // A later search starts only after the older answer was in the page's hands (the
            // pause in typing comes after it): while it is held, what is shown is the newer.
            await box.fill("marmot");
            const later = await held.nth(3);
            assert.deepEqual(await region.locator("li.hit").allTextContents(), newest);
            assert.match(page.url(), address("flint-meridian"));
            await later.continue();
            await page.waitForURL(address("marmot"));
          } finally {
            await page.unroute(path);
          }
        },
      );

      await t.step(
        "an emptied box lists the recent conversations; reload keeps what is shown",
        async () => {
          await box.fill("");
          await region.getByRole("heading", { level: 2, name: "Recent conversations" }).waitFor();
          await page.waitForURL(new RegExp(`^${dashboard.url}$`));
          assert.equal(await page.title(), "Search · logbook");
          await box.fill("qwzxvj");
          // Without filters, the sentence is the empty answer's own (`noMatch` of the search).
          const why = region.getByRole("status").filter({ hasText: /^No matches/ });
          await why.waitFor();
          await page.reload();
          await why.waitFor();
          assert.equal(await box.inputValue(), "qwzxvj");
          accessibility.push(...await look(page, "search-as-you-type-none"));
        },
      );

      // The first letters find the word, and a typo the closest.
      await t.step({
        name: "the first letters of a word, typed, show its hits",
        fn: async () => {
          await box.fill("");
          await box.pressSequentially("marm");
          await page.waitForURL(address("marm"));
          const hits = await region.locator("li.hit").allTextContents();
          assert.ok(hits.some((hit) => /marmot/i.test(hit)), `${hits}`);
        },
      });
      await t.step({
        name: "a mistyped word shows the closest, says so, and links to the words as typed",
        fn: async () => {
          await box.fill("marmto");
          await region.getByRole("note").filter({ hasText: /marmto/ }).waitFor();
          assert.ok(await region.locator("li.hit").count() > 0);
          await region.getByRole("link", { name: 'search for "marmto" exactly' }).click();
          await page.waitForURL(/[?&]forgive=exact/);
          await page.getByRole("status").filter({ hasText: /No matches/ }).waitFor();
          accessibility.push(...await look(page, "search-forgiven"));
        },
      });

      assert.deepEqual(accessibility, [], "axe finds no serious or critical violation");
      assert.deepEqual(problems, [], "no script error and no policy violation");
      assert.deepEqual(outside, [], "nothing is loaded from anywhere else");
    } finally {
      await close();
    }
  },
});

const HOSTILE_NAME = "hostile Markdown and HTML in a transcript run nothing in a real browser";

Deno.test({
  name: "playwright" in found ? HOSTILE_NAME : `${HOSTILE_NAME} (skipped: ${found.missing})`,
  ignore: !("playwright" in found),
  async fn(t) {
    const { dashboard, browser, close } = await serve(await hostileWorld());
    try {
      const page = await browser.newPage();
      const dialogs: string[] = [];
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message());
        dialog.dismiss().catch(() => {});
      });
      const outside: string[] = [];
      page.on("request", (request) => {
        if (!request.url().startsWith(dashboard.url)) outside.push(request.url());
      });
      const ran = () => page.evaluate("typeof window.__pwned");
      await page.goto(dashboard.urlWithToken);
      const conversation = `${dashboard.url}conversations/${encodeURIComponent(HOSTILE_ID)}`;

      for (
        const [name, path] of [
          ["search", `?q=${HOSTILE_WORD}`],
          ["grouped search", `?q=${HOSTILE_WORD}&group=1`],
          ["conversation", `conversations/${encodeURIComponent(HOSTILE_ID)}`],
          ["sessions", "sessions"],
          ["projects", "projects"],
          ["status", "status"],
        ]
      ) {
        await t.step(`the ${name} page`, async () => {
          await page.goto(`${dashboard.url}${path}`);
          await page.locator("main").waitFor();
          assert.equal(await ran(), "undefined");
        });
      }

      await t.step(
        "every fold opened, meta shown, every link inside a message looked at",
        async () => {
          await page.goto(conversation);
          assert.equal(await page.locator("article.rec").count() > 20, true);
          await page.locator("details").evaluateAll((els) => {
            for (const el of els) el.setAttribute("open", "");
          });
          await page.locator("#show-quiet").check().catch(() => {});
          const hrefs = await page.locator(".md a").evaluateAll((els) =>
            els.map((el) => el.getAttribute("href") ?? "")
          );
          for (const href of hrefs) assert.match(href, /^(https?:|mailto:)/, href);
          assert.equal(await ran(), "undefined");
          await page.screenshot({ path: join(ARTIFACTS, "dashboard-hostile.png"), fullPage: true });
        },
      );

      await t.step(
        "the HTML export, opened as a file, runs nothing and loads nothing",
        async () => {
          const response = await page.request.get(
            `${conversation}/export?format=html`,
          );
          assert.equal(response.status(), 200);
          const file = await browser.newPage();
          file.on("request", (request) => {
            if (!request.url().startsWith("data:") && request.url() !== "about:blank") {
              outside.push(request.url());
            }
          });
          file.on("dialog", (dialog) => {
            dialogs.push(dialog.message());
            dialog.dismiss().catch(() => {});
          });
          await file.setContent(await response.text());
          await file.locator("details").evaluateAll((els) => {
            for (const el of els) el.setAttribute("open", "");
          });
          assert.equal(await file.evaluate("typeof window.__pwned"), "undefined");
          await file.close();
        },
      );

      assert.deepEqual(dialogs, [], "no dialog opened");
      assert.deepEqual(outside, [], "nothing fetched from anywhere else");
    } finally {
      await close();
    }
  },
});
