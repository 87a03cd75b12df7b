// The part of highlight.js the dashboard uses. Its own types pull in the DOM library, which
// changes the stream types of every file in `deno check .`.

interface HighlightResult {
  value: string;
}

interface HLJSApi {
  getLanguage(name: string): object | undefined;
  highlight(code: string, options: { language: string; ignoreIllegals?: boolean }): HighlightResult;
}

declare const hljs: HLJSApi;
export default hljs;
