import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { structural } from "../../src/bundle/write.js";
import { CappedLog } from "../../src/sandbox/log.js";
import { MASK, Redactor, secretForms } from "../../src/sandbox/redact.js";
import { tempDir, writeFiles } from "../helpers.js";

const SECRET = "sk-live_Abc123/+xyz";

describe("Redactor", () => {
  const r = new Redactor([SECRET, "ab"]);

  it("masks the value as is, JSON-escaped and URL-encoded", () => {
    const quoted = new Redactor(['pa"ss\\word']);
    expect(quoted.text('{"k":"pa\\"ss\\\\word"}')).toBe('{"k":"***"}');
    expect(r.text(`token=${encodeURIComponent(SECRET)}&x=1`)).toBe("token=***&x=1");
    expect(r.text(`a ${SECRET} b ${SECRET}`)).toBe("a *** b ***");
  });

  it("masks base64 of the value at every byte alignment, standard and URL-safe", () => {
    for (const prefix of ["", "x", "xy", "xyz"]) {
      const b64 = Buffer.from(prefix + SECRET + "tail").toString("base64");
      const masked = r.text(`echo ${b64}`);
      expect(masked).toContain(MASK);
      // What is left is at most the characters that mix secret bytes with their neighbours.
      const kept = masked.replace("echo ", "").replace(MASK, "");
      expect(kept.length).toBeLessThanOrEqual(b64.length - 12);
      const url = b64.replaceAll("+", "-").replaceAll("/", "_");
      expect(r.text(url)).toContain(MASK);
    }
  });

  it("masks each line of a multi-line value (a PEM key cut by a truncation keeps no line)", () => {
    const pem = "-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\n0Wx2sVfQ1zZkcb3k\n-----END KEY-----";
    const m = new Redactor([pem]);
    expect(m.text(`key:\n${pem}\n`)).toBe("key:\n***\n");
    expect(m.text("...\nMIIBOgIBAAJBAKj34GkxFhD9\n0Wx2")).toBe("...\n***\n0Wx2");
    expect(m.text(pem.replaceAll("\n", "\r\n"))).not.toMatch(/MIIB|0Wx2sV/);
  });

  it("leaves values shorter than 4 characters alone", () => {
    expect(r.text("about a cab")).toBe("about a cab");
    expect(new Redactor(["abc"]).active).toBe(false);
  });

  it("masks overlapping secrets as one span, leaving no part of either", () => {
    const o = new Redactor(["abcd1234", "1234wxyz5678"]);
    expect(o.text("[abcd1234wxyz5678]")).toBe("[***]");
  });

  it("masks the start of a secret that a cut (…) ended, at any length from 4 characters", () => {
    // What clip() in a transcript or a reason leaves when its limit falls inside a secret.
    for (let k = 4; k < SECRET.length; k++) {
      const cut = `${"x".repeat(20)}${SECRET.slice(0, k)}… [${SECRET.length - k} more characters]`;
      expect(r.text(cut), `${k} characters kept`).toBe(
        `${"x".repeat(20)}***… [${SECRET.length - k} more characters]`,
      );
      expect(r.bytes(Buffer.from(cut)).toString("utf8")).toBe(r.text(cut));
    }
    // Shorter starts are left (they tell nothing), as is text that only looks like one.
    expect(r.text(`a ${SECRET.slice(0, 3)}… b`)).toBe(`a ${SECRET.slice(0, 3)}… b`);
    expect(r.text("sk-livid… and sk-live but no cut")).toBe("sk-livid… and sk-live but no cut");
    // A whole secret before the mark, and the JSON-escaped start of one inside a JSON file.
    expect(r.text(`${SECRET}${SECRET.slice(0, 6)}…`)).toBe("******…");
    const quoted = new Redactor(['pa"ss\\word-0123']);
    expect(quoted.bytes(Buffer.from(JSON.stringify({ t: 'pa"ss\\wo…' }))).toString()).toBe('{"t":"***…"}');
  });

  it("redacts bytes without touching other bytes (binary and UTF-8)", () => {
    const s = new Redactor(["mötley-secret"]);
    const input = Buffer.concat([
      Buffer.from([0, 255, 1]),
      Buffer.from("é mötley-secret ü"),
      Buffer.from([0]),
    ]);
    const out = s.bytes(input);
    expect(out).toEqual(Buffer.concat([Buffer.from([0, 255, 1]), Buffer.from("é *** ü"), Buffer.from([0])]));
  });

  it("redacts every string value of a JSON value, never a key, and leaves numbers", () => {
    const v = { [SECRET]: [SECRET, 1234, null, { deep: `x${SECRET}` }], n: 5 };
    expect(r.deep(v)).toEqual({ [SECRET]: ["***", 1234, null, { deep: "x***" }], n: 5 });
  });

  it("leaves the values `keep` names as structure, by the keys leading to them", () => {
    const common = new Redactor(["pass"]);
    const v = {
      verdict: "pass",
      reason: "1 of 1 attempt passed",
      runs: [{ status: "passed", message: "pass" }],
    };
    const keep = (keys: readonly string[]) => ["verdict", "status"].includes(keys.at(-1)!);
    expect(common.deep(v, keep)).toEqual({
      verdict: "pass",
      reason: "1 of 1 attempt ***ed",
      runs: [{ status: "passed", message: "***" }],
    });
  });

  it("rewrites only the files that hold a secret", async () => {
    const dir = tempDir();
    writeFiles(dir, { "a.log": `x ${SECRET}\n`, "sub/b.patch": `+${SECRET}\n`, "c.txt": "clean\n" });
    const changed = await r.files(dir);
    expect(changed.map((f) => path.relative(dir, f)).sort()).toEqual(["a.log", "sub/b.patch"]);
    expect(readFileSync(path.join(dir, "a.log"), "utf8")).toBe("x ***\n");
    expect(readFileSync(path.join(dir, "sub/b.patch"), "utf8")).toBe("+***\n");
  });
});

