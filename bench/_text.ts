// Seeded randomness and the text of the benchmark corpus: a Zipf-distributed vocabulary, prose,
// code, paths, tool outputs and base64 payloads, and the planted query terms of known frequency.

/** A seeded source of numbers in [0, 1). */
export type Random = () => number;

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed from a string (FNV-1a). */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

// The most frequent words: what conversations about code are mostly made of. The long tail is
// made of syllables (below), so rare words are rare and unlikely to collide with planted terms.
const HEAD = (
  "the to a of and is in it that this for we i you on be with not as if it's can the file " +
  "so but an at or from by test error function should are let me now will have was when " +
  "this use all run then code one which there need here what do new line check value " +
  "change add instead type return make fix first up out just also see because data call " +
  "build path config update into only like case where way still same two set want works " +
  "output input before after missing failing passes tests module import export const class " +
  "method string number object array null undefined true false async await promise server " +
  "client request response handler route query index table column schema migration commit " +
  "branch merge rebase diff patch review deploy release version package dependency install " +
  "script command shell process thread lock timeout retry cache buffer stream parse format " +
  "log debug warning trace stack frame memory size limit batch queue worker job task event " +
  "state store read write open close delete create rename move copy list find search match " +
  "pattern regex token key secret user session auth login permission role account api " +
  "endpoint json yaml toml csv sql node deno npm cargo python rust go typescript javascript " +
  "docker compose image container volume network port host url header body status flag " +
  "option argument default env variable field property interface struct enum trait impl " +
  "generic loop iterator callback closure scope variable reference pointer slice map " +
  "vector hash sort filter reduce sum count min max length offset cursor page chunk block " +
  "record row id uuid time date timestamp duration second millisecond minute hour day " +
  "looks seems think probably actually right good better wrong broken slow fast small large " +
  "simple clean done ready sure yes no ok thanks please could would might must each every"
).split(" ");

const ONSETS = [
  "b",
  "br",
  "c",
  "ch",
  "cl",
  "d",
  "dr",
  "f",
  "fl",
  "g",
  "gr",
  "h",
  "j",
  "k",
  "l",
  "m",
  "n",
  "p",
  "pl",
  "pr",
  "qu",
  "r",
  "s",
  "sh",
  "sk",
  "sl",
  "sn",
  "sp",
  "st",
  "t",
  "th",
  "tr",
  "v",
  "w",
  "z",
];
const NUCLEI = ["a", "e", "i", "o", "u", "ai", "ea", "ee", "io", "oo", "ou", "y"];
const CODAS = ["", "", "", "n", "r", "l", "s", "t", "x", "nd", "ng", "rk", "st", "m", "ck"];
const SUFFIXES = ["", "", "", "er", "ing", "ed", "s", "ion", "able", "ize", "ly", "ment"];

/** Ranks beyond the head are weighted 1 / (rank + Q)^S (Zipf–Mandelbrot). */
const ZIPF_S = 1.05;
const ZIPF_Q = 2.7;
const VOCABULARY_SIZE = 40_000;

/** The words of the corpus and their Zipf-like distribution. */
export class Vocabulary {
  readonly words: string[];
  readonly #cdf: Float64Array;

  /** Builds the vocabulary; words containing any of `avoid` are left out. */
  constructor(seed: number, avoid: readonly string[]) {
    const random = mulberry32(seed ^ 0x5eed);
    const seen = new Set<string>();
    const words: string[] = [];
    const clean = (word: string) =>
      !seen.has(word) && !avoid.some((term) => word.includes(term) || term === word);
    for (const word of HEAD) {
      if (clean(word)) {
        seen.add(word);
        words.push(word);
      }
    }
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    while (words.length < VOCABULARY_SIZE) {
      const syllables = 1 + Math.floor(random() * 3);
      let word = "";
      for (let i = 0; i < syllables; i++) word += pick(ONSETS) + pick(NUCLEI);
      word += pick(CODAS) + pick(SUFFIXES);
      if (word.length < 3 || !clean(word)) continue;
      seen.add(word);
      words.push(word);
    }
    this.words = words;
    this.#cdf = new Float64Array(words.length);
    let total = 0;
    for (let i = 0; i < words.length; i++) {
      total += 1 / Math.pow(i + 1 + ZIPF_Q, ZIPF_S);
      this.#cdf[i] = total;
    }
    for (let i = 0; i < words.length; i++) this.#cdf[i]! /= total;
  }

