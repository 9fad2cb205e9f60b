/**
 * Redaction of secret values: every value a run hands to a process (or reads for a judge) is
 * replaced by `***` wherever evalgate writes or prints text. One Redactor per run; it is applied at
 * the two places text leaves evalgate's hands: the log capture (streaming, so a secret split across
 * two chunks of output is still caught) and the bundle writer (every file of an attempt's folder and
 * every JSON record). See docs/decisions/0043-redaction.md for what is and is not covered.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

export const MASK = "***";
/** Shorter values are not redacted: masking "1" or "yes" would destroy every log and hide nothing. */
export const MIN_SECRET_LENGTH = 4;
/** Encoded forms (base64) shorter than this are not searched for: they would match by chance. */
const MIN_ENCODED_LENGTH = 8;
/** A stream holds back at most this much text while a secret may still be completing. */
const MAX_PENDING = 1024 * 1024;

/**
 * The forms in which a secret value shows up in text: as is, escaped in a JSON string, URL-encoded,
 * base64-encoded at any of the three byte alignments (the part of the encoding that does not depend
 * on the neighbouring bytes), and, for a multi-line value such as a PEM key, each of its lines.
 */
export function secretForms(value: string): string[] {
  const forms = new Set<string>([value]);
  forms.add(JSON.stringify(value).slice(1, -1));
  forms.add(encodeURIComponent(value));
  if (/[\r\n]/.test(value)) {
    for (const line of value.split(/\r?\n|\r/)) {
      const t = line.trim();
      if (t.length >= MIN_SECRET_LENGTH) forms.add(t);
    }
  }
  const bytes = Buffer.from(value, "utf8");
  for (let start = 0; start < 3; start++) {
    const groups = Math.floor((bytes.length - start) / 3);
    if (groups * 4 < MIN_ENCODED_LENGTH) continue;
    const core = bytes.subarray(start, start + groups * 3).toString("base64");
    forms.add(core);
    forms.add(core.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/**
 * evalgate marks every cut it makes in a text (transcript fields, scorer reasons, test messages,
 * judge verdicts) with "…". A cut made before redaction can end inside a secret, leaving its start
 * followed by the mark; such a start is masked too (see CutStarts).
 */
export const CUT_MARK = "…";

/**
 * Finds the starts of secrets (at least MIN_SECRET_LENGTH long) that a cut mark follows. Such a
 * start ends with the MIN_SECRET_LENGTH characters before the mark, so a mark whose characters
 * occur in no form is passed at once, and otherwise only their places in each form are tried.
 */
class CutStarts {
  private readonly pieces = new Set<string>();

  constructor(
    private readonly forms: readonly string[],
    /** CUT_MARK as the forms are written (text, or UTF-8 bytes as latin1). */
    private readonly mark: string,
  ) {
    for (const f of forms) {
      for (let i = 0; i + MIN_SECRET_LENGTH <= f.length; i++)
        this.pieces.add(f.slice(i, i + MIN_SECRET_LENGTH));
    }
  }

  in(hay: string): [number, number][] {
    const found: [number, number][] = [];
    for (let at = hay.indexOf(this.mark); at !== -1; at = hay.indexOf(this.mark, at + 1)) {
      if (at < MIN_SECRET_LENGTH) continue;
      const tail = hay.slice(at - MIN_SECRET_LENGTH, at);
      if (!this.pieces.has(tail)) continue;
      let longest = 0;
      for (const form of this.forms) {
        // The longest start of this form first: the last place of `tail` in it.
        for (let j = form.lastIndexOf(tail); j !== -1; j = j > 0 ? form.lastIndexOf(tail, j - 1) : -1) {
          const k = j + MIN_SECRET_LENGTH;
          if (k <= longest) break;
          if (k <= at && hay.startsWith(form.slice(0, k), at - k)) {
            longest = k;
            break;
          }
        }
      }
      if (longest > 0) found.push([at - longest, at]);
    }
    return found;
  }
}

/**
 * Sorted, merged [start, end) ranges of every occurrence of every needle (overlaps included) and,
 * when `cuts` is given, of every secret start a cut mark follows.
 */
function rangesIn(hay: string, needles: readonly string[], cuts?: CutStarts): [number, number][] {
  const found: [number, number][] = cuts ? cuts.in(hay) : [];
  for (const n of needles) {
    for (let i = hay.indexOf(n); i !== -1; i = hay.indexOf(n, i + 1)) found.push([i, i + n.length]);
  }
  if (found.length <= 1) return found;
  found.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [found[0]!];
  for (const r of found.slice(1)) {
    const last = merged.at(-1)!;
    if (r[0] < last[1]) last[1] = Math.max(last[1], r[1]);
    else merged.push(r);
  }
  return merged;
}

function mask(hay: string, ranges: readonly [number, number][], from = 0, to = hay.length): string {
  let out = "";
  let at = from;
  for (const [s, e] of ranges) {
    if (s < from || e > to) continue;
    out += hay.slice(at, s) + MASK;
    at = e;
  }
  return out + hay.slice(at, to);
}

export class Redactor {
  /** The forms as JS strings, for text. */
  private readonly textNeedles: string[];
  /** The forms as latin1 strings of their UTF-8 bytes, so bytes can be searched as text 1:1. */
  private readonly byteNeedles: string[];
  private readonly textCuts: CutStarts;
  private readonly byteCuts: CutStarts;
  readonly maxBytes: number;

  constructor(values: Iterable<string>) {
    const forms = new Set<string>();
    for (const v of values) if (v.length >= MIN_SECRET_LENGTH) for (const f of secretForms(v)) forms.add(f);
    this.textNeedles = [...forms];
    this.byteNeedles = this.textNeedles.map((f) => Buffer.from(f, "utf8").toString("latin1"));
    this.textCuts = new CutStarts(this.textNeedles, CUT_MARK);
    this.byteCuts = new CutStarts(this.byteNeedles, Buffer.from(CUT_MARK, "utf8").toString("latin1"));
    this.maxBytes = Math.max(0, ...this.byteNeedles.map((n) => n.length));
  }

  /** Whether there is anything to redact at all. */
  get active(): boolean {
    return this.textNeedles.length > 0;
  }

  text(s: string): string {
    if (!this.active || s.length === 0) return s;
    const ranges = rangesIn(s, this.textNeedles, this.textCuts);
    return ranges.length === 0 ? s : mask(s, ranges);
  }

  bytes(b: Buffer): Buffer {
    if (!this.active || b.length === 0) return b;
    const hay = b.toString("latin1");
    const ranges = rangesIn(hay, this.byteNeedles, this.byteCuts);
    if (ranges.length === 0) return b;
    // MASK is ASCII, so it is the same in latin1 and UTF-8.
    return Buffer.from(mask(hay, ranges), "latin1");
  }

  /**
   * A copy of a record evalgate built with every string value redacted, except those `keep` says
   * are evalgate's own structure (an enum, an identity, a path of the bundle: see
   * bundle/write.ts). `keep` is given the keys from the record's root to the value (array
   * positions left out). Keys are never redacted: they are evalgate's own vocabulary, and masking
   * one ("passed" → "***ed") breaks every reader (docs/decisions/0131). Numbers stay numbers.
   */
  deep<T>(value: T, keep: (keys: readonly string[]) => boolean = () => false): T {
    if (!this.active) return value;
    const walk = (v: unknown, keys: string[]): unknown => {
      if (typeof v === "string") return keep(keys) ? v : this.text(v);
      if (Array.isArray(v)) return v.map((x) => walk(x, keys));
      const proto = v && typeof v === "object" ? Object.getPrototypeOf(v) : undefined;
      if (proto === Object.prototype || proto === null) {
        return Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, walk(x, [...keys, k])]));
      }
      return v;
    };
    return walk(value, []) as T;
  }

  /** A redactor for one stream of output, given in chunks that may split a secret anywhere. */
  stream(): StreamRedactor {
    return new StreamRedactor(this.byteNeedles, this.maxBytes);
  }

  /** Rewrites every file under `dir` (recursively) that holds a secret, in place. */
  async files(dir: string): Promise<string[]> {
    if (!this.active) return [];
    const changed: string[] = [];
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return changed;
    }
    for (const e of entries) {
      const abs = path.join(dir, e.name);
      if (e.isDirectory()) changed.push(...(await this.files(abs)));
      else if (e.isFile()) {
        const before = await readFile(abs);
        const after = this.bytes(before);
        if (after !== before) {
          await writeFile(abs, after);
          changed.push(abs);
        }
      }
    }
    return changed;
  }
}

