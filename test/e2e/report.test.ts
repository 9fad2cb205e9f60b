import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { XMLValidator } from "fast-xml-parser";
import { parse } from "parse5";
import { describe, expect, it } from "vitest";
import { parseJUnit } from "../../src/scorers/junit.js";
import { readJsonl, runCli, sh, tempDir, writeFiles } from "../helpers.js";
import { checkComment, htmlElements, outsideFences } from "../report/markdown-check.js";

const HOSTILE = "@octocat <img src=x onerror=alert(1)>";

/**
 * A suite whose agent behaves per test and per $MODE: `regress` passes on the base and fails on the
 * head, `flaky` passes odd attempts, `crash` leaves on the head what its scorer cannot grade (an
 * error: an agent's own crash is graded, docs/gate.md), `hostile` prints HTML and a mention
 * and writes fences, control characters and `]]>` where a scorer reads them back.
 */
function suite(): string {
  const dir = tempDir();
  writeFiles(dir, {
    "app/answer.txt": "wrong\n",
    "agent.sh": `#!/bin/sh
case "$1" in
  stable) echo right > answer.txt ;;
  regress) if [ "$MODE" = base ]; then echo right > answer.txt; else echo wrong-again > answer.txt; fi ;;
  flaky) if [ $((EVALGATE_ATTEMPT % 2)) = 1 ]; then echo right > answer.txt; else echo nope > answer.txt; fi ;;
  crash) if [ "$MODE" = head ]; then echo "Error: 529 overloaded_error" > score.txt; else echo score=1 > score.txt; fi ;;
  hostile)
    echo '${HOSTILE}'
    printf '# Notes\\n\`\`\`\\n${HOSTILE}\\n\`\`\`\\n</details>\\n' > NOTES.md
    printf 'bad \\001 \\033[31mred\\033[0m ]]> ${HOSTILE}\\n' > why.txt ;;
esac
exit 0
`,
    "r.eval.yaml": `name: report-demo
targets: [{ name: bot, provider: command, command: ["./agent.sh", "{TEST_ID}"], env_passthrough: [MODE] }]
repeat: 2
concurrency: 2
workspace: { seed: { path: app } }
tests:
  - { id: stable, instruction: "write right", scorers: [{ name: answer, type: file, path: answer.txt, contains: right }] }
  - { id: regress, instruction: "write right", scorers: [{ name: answer, type: file, path: answer.txt, contains: right }] }
  - { id: flaky, instruction: "write right", scorers: [{ name: answer, type: file, path: answer.txt, contains: right }] }
  - { id: crash, instruction: "write right", scorers: [{ name: answer, type: script, run: "cat score.txt" }] }
  - id: hostile
    instruction: "write notes"
    scorers: [{ name: check, type: command, run: "cat why.txt; exit 1" }]
`,
  });
  sh("chmod +x agent.sh", dir);
  return dir;
}

