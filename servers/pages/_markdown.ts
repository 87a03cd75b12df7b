// Transcript Markdown as HTML for the conversation page: markdown-it with raw HTML off (a
// transcript's `<script>` is shown as text), links only to http, https and mailto, images shown
// as links (nothing is fetched), and code blocks highlighted on the server by highlight.js.
// Both libraries are imported the first time a page needs them, never on a command's start-up.

/**
 * Renders one transcript text as HTML that is safe to insert as is; `inline` renders one line
 * (a fold's summary) without blocks and without links, as it sits inside a control.
 */
export type RenderMarkdown = ((text: string) => string) & { inline(text: string): string };

/** Code longer than this is shown plain: highlighting it would hold the event loop. */
const MAX_HIGHLIGHT = 64 * 1024;
/** Text longer than this is shown as preformatted text, not parsed. */
const MAX_MARKDOWN = 512 * 1024;

const SAFE_LINK = /^(https?:|mailto:)/i;

let loading: Promise<RenderMarkdown> | undefined;

/** The renderer, loaded once per process. */
export function markdownRenderer(): Promise<RenderMarkdown> {
  loading ??= load();
  return loading;
}

async function load(): Promise<RenderMarkdown> {
  const [{ default: MarkdownIt }, { default: hljs }] = await Promise.all([
    import("markdown-it"),
    // @ts-types="./_highlight.d.ts"
    import("highlight.js/lib/common"),
  ]);
  const md: InstanceType<typeof MarkdownIt> = new MarkdownIt({
    html: false,
    linkify: false,
    typographer: false,
    highlight(code: string, lang: string): string {
      const language = lang.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
      if (!language || code.length > MAX_HIGHLIGHT || !hljs.getLanguage(language)) return "";
      try {
        const value = hljs.highlight(code, { language, ignoreIllegals: true }).value;
        return `<pre class="code"><code class="hljs language-${
          md.utils.escapeHtml(language)
        }">${value}</code></pre>`;
      } catch {
        return "";
      }
    },
  });
  // Only links a person can follow safely; a relative link would point into the dashboard.
  md.validateLink = (url: string) => SAFE_LINK.test(url.trim());
  // An image would be fetched by the browser: show its text and address as a link instead.
  md.disable("image");
  const linkOpen = md.renderer.rules.link_open ??
    ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx]!;
    token.attrSet("rel", "noopener noreferrer nofollow");
    token.attrSet("target", "_blank");
    return linkOpen(tokens, idx, options, env, self);
  };
  // A summary is a control: a link inside it could not be followed, so there is none.
  const line = new MarkdownIt({ html: false, linkify: false, typographer: false })
    .disable(["link", "image", "autolink"]);
  const render = (text: string) => {
    if (text.length > MAX_MARKDOWN) return `<pre>${md.utils.escapeHtml(text)}</pre>`;
    return md.render(text);
  };
  return Object.assign(render, { inline: (text: string) => line.renderInline(text) });
}