  /** A word drawn from the distribution. */
  sample(random: Random): string {
    const u = random();
    const cdf = this.#cdf;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo]!;
  }
}

/**
 * The classes of planted query terms. A `cjk` word sits inside a run of CJK letters (as in a
 * Chinese sentence, which has no spaces); a `hidden` word is written with a character a reader
 * cannot see inside it (`glimmer\u200bstone`) and searched as it is seen; a `symbol` has no word
 * the index holds, so search answers it with the literal scan.
 */
export type TermClass = "rare" | "medium" | "common" | "phrase" | "cjk" | "hidden" | "symbol";
export const TERM_CLASSES: readonly TermClass[] = [
  "rare",
  "medium",
  "common",
  "phrase",
  "cjk",
  "hidden",
  "symbol",
];
/** Classes the index answers (the others are literal scans, timed apart). */
export const INDEXED_CLASSES: readonly TermClass[] = TERM_CLASSES.filter((c) => c !== "symbol");

/** A planted query term and how often it was planted (one text segment, about one record). */
export interface PlantedTerm {
  term: string;
  class: TermClass;
  /** Probability per text segment (medium, common, phrase); rare terms are placed exactly. */
  rate: number | null;
  /** Text segments that hold the term (each is one record's text, or part of one). */
  count: number;
  byAgent: Record<string, number>;
}

const RARE = [
  "zanzibarite",
  "quillframe",
  "morrowgate",
  "vexillumark",
  "oxbowlight",
  "tamarisket",
  "fjordlingo",
  "brisketcove",
];
/** How many times each rare term is planted, whatever the corpus size. */
export const RARE_COUNT = 3;
const MEDIUM = ["lanternfish", "cobaltvane", "thimbleroot", "pewterhawk", "saffronkey"];
const MEDIUM_RATE = 0.0025;
const COMMON = ["frobnicate", "widgetry", "gadgetize"];
const COMMON_RATE = 0.04;
const PHRASE_RATE = 0.002;
/** CJK words, planted inside a CJK run (`把缓存策略改成`): never drawn by chance from the pools. */
const CJK_TERMS = ["缓存策略", "按需加载"];
const CJK_RATE = 0.005;
/** Words written with a zero-width space inside (what search reads through), never drawn by chance. */
const HIDDEN_TERMS = ["glimmerstone", "wickerlamp"];
const HIDDEN_RATE = 0.005;
/** Symbols people search for (the text generator writes neither). */
const SYMBOL_TERMS = ["💡", "✅"];
const SYMBOL_RATE = 0.005;
/** Vocabulary ranks the words of each phrase come from (common enough alone, rare together). */
const PHRASE_RANKS: readonly [number, number][] = [[420, 1310], [640, 2250], [900, 3100]];

/** Every term that must never appear in the vocabulary by chance. */
export const RESERVED_TERMS: readonly string[] = [...RARE, ...MEDIUM, ...COMMON, ...HIDDEN_TERMS];

/**
 * Decides which planted terms go into the next text segment: rare terms at fixed fractions of
 * the corpus (so each lands exactly `RARE_COUNT` times, spread over the agents), the others by
 * rate. `position` is the number of corpus bytes written so far.
 */
export class Planter {
  position = 0;
  readonly terms: PlantedTerm[];
  readonly #schedule: { at: number; term: PlantedTerm }[];
  readonly #random: Random;
  readonly #rated: PlantedTerm[];