/**
 * Streaming redaction: holds back the last (longest form - 1) bytes of what it was given, since
 * they may be the start of a secret whose rest is in the next chunk, and never lets out part of a
 * secret.
 */
export class StreamRedactor {
  private pending = "";

  constructor(
    private readonly needles: readonly string[],
    private readonly maxBytes: number,
  ) {}

  push(chunk: Buffer): Buffer {
    if (this.needles.length === 0) return chunk;
    const hay = this.pending + chunk.toString("latin1");
    const ranges = rangesIn(hay, this.needles);
    let cut = Math.max(0, hay.length - (this.maxBytes - 1));
    // A secret (or a run of overlapping ones) reaching past the cut may go on in the next chunk.
    const straddling = ranges.find(([s, e]) => s < cut && e > cut);
    if (straddling) cut = straddling[0];
    if (hay.length - cut > MAX_PENDING) cut = hay.length;
    this.pending = hay.slice(cut);
    return Buffer.from(mask(hay, ranges, 0, cut), "latin1");
  }

  /** What is still held back, redacted: call once when the stream ends. */
  end(): Buffer {
    const hay = this.pending;
    this.pending = "";
    return Buffer.from(mask(hay, rangesIn(hay, this.needles)), "latin1");
  }
}

/** A redactor that redacts nothing (runs without secrets, tests). */
export const NO_REDACTION = new Redactor([]);