describe("StreamRedactor", () => {
  it("masks a secret split across chunks anywhere, giving the same text as a whole", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 4, maxLength: 20 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.oneof(fc.string({ maxLength: 30 }), fc.nat(2)), { maxLength: 12 }),
        fc.array(fc.nat(60), { maxLength: 10 }),
        (secrets, parts, cuts) => {
          const r = new Redactor(secrets);
          // Text made of plain parts and secrets (a number picks a secret).
          const text = parts.map((p) => (typeof p === "number" ? secrets[p % secrets.length]! : p)).join("");
          const bytes = Buffer.from(text);
          const positions = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const s = r.stream();
          const out: Buffer[] = [];
          let at = 0;
          for (const p of [...positions, bytes.length]) {
            out.push(s.push(bytes.subarray(at, p)));
            at = p;
          }
          out.push(s.end());
          const streamed = Buffer.concat(out);
          expect(streamed.equals(r.bytes(bytes))).toBe(true);
          for (const secret of secrets) if (secret.length >= 4) expect(streamed.includes(secret)).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("CappedLog with a redactor", () => {
  it("redacts a secret written one byte at a time, before the cap cuts the log", async () => {
    const dir = tempDir();
    const file = path.join(dir, "agent.log");
    const secret = "tok-0123456789abcdef";
    const log = new CappedLog(file, 1000, new Redactor([secret]));
    const text = `${"x".repeat(790)}${secret}${"y".repeat(2000)}${secret}end\n`;
    for (const b of Buffer.from(text)) log.write(Buffer.from([b]));
    await log.close();
    const written = readFileSync(file, "utf8");
    expect(written).toMatch(/\[evalgate: output cut here/);
    expect(written).not.toMatch(/tok-|0123456789|abcdef/);
    expect(written.endsWith("***end\n")).toBe(true);
    expect(log.tail()).not.toContain(secret);
  });

  it("writes output unchanged without secrets", async () => {
    const file = path.join(tempDir(), "a.log");
    const log = new CappedLog(file, 1000, new Redactor([]));
    log.write(Buffer.from("plain output\n"));
    await log.close();
    expect(readFileSync(file, "utf8")).toBe("plain output\n");
    writeFileSync(file, "");
  });
});

describe("secretForms", () => {
  it("lists the raw value first and nothing shorter than 4 characters", () => {
    const forms = secretForms("abcdefghijkl");
    expect(forms[0]).toBe("abcdefghijkl");
    expect(forms.every((f) => f.length >= 4)).toBe(true);
    expect(forms).toContain(Buffer.from("abcdefghijkl").toString("base64"));
  });
});

describe("the bundle writer's structure", () => {
  it.each([
    [["verdict"], true],
    [["runs", "status"], true],
    [["result_dir"], true],
    [["files", "scorer_logs", "my scorer"], true],
    [["reason"], false],
    [["message"], false],
    [["agent", "error"], false],
    [["diff", "files", "path"], false],
    [["scorers", "details", "tests", "name"], false],
    [["scorers", "details", "failing", "outcome"], false],
    [["scorers", "name"], true],
    [["usage", "model"], false],
    [["agent", "model"], true],
    [["usage", "cost_source"], true],
  ])("%j is structure: %s", (keys, want) => {
    expect(structural(keys)).toBe(want);
  });
});