  constructor(totalBytes: number, vocabulary: Vocabulary, random: Random) {
    this.#random = random;
    const make = (term: string, cls: TermClass, rate: number | null): PlantedTerm => ({
      term,
      class: cls,
      rate,
      count: 0,
      byAgent: {},
    });
    const rare = RARE.map((t) => make(t, "rare", null));
    const phrases = PHRASE_RANKS.map(([a, b]) =>
      make(`${vocabulary.words[a]} ${vocabulary.words[b]}`, "phrase", PHRASE_RATE)
    );
    this.#rated = [
      ...MEDIUM.map((t) => make(t, "medium", MEDIUM_RATE)),
      ...COMMON.map((t) => make(t, "common", COMMON_RATE)),
      ...phrases,
      ...CJK_TERMS.map((t) => make(t, "cjk", CJK_RATE)),
      ...HIDDEN_TERMS.map((t) => make(t, "hidden", HIDDEN_RATE)),
      ...SYMBOL_TERMS.map((t) => make(t, "symbol", SYMBOL_RATE)),
    ];
    this.terms = [...rare, ...this.#rated];
    // Occurrence j of rare term i at fraction (j·K + i + ½) / (3K): every third of the corpus
    // holds one occurrence of each rare term.
    const k = rare.length;
    this.#schedule = [];
    for (let j = 0; j < RARE_COUNT; j++) {
      for (let i = 0; i < k; i++) {
        const at = ((j * k + i + 0.5) / (RARE_COUNT * k)) * totalBytes;
        this.#schedule.push({ at, term: rare[i]! });
      }
    }
    this.#schedule.sort((a, b) => a.at - b.at);
  }

  /**
   * The terms to put into the next segment written for `agent` (a CJK word in its run, a hidden
   * word with its zero-width space).
   */
  take(agent: string): string[] {
    const out: string[] = [];
    while (this.#schedule.length && this.#schedule[0]!.at <= this.position && out.length < 2) {
      out.push(this.#count(this.#schedule.shift()!.term, agent));
    }
    for (const term of this.#rated) {
      if (this.#random() < term.rate!) {
        const text = this.#count(term, agent);
        out.push(
          term.class === "cjk" ? `把${text}改成` : term.class === "hidden" ? hidden(text) : text,
        );
      }
    }
    return out;
  }

  /** Rare terms not yet placed (the corpus came out shorter than planned), counted as placed. */
  flush(agent: string): string[] {
    const rest = this.#schedule.splice(0).map((s) => this.#count(s.term, agent));
    return rest;
  }

  #count(term: PlantedTerm, agent: string): string {
    term.count++;
    term.byAgent[agent] = (term.byAgent[agent] ?? 0) + 1;
    return term.term;
  }
}

/** `word` with a zero-width space in its middle: one word to a reader, two to a plain index. */
function hidden(word: string): string {
  const at = Math.floor(word.length / 2);
  return `${word.slice(0, at)}\u200b${word.slice(at)}`;
}