describe("reports of a real run against a baseline", () => {
  const dir = suite();
  const base = runCli(["run", "--out", "base"], dir, { MODE: "base" });
  const head = runCli(["run", "--out", "head", "--baseline", "base"], dir, { MODE: "head" });
  const bundle = path.join(dir, "head");
  const read = (f: string) => readFileSync(path.join(bundle, f), "utf8");

  it("writes comment.md: the regression, the flaky and the errored case, and the hostile one harmless", () => {
    expect(base.code).toBe(1);
    expect(head.code).toBe(1);
    const md = read("comment.md");
    expect(md.split("\n")[0]).toBe("<!-- evalgate:comment key=default -->");
    // 2/2 → 0/2 over 4 compared cases is not significant (gate.regressions.evidence: significant,
    // the default): the headline counts what the gate counts, and calls the flip a possible one.
    expect(md).toContain("## ❌ evalgate — gate failed: 1 errored case, 1 possible regression");
    // A drop the gate does not count (not significant after Holm) is a flip, never a bold "regressed".
    expect(md).toMatch(
      /\| ❌ fail \| regress \| bot \| 0\/2 · 0 % \| 2\/2 · flipped \(not counted\) · −100 pp/,
    );
    expect(md).toMatch(/\| ❌ fail \| flaky \| bot \| 1\/2 · 50 % \| 1\/2 \| flaky \|/);
    expect(md).toMatch(/\| ❗ error \| crash \| bot \| 0\/0 \(2 errors\) \|/);
    expect(md).toContain("could not run: printed no score");
    expect(md).toContain("<details><summary>✅ 1 more case passed on every attempt</summary>");
    // summary.json carries the baseline's per-target numbers, which the deltas come from.
    const summary = JSON.parse(read("summary.json"));
    const baseSummary = JSON.parse(readFileSync(path.join(dir, "base", "summary.json"), "utf8"));
    expect(summary.comparison.targets).toEqual(baseSummary.targets);
    expect(md).toContain("| bot | 1 (−2) | 3 (+1) | 1 | 1 (+1) | 38 % (−32 pp) | — |");
    // The agent's output is there, escaped: nothing renders as HTML, nobody is pinged.
    const prose = outsideFences(md).join("\n");
    expect(prose).not.toMatch(/<img|@octocat/);
    expect(prose).toContain("@\u200Doctocat &lt;img src=x onerror=alert(1)&gt;");
    const facts = checkComment(md);
    expect(facts).toMatchObject({ foreign: [], mentions: [], openFence: null, detailsBalanced: true });
    // The diff's own fence sits inside a longer one.
    expect(md).toMatch(/````diff\n[\s\S]*\+```\n[\s\S]*\n````\n/);
    expect(md).not.toMatch(/[\u0001\u001b]/);
  });

  it("evalgate report prints the same comment, and writes html, junit and json", () => {
    const r = runCli(["report", "head"], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(read("comment.md"));
    const out = runCli(["report", "head", "--format", "html", "--out", "page.html"], dir);
    expect(out).toMatchObject({ code: 0, stdout: "" });
    expect(readFileSync(path.join(dir, "page.html"), "utf8")).toBe(read("report.html"));
    const json = JSON.parse(runCli(["report", "head", "--format", "json"], dir).stdout);
    expect(json.summary.schema).toBe("evalgate.summary/v1");
    expect(json.rows).toHaveLength(5);
    expect(runCli(["report", "head", "--format", "junit"], dir).stdout).toBe(read("junit.xml"));
  });

  it("report.html is one self-contained page with every case, no script, no image, the agent's text as text", () => {
    const html = read("report.html");
    const doc = parse(html);
    const els = htmlElements(doc);
    const tags = new Set(els.map((e) => e.tagName));
    for (const t of ["script", "img", "iframe", "object", "embed", "link"])
      expect(tags.has(t), t).toBe(false);
    for (const e of els) {
      for (const a of e.attrs) {
        expect(a.name.startsWith("on"), `${e.tagName} ${a.name}`).toBe(false);
        if (a.name === "href") expect(a.value).not.toMatch(/^(javascript|data|https?):/i);
        if (a.name === "src") throw new Error(`a ${e.tagName} loads ${a.value}`);
      }
    }
    const csp = els.find(
      (e) => e.tagName === "meta" && e.attrs.some((a) => a.value === "Content-Security-Policy"),
    );
    expect(csp?.attrs.find((a) => a.name === "content")?.value).toContain("default-src 'none'");
    for (const id of ["stable", "regress", "flaky", "crash", "hostile"])
      expect(html).toContain(`<b>${id}</b>`);
    expect(html).toContain("@octocat &lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain("could not run: printed no score");
    expect(html).toMatch(/<span class="add">\+```<\/span>/);
    // Evidence links are bundle-relative and point at files that exist.
    const hrefs = els.flatMap((e) => e.attrs.filter((a) => a.name === "href").map((a) => a.value));
    const files = hrefs.filter((h) => !h.startsWith("#") && !h.endsWith("/"));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) expect(() => readFileSync(path.join(bundle, decodeURIComponent(f)))).not.toThrow();
  });

  it("junit.xml is valid XML that JUnit readers (and evalgate's own) read as one testcase per case", () => {
    const xml = read("junit.xml");
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(xml).not.toMatch(/[\u0001\u001b]/);
    const cases = parseJUnit(xml);
    const rows = readJsonl<{ test_id: string; verdict: string }>(path.join(bundle, "index.jsonl"));
    expect(cases).toHaveLength(rows.length);
    const outcome = { pass: "passed", fail: "failed", error: "errored" };
    for (const row of rows) {
      const c = cases.find((x) => x.name === `${row.test_id} [bot]`)!;
      expect(c.classname).toBe("r.eval.yaml");
      expect(c.outcome).toBe(outcome[row.verdict as keyof typeof outcome]);
    }
    expect(cases.find((x) => x.name === "crash [bot]")!.message).toContain("errored (scorer_error)");
    expect(cases.find((x) => x.name === "hostile [bot]")!.message).toContain("0 of 2 attempts passed");
    expect(xml).toContain("]]&gt; @octocat &lt;img src=x onerror=alert(1)&gt;");
  });

  it("renders a bundle written by hostile code harmlessly: numbers, statuses and verdicts are checked, not trusted", () => {
    // What the fork recipe publishes: a bundle the pull request's code could have written in full.
    const forged = path.join(dir, "forged");
    cpSync(bundle, forged, { recursive: true });
    // biome-ignore lint/suspicious/noExplicitAny: a forged bundle is edited freely, field by field
    const edit = (file: string, change: (j: Record<string, any>) => void) => {
      const j = JSON.parse(readFileSync(file, "utf8"));
      change(j);
      writeFileSync(file, JSON.stringify(j));
    };
    edit(path.join(forged, "summary.json"), (s) => {
      // Whoever writes a whole bundle can leave the seal out (or seal it again): seal.test.ts
      // shows that a sealed bundle edited afterwards is refused.
      delete s.seal;
      s.gate.verdict = HOSTILE;
      s.gate.reasons = HOSTILE;
      s.counts.passed = HOSTILE;
      s.run.shard = { index: HOSTILE, total: 2 };
      s.targets[0].attempt_success_rate = HOSTILE;
      s.comparison.regressed = HOSTILE;
    });
    const rows = readFileSync(path.join(forged, "index.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    for (const row of rows) {
      row.attempts.passed = HOSTILE;
      row.change = { ...row.change, change: HOSTILE, p_value: HOSTILE, significant: true };
    }
    writeFileSync(path.join(forged, "index.jsonl"), `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`);
    for (const row of rows) {
      edit(path.join(forged, row.summary_path), (c) => {
        for (const r of c.runs)
          Object.assign(r, { status: HOSTILE, failure_kind: HOSTILE, attempt: HOSTILE, score: HOSTILE });
        c.stats.wilson_95 = HOSTILE;
      });
      for (const run of readdirSync(path.join(forged, row.result_dir)).filter((d) => d.startsWith("run-")))
        edit(path.join(forged, row.result_dir, run, "result.json"), (r) => {
          r.diff = { files: HOSTILE, additions: HOSTILE };
          r.agent = { exit_code: HOSTILE };
        });
    }
    const md = runCli(["report", "forged"], dir);
    expect(md.stderr).toBe("");
    expect(md.code).toBe(0);
    // A verdict that is not "pass" fails: a damaged bundle never reads as green.
    expect(md.stdout).toContain("## ❌ evalgate — gate failed");
    const prose = outsideFences(md.stdout).join("\n");
    expect(prose).not.toMatch(/<img/i);
    const facts = checkComment(md.stdout);
    expect(facts.foreign).toEqual([]);
    expect(facts.mentions).toEqual([]);
    expect(facts.openFence).toBeNull();
    expect(facts.detailsBalanced).toBe(true);
    const html = runCli(["report", "forged", "--format", "html"], dir);
    expect(html.code).toBe(0);
    const tags = new Set(htmlElements(parse(html.stdout)).map((e) => e.tagName));
    expect(tags.has("img")).toBe(false);
    const junit = runCli(["report", "forged", "--format", "junit"], dir);
    expect(junit.code).toBe(0);
    expect(XMLValidator.validate(junit.stdout)).toBe(true);
  });

  it("refuses a folder that is not a bundle, and an unknown format", () => {
    const r = runCli(["report", "app"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("evalgate: app is not an evalgate bundle: it has no summary.json\n");
    expect(runCli(["report", "nope"], dir).stderr).toBe("evalgate: nope does not exist\n");
    const f = runCli(["report", "head", "--format", "pdf"], dir);
    expect(f.code).toBe(2);
    expect(f.stderr).toContain("argument 'pdf' is invalid");
    const out = runCli(["report", "head", "--out", "no/such/dir/c.md"], dir);
    expect(out).toMatchObject({
      code: 2,
      stderr: "evalgate: --out no/such/dir/c.md: cannot write the file (ENOENT)\n",
    });
  });
});
