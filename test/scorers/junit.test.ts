import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { countOutcomes, displayName, JUnitError, parseJUnit } from "../../src/scorers/junit.js";
import { ROOT } from "../helpers.js";

const DIR = path.join(ROOT, "test", "fixtures", "junit");
const expected = JSON.parse(readFileSync(path.join(DIR, "expected.json"), "utf8")) as Record<
  string,
  { tests: number; passed: number; failed: number; errored: number; skipped: number }
>;
const read = (name: string) => parseJUnit(readFileSync(path.join(DIR, name), "utf8"));

describe("parseJUnit on real reports", () => {
  it("has an expectation for every fixture", () => {
    const xml = readdirSync(DIR).filter((f) => f.endsWith(".xml"));
    expect(xml.sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.keys(expected))("counts %s as expected.json says", (name) => {
    expect(countOutcomes(read(name))).toEqual(expected[name]);
  });

  it("keeps pytest's second testcase for a teardown error after a failure", () => {
    const cases = read("pytest-all-outcomes.xml").filter((t) => t.name === "test_teardown_error_after_fail");
    expect(cases.map((t) => t.outcome)).toEqual(["failed", "errored"]);
    expect(cases[1]!.message).toBe('failed on teardown with "OSError: could not remove temp dir"');
  });

  it("decodes character references in messages (pytest writes newlines as &#10;)", () => {
    const failing = read("pytest-all-outcomes.xml").find((t) => t.name === "test_fails")!;
    expect(failing.message).toBe("AssertionError: assert {'a': 1} == {'a': 2}");
    const both = read("pytest-all-outcomes.xml").filter((t) => t.name === "test_teardown_error_after_fail");
    expect(both[0]!.message).toBe("AssertionError: call failed too");
  });

  it("reads xfail as skipped and a strict xpass as failed", () => {
    const byName = new Map(read("pytest-all-outcomes.xml").map((t) => [t.name, t]));
    expect(byName.get("test_xfail")!.outcome).toBe("skipped");
    expect(byName.get("test_xpass")!.outcome).toBe("passed");
    expect(byName.get("test_xpass_strict")!.outcome).toBe("failed");
    expect(byName.get("test_skip_inside")!.message).toBe("runtime skip <with> & markup");
  });

  it("counts a Surefire test that passed on a rerun as passed (flaky) and one that kept failing as failed", () => {
    const [flaky] = read("surefire-flaky-failure.xml");
    expect(flaky).toMatchObject({ outcome: "passed", flaky: true, classname: "io.olamy.FlakyTest" });
    const [rerun] = read("surefire-rerun-failure.xml");
    expect(rerun).toMatchObject({ outcome: "failed", flaky: false });
  });

  it("resolves several results in one testcase as failure > error > skipped", () => {
    const first = read("generic-multi-result.xml")[0]!;
    expect(first.name).toBe("test that errors");
    expect(first.outcome).toBe("failed");
  });

  it("reads a report with a BOM and no XML declaration", () => {
    const text = readFileSync(path.join(DIR, "dotnet-junitxml-testlogger.xml"), "utf8");
    expect(text.charCodeAt(0)).toBe(0xfeff);
    expect(parseJUnit(text)).toHaveLength(52);
  });

  it("keeps characters outside the BMP in names", () => {
    const names = read("generic-unicode-astral.xml").map((t) => t.name);
    expect(names[0]).toContain("𒍺𡓿𠄉");
  });

  it("finds testcases directly under <testsuites> and in nested suites", () => {
    const cases = read("node-test-runner.xml");
    expect(cases.some((t) => t.suite === null)).toBe(true);
    const nested = read("generic-nested-testsuites.xml");
    expect(new Set(nested.map((t) => t.suite)).size).toBeGreaterThan(1);
  });

  it("takes the message from the body when there is no message attribute", () => {
    const failing = read("jest-junit-failures.xml").filter((t) => t.outcome === "failed");
    expect(failing.every((t) => t.message && t.message.length > 0)).toBe(true);
    const vitest = read("vitest-error-formats.xml");
    expect(vitest.find((t) => t.outcome === "errored")!.suite).toBe("vitest unhandled errors");
  });

  it("treats time as optional", () => {
    expect(read("node-test-runner.xml").every((t) => t.time === null)).toBe(true);
    expect(read("mocha-junit-reporter-calculator.xml")[0]!.time).toBeTypeOf("number");
  });

  it("shows a test as classname > name", () => {
    const t = read("jest-junit-failures.xml")[0]!;
    expect(displayName(t)).toBe(`${t.classname} > ${t.name}`);
    expect(displayName({ classname: null, suite: null, name: "alone" })).toBe("alone");
  });
});

describe("parseJUnit on broken input", () => {
  it.each([
    ["", /empty/],
    ["   \n", /empty/],
    ['<testsuites><testsuite name="a"><testcase name="x">', /not well-formed XML \(line 1/],
    ["<html><body>Internal Server Error</body></html>", /root element is <html>/],
    ["just text", /not well-formed|root element/],
  ])("refuses %j", (xml, why) => {
    expect(() => parseJUnit(xml)).toThrow(JUnitError);
    expect(() => parseJUnit(xml)).toThrow(why);
  });

  it("does not expand entity bombs without bound", () => {
    const lol = [
      '<?xml version="1.0"?>',
      '<!DOCTYPE lolz [<!ENTITY lol "lollollollollollollollollollol">',
      ...Array.from({ length: 8 }, (_, i) => {
        const prev = i === 0 ? "lol" : `lol${i}`;
        return `<!ENTITY lol${i + 1} "${`&${prev};`.repeat(10)}">`;
      }),
      "]>",
      '<testsuite><testcase name="&lol8;"/></testsuite>',
    ].join("\n");
    let outcome: unknown;
    try {
      outcome = parseJUnit(lol);
    } catch (error) {
      outcome = error;
    }
    if (Array.isArray(outcome)) expect(String(outcome[0]?.name).length).toBeLessThan(1_000_000);
    else expect(outcome).toBeInstanceOf(JUnitError);
  });
});