// CJK text: some people write to their agent in Chinese, Japanese or Korean, with code and
// identifiers in English. Words are drawn from character pools (common Han characters, kana,
// and Hangul syllables built from their jamo), so the index sees real scripts and run lengths.
const HAN =
  "的一是不了在人有我他这中大来上个们到说时要就出会也你对生能而子那得于着下自之年过发后作里用道行所然家种事成方多经么去法学如都同现当没动面起看定天分还进好小部其些主样理心她本前开但因只从想实日军者意无力它与长把机十民第公此已工使情明性知全三又关点正业外将两高间由问很最重并物手应战向头文体政美相见被利什二等产或新己制身果加西斯月话合回特代内信表化老给世位次度门任常先海通教儿原东声提立及比员解水名真论处走义各入几口认条平系气题活尔更别打女变四神总何电数安少报才结反受目太量再感建务做接必场件计管期市直德资命山金指克许统区保至队形社便空决治展马科司五基眼书非则听白却界达光放强即像难且权思王象完设式色路记南品住告类求据程北边死张该交规万取拉格望觉术领共确传师观清今切院让识候带导争运笑飞风步改收根干造言联持组每济车亲极林服快办议往元英士证近失转夫令准布始怎呢存未远叫台单影具罗字爱击流备兵连调深商算质团集百需价花党华城石级整府离况亚请技际约示复病息究线似官火断精满支视消越器容照须九增研写称企八功吗包片史委乎查轻易早曾除农找装广显吧阿李标谈吃图念六引历首医局突专费号尽另周较注语仅考落青随选列武红响虽推势参希古众构房半节土投某案黑维革划敌致陈律足态护七兴派孩验责营星够章音跟志底站严巴例防族供效续施留讲型料终答紧黄绝奇察母京段依批群项故按河米围江织害斗双境客纪采举杀攻父苏密低朝友诉止细愿千值仍男钱破网热助倒育属坐帝限船脸职速刻乐否刚威毛状率甚独球般普怕弹校苦创假久错承印晚兰试股拿脑预谁益阳若哪微尼继送急血惊伤素药适波夜省初喜卫源食险待述陆习置居劳财环排福纳欢雷警获模充负云停木游龙树疑层冷洲冲射略范竟句室异激汉村哈策演简卡罪判担州静退既衣您宗积余痛检差富灵协角占配征修皮挥胜降阶审沉坚善妈刘读啊超免压银买皇养伊怀执副乱抗犯追帮宣佛岁航优怪香著田铁控税左右份穿艺背阵草脚概恶块顿敢守酒岛托央户烈洋哥索胡款靠评版宝座释景顾弟登货互付伯慢欧换闻危忙核暗姐介坏讨丽良序升监临亮露永呼味野架域沙掉括舰鱼杂误湾吉减编楚肯测败屋跑梦散温困剑渐封救贵枪缺楼县尚毫移娘朋画班智亦耳恩短掌恐遗固席松秘谢鲁遇康虑幸均销钟诗藏赶剧票损忽巨炮旧端探湖录叶春乡附吸予礼港雨呀板庭妇归睛饭额含顺输摇招婚脱补谓督毒油疗旅泽材灭逐莫笔亡鲜词圣择寻厂睡博勒烟授诺伦岸奥唐卖俄炸载洛健堂旁宫喝借君禁阴园谋宋避抓荣姑孙逃牙束跳顶玉镇雪午练迫爷篇肉嘴馆遍凡础洞卷坦牛宁纸诸训私庄祖丝翻暴森塔默握戏隐熟骨访弱蒙歌店鬼软典欲萨伙遭盘爸扩盖弄雄稳忘亿刺拥徒姆杨齐赛趣曲刀床迎冰虚玩析窗醒妻透购替塞努休虎扬途侵刑绿兄迅套贸毕唯谷轮库迹尤竞街促延震弃甲伟麻川申缓潜闪售灯针哲络抵朱埃抱鼓植纯夏忍页杰筑折郑贝尊吴秀混臣雅振染盛怒舞圆搞狂措姓残秋培迷诚宽宇猛摆梅毁伸摩盟末乃悲拍丁赵";
const KANA =
  "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんがぎぐげござじずぜぞだでどばびぶべぼぱぴぷぺぽアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワンガギグゲゴザジズゼゾダデドバビブベボパピプペポー";
const PARTICLES = ["は", "が", "を", "に", "で", "と", "の", "も", "から", "まで", "より"];
const CJK_LANGUAGES = ["zh", "zh", "ja", "ko"] as const;
type CjkLanguage = typeof CJK_LANGUAGES[number];
/** Share of messages written in a CJK language, and of their sentences that are CJK. */
const CJK_MESSAGE_RATE = 0.3;
const CJK_SENTENCE_RATE = 0.8;

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const HEX = "0123456789abcdef";
const EXTENSIONS = ["ts", "ts", "ts", "tsx", "js", "py", "go", "rs", "md", "json", "sql", "css"];
const TYPES = ["string", "number", "boolean", "Promise<void>", "Record<string, unknown>", "Buffer"];
const LEVELS = ["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"];

/**
 * Generates the corpus's text. `agent` says whose segment is being written, for the planter;
 * `planting` is switched off for text that the corpus repeats in another indexed place.
 */
export class TextGen {
  readonly random: Random;
  readonly vocabulary: Vocabulary;
  readonly planter: Planter;
  agent = "claude";
  planting = true;
  readonly #base64: string;

  constructor(random: Random, vocabulary: Vocabulary, planter: Planter) {
    this.random = random;
    this.vocabulary = vocabulary;
    this.planter = planter;
    // One block of noise, sliced at random offsets: images, signatures and encrypted reasoning.
    const chars: string[] = [];
    for (let i = 0; i < 1 << 20; i++) chars.push(BASE64[Math.floor(random() * 64)]!);
    const block = chars.join("");
    this.#base64 = block + block.slice(0, 1 << 19);
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.random() < p;
  }

  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)]!;
  }

  /** A log-normal draw around `median`, clamped to [min, max]. */
  lognormal(median: number, sigma: number, min: number, max: number): number {
    const u = Math.max(1e-12, this.random());
    const v = this.random();
    const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    return Math.min(max, Math.max(min, Math.round(median * Math.exp(sigma * normal))));
  }

  word(): string {
    return this.vocabulary.sample(this.random);
  }

  /** A word from the middle of the distribution (names of files, functions, projects). */
  name(): string {
    return this.vocabulary.words[this.int(150, 6000)]!;
  }

  hex(length: number): string {
    let out = "";
    for (let i = 0; i < length; i++) out += HEX[Math.floor(this.random() * 16)];
    return out;
  }

  uuid(): string {
    const variant = "89ab"[Math.floor(this.random() * 4)];
    return `${this.hex(8)}-${this.hex(4)}-4${this.hex(3)}-${variant}${this.hex(3)}-${this.hex(12)}`;
  }

  /** A version 7 UUID for `ms` (Codex's thread ids). */
  uuid7(ms: number): string {
    const t = Math.floor(ms).toString(16).padStart(12, "0");
    const variant = "89ab"[Math.floor(this.random() * 4)];
    return `${t.slice(0, 8)}-${t.slice(8)}-7${this.hex(3)}-${variant}${this.hex(3)}-${
      this.hex(12)
    }`;
  }

  /** `length` characters of base64 noise. */
  base64(length: number): string {
    const max = this.#base64.length;
    if (length >= max) return this.#base64.repeat(Math.ceil(length / max)).slice(0, length);
    const start = Math.floor(this.random() * (max - length));
    return this.#base64.slice(start, start + length);
  }

  ident(): string {
    const a = this.name();
    const b = this.name();
    return a + b[0]!.toUpperCase() + b.slice(1);
  }

  path(root: string): string {
    const depth = this.int(1, 3);
    const parts = [root, this.pick(["src", "src", "lib", "tests", "internal", "app"])];
    for (let i = 1; i < depth; i++) parts.push(this.name());
    parts.push(`${this.name()}.${this.pick(EXTENSIONS)}`);
    return parts.join("/");
  }

  /** A CJK word of `language`, Zipf-like: a few words are common, most are rare. */
  cjkWord(language: CjkLanguage): string {
    const rank = Math.floor(Math.pow(this.random(), 2.5) * 3000);
    const local = mulberry32(rank * 4 + CJK_LANGUAGES.indexOf(language));
    const pick = (pool: string) => pool[Math.floor(local() * pool.length)]!;
    const length = 1 + Math.floor(local() * 3);
    let word = "";
    for (let i = 0; i < length + 1; i++) {
      if (language === "zh") word += pick(HAN);
      else if (language === "ja") word += local() < 0.5 ? pick(HAN) : pick(KANA);
      else word += String.fromCharCode(0xac00 + Math.floor(local() * 11172));
    }
    return word;
  }

  /** A sentence in `language`: CJK words run together (Korean spaced), English terms among them. */
  cjkSentence(language: CjkLanguage): string {
    const words: string[] = [];
    const count = this.int(3, 12);
    for (let i = 0; i < count; i++) {
      if (this.chance(0.12)) words.push(` ${this.word()} `);
      else words.push(this.cjkWord(language));
      if (language === "ja" && this.chance(0.5)) words.push(this.pick(PARTICLES));
    }
    const joined = language === "ko" ? words.join(" ") : words.join("");
    return joined.replace(/\s+/g, " ").trim() + (language === "ko" ? "." : "。");
  }

  /** Plain words, with any planted terms for this segment among them. */
  #words(count: number, out: string[]): void {
    for (let i = 0; i < count; i++) out.push(this.word());
  }

  #plant(tokens: string[]): void {
    if (!this.planting) return;
    for (const term of this.planter.take(this.agent)) {
      tokens.splice(this.int(0, tokens.length), 0, term);
    }
  }

  /** A sentence of `min`–`max` words. */
  sentence(min = 4, max = 22): string {
    const words: string[] = [];
    this.#words(this.int(min, max), words);
    const first = words[0]!;
    words[0] = first[0]!.toUpperCase() + first.slice(1);
    return words.join(" ") + this.pick([".", ".", ".", ".", "?", ":"]);
  }

  /**
   * Conversational prose of about `words` words: sentences, paragraphs, inline code, paths,
   * lists, and (when planting) this segment's planted terms.
   */
  prose(words: number, root = "src"): string {
    const tokens: string[] = [];
    let sinceBreak = 0;
    const language = this.chance(CJK_MESSAGE_RATE) ? this.pick(CJK_LANGUAGES) : null;
    // CJK sentences are one token each (no spaces): they count as the words they hold.
    let extra = 0;
    while (tokens.length + extra < words) {
      if (language && this.chance(CJK_SENTENCE_RATE)) {
        tokens.push(this.cjkSentence(language));
        extra += 7;
        continue;
      }
      const n = this.int(4, 20);
      const sentence: string[] = [];
      this.#words(n, sentence);
      const first = sentence[0]!;
      sentence[0] = first[0]!.toUpperCase() + first.slice(1);
      const r = this.random();
      if (r < 0.12) sentence.splice(this.int(1, n), 0, `\`${this.ident()}()\``);
      else if (r < 0.2) sentence.splice(this.int(1, n), 0, this.path(root));
      else if (r < 0.25) sentence.splice(this.int(1, n), 0, String(this.int(2, 5000)));
      sentence[sentence.length - 1] += this.pick([".", ".", ".", ".", "?", ":", ","]);
      if (++sinceBreak > this.int(2, 6)) {
        sentence[sentence.length - 1] += this.chance(0.3) ? "\n\n- " : "\n\n";
        sinceBreak = 0;
      }
      for (const w of sentence) tokens.push(w);
    }
    this.#plant(tokens);
    return tokens.join(" ").trim();
  }

  /** Prose that sometimes carries a fenced code block (planted terms go in once). */
  reply(words: number, root: string, codeChance: number): string {
    const text = this.prose(words, root);
    if (!this.chance(codeChance)) return text;
    const lang = this.pick(["ts", "ts", "python", "go", "rust", "bash", "sql"]);
    const planting = this.planting;
    this.planting = false;
    const after = this.prose(this.int(8, 40), root);
    this.planting = planting;
    return `${text}\n\n\`\`\`${lang}\n${this.code(this.int(3, 40))}\n\`\`\`\n\n${after}`;
  }

  /** One line of plausible source code at `depth`. */
  codeLine(depth: number): string {
    const pad = "  ".repeat(depth);
    switch (this.int(0, 11)) {
      case 0:
        return `${pad}const ${this.ident()} = ${this.ident()}(${this.name()}, ${
          this.int(0, 999)
        });`;
      case 1:
        return `${pad}if (${this.name()}.${this.ident()} === "${this.name()}") {`;
      case 2:
        return `${pad}return ${this.name()}.${this.ident()}(${this.name()});`;
      case 3:
        return `${pad}import { ${this.ident()}, ${this.ident()} } from "./${this.name()}.ts";`;
      case 4:
        return `${pad}export function ${this.ident()}(${this.name()}: ${this.pick(TYPES)}): ${
          this.pick(TYPES)
        } {`;
      case 5:
        return `${pad}// ${this.sentence(4, 14)}`;
      case 6:
        return `${pad}for (const ${this.name()} of ${this.ident()}) {`;
      case 7:
        return `${pad}await ${this.name()}.${this.ident()}("${this.name()}", ${this.int(1, 64)});`;
      case 8:
        return `${pad}throw new Error(\`${this.sentence(3, 9)}\`);`;
      case 9:
        return `${pad}}`;
      case 10:
        return "";
      default:
        return `${pad}${this.name()}.${this.ident()} = ${this.name()} ?? ${this.int(0, 99)};`;
    }
  }

  /** `lines` lines of code. */
  code(lines: number): string {
    const out: string[] = [];
    let depth = 0;
    for (let i = 0; i < lines; i++) {
      const line = this.codeLine(depth);
      out.push(line);
      if (line.endsWith("{")) depth = Math.min(depth + 1, 5);
      else if (line.trim() === "}") depth = Math.max(depth - 1, 0);
    }
    return out.join("\n");
  }

  /**
   * A file's lines as `Read`-style tools return them: the plain text, and the same text with
   * line numbers in `style` (`arrow` for Claude Code, `pipe` for OpenCode). Planted terms go
   * into one line when planting.
   */
  fileLines(lines: number, style: "arrow" | "pipe"): { plain: string; numbered: string } {
    const plain: string[] = [];
    let depth = 0;
    for (let i = 0; i < lines; i++) {
      const line = this.codeLine(depth);
      plain.push(line);
      if (line.endsWith("{")) depth = Math.min(depth + 1, 5);
      else if (line.trim() === "}") depth = Math.max(depth - 1, 0);
    }
    this.#plantLine(plain);
    const numbered = plain.map((line, i) =>
      style === "arrow"
        ? `${String(i + 1).padStart(6, " ")}→${line}`
        : `${String(i + 1).padStart(5, "0")}| ${line}`
    );
    return { plain: plain.join("\n") + "\n", numbered: numbered.join("\n") + "\n" };
  }

  /**
   * What a shell command printed (test runs, grep hits, logs, stack traces, listings), cut at
   * `maxChars` as the agents cut long output.
   */
  commandOutput(lines: number, root: string, maxChars = 30_000): string {
    const out: string[] = [];
    const kind = this.int(0, 4);
    let chars = 0;
    for (let i = 0; i < lines && chars < maxChars; i++) {
      switch (kind) {
        case 0:
          out.push(
            this.chance(0.9)
              ? `ok ${i + 1} - ${this.sentence(3, 10)} (${this.int(1, 900)}ms)`
              : `not ok ${i + 1} - ${this.sentence(3, 10)}\n  at ${this.ident()} (${
                this.path(root)
              }:${this.int(1, 400)}:${this.int(1, 80)})`,
          );
          break;
        case 1:
          out.push(`${this.path(root)}:${this.int(1, 900)}:${this.codeLine(0)}`);
          break;
        case 2:
          out.push(
            `2026-0${this.int(1, 9)}-1${this.int(0, 9)}T0${this.int(0, 9)}:${this.int(10, 59)}:${
              this.int(10, 59)
            }Z ${this.pick(LEVELS)} ${this.name()}: ${this.sentence(3, 16)}`,
          );
          break;
        case 3:
          out.push(
            `${this.pick(["-rw-r--r--", "drwxr-xr-x"])} 1 dev dev ${
              String(this.int(0, 99999)).padStart(6)
            } ${this.path(root)}`,
          );
          break;
        default:
          out.push(this.codeLine(this.int(0, 3)));
      }
      chars += out[out.length - 1]!.length + 1;
    }
    this.#plantLine(out);
    return out.join("\n") + "\n";
  }

  /** A unified diff hunk of about `lines` lines. */
  patch(path: string, lines: number): string {
    const out = [`*** Begin Patch`, `*** Update File: ${path}`, `@@ ${this.codeLine(0)}`];
    for (let i = 0; i < lines; i++) {
      const sign = this.pick([" ", " ", "-", "+", "+"]);
      out.push(sign + this.codeLine(this.int(0, 3)));
    }
    this.#plantLine(out);
    out.push("*** End Patch");
    return out.join("\n") + "\n";
  }

  #plantLine(lines: string[]): void {
    if (!this.planting || !lines.length) return;
    for (const term of this.planter.take(this.agent)) {
      const i = this.int(0, lines.length - 1);
      lines[i] = `${lines[i]} ${term}`;
    }
  }
}
