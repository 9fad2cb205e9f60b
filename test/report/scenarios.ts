/** The runs the renderer tests draw: a failing run against a baseline, a passing run, a run without baseline, a hostile agent. */
import type { CaseView, ReportView } from "../../src/report/view.js";
import { diffOf, evidence, kase, logOf, run, scorer, targetsOf, usage, view } from "./views.js";

const unchanged = (passed: number, counted: number) => ({
  change: "unchanged" as const,
  baseVerdict: "pass",
  baseAttempts: { counted, passed },
  successRateDelta: 0,
  pValue: 1,
  significant: false,
});

function passingCase(testId: string, target: string, base = true): CaseView {
  const dir = `${testId}--${target}`;
  return kase({
    testId,
    target,
    runs: [1, 2, 3].map((i) => run(dir, i, "passed")),
    change: base ? unchanged(3, 3) : null,
    usage: usage(20_000, 4_000, 0.12, 3),
  });
}

/** checkout-bugs: two regressions (one flaky), a flaky pass, an improvement, an errored case, passes. */
export function failingRun(): ReportView {
  const d1 = "empty-cart-total--claude";
  const emptyCart = kase({
    testId: "empty-cart-total",
    target: "claude",
    model: "sonnet",
    runs: [
      run(d1, 1, "passed", {
        evidence: evidence({
          usage: { inputTokens: 28_000, outputTokens: 3_000, cachedTokens: 0, costUsd: 0.09 },
          ...diffOf(
            `${d1}/run-1`,
            "src/cart.ts",
            "-  return items.reduce((s, i) => s + i.price, 0) / items.length;\n+  return items.length ? items.reduce((s, i) => s + i.price, 0) / items.length : 0;\n",
          ),
          scorers: [
            scorer({ name: "unit", type: "tests", required: true, reason: "all tests passed (14 passed)" }),
          ],
        }),
      }),
      run(d1, 2, "failed", {
        message: "unit: fail_to_pass not passing: cart > empty total (failed: expected 0, got NaN)",
        score: 0.4,
        evidence: evidence({
          usage: { inputTokens: 30_000, outputTokens: 2_500, cachedTokens: 0, costUsd: 0.1 },
          ...diffOf(
            `${d1}/run-2`,
            "src/cart.ts",
            "-  return items.reduce((s, i) => s + i.price, 0) / items.length;\n+  return items.length\n+    ? items.reduce((s, i) => s + i.price, 0) / items.length\n+    : NaN;\n",
          ),
          scorers: [
            scorer({
              name: "unit",
              type: "tests",
              required: true,
              passed: false,
              score: 0,
              reason: "fail_to_pass not passing: cart > empty total (failed: expected 0, got NaN)",
              failingTests: [
                { name: "cart > empty total", outcome: "failed", message: "expected 0, got NaN" },
              ],
              failingTestsTotal: 1,
            }),
            scorer({ name: "small", type: "diff", reason: "1 file, +3 −1" }),
          ],
          ...logOf(
            `${d1}/run-2`,
            "reading src/cart.ts\nediting src/cart.ts\nran npm test: 1 failing\ndone\n",
          ),
        }),
      }),
      run(d1, 3, "failed", {
        failureKind: "tampered",
        failureStage: "agent",
        message: "the agent changed protected file test/cart.test.ts (restored before scoring)",
        evidence: evidence({
          tampered: ["test/cart.test.ts"],
          ...diffOf(
            `${d1}/run-3`,
            "test/cart.test.ts",
            "-  expect(total([])).toBe(0);\n+  expect(total([])).toBeNaN();\n",
          ),
          ...logOf(`${d1}/run-3`, "the test looks wrong; updating it\ndone\n"),
        }),
      }),
    ],
    change: {
      change: "regressed",
      baseVerdict: "pass",
      baseAttempts: { counted: 3, passed: 3 },
      successRateDelta: -2 / 3,
      pValue: 0.2,
      significant: false,
    },
    usage: usage(58_000, 5_500, 0.19, 2),
  });
  emptyCart.usage!.attemptsWithoutUsage = 1;

  const d2 = "refund-rounding--claude";
  const refund = kase({
    testId: "refund-rounding",
    target: "claude",
    model: "sonnet",
    runs: [1, 2, 3].map((i) =>
      run(d2, i, "failed", {
        message: "unit: exit 1: refund of 10.005 rounds to 10.00, expected 10.01",
        evidence: evidence({
          ...diffOf(
            `${d2}/run-${i}`,
            "src/refund.ts",
            "-  return Math.round(x * 100) / 100;\n+  return Math.floor(x * 100) / 100;\n",
          ),
          scorers: [
            scorer({
              name: "unit",
              required: true,
              passed: false,
              score: 0,
              reason: "exit 1: refund of 10.005 rounds to 10.00, expected 10.01",
            }),
          ],
          ...logOf(`${d2}/run-${i}`, "switched to floor\n"),
        }),
      }),
    ),
    change: {
      change: "regressed",
      baseVerdict: "pass",
      baseAttempts: { counted: 3, passed: 3 },
      successRateDelta: -1,
      pValue: 0.05,
      significant: false,
    },
    usage: usage(60_000, 6_000, 0.2, 3),
  });

  const d3 = "coupon-stacking--claude";
  const coupon = kase({
    testId: "coupon-stacking",
    target: "claude",
    model: "sonnet",
    verdict: "pass",
    policy: { name: "attempt_success_rate_at_least", threshold: 0.67, onError: "fail" },
    runs: [
      run(d3, 1, "passed", {
        evidence: evidence(diffOf(`${d3}/run-1`, "src/coupon.ts", "+  if (stacked) return 0;\n")),
      }),
      run(d3, 2, "failed", {
        message: "unit: exit 1: two coupons stack",
        evidence: evidence({
          ...diffOf(`${d3}/run-2`, "src/coupon.ts", "+  // TODO\n"),
          scorers: [scorer({ name: "unit", passed: false, score: 0, reason: "exit 1: two coupons stack" })],
        }),
      }),
      run(d3, 3, "passed", {
        evidence: evidence(diffOf(`${d3}/run-3`, "src/coupon.ts", "+  if (stacked) return 0;\n")),
      }),
    ],
    change: { ...unchanged(2, 3), successRateDelta: 0 },
    usage: usage(50_000, 5_000, 0.15, 3),
  });

  const tax = kase({
    testId: "tax-rounding",
    target: "claude",
    model: "sonnet",
    runs: [1, 2, 3].map((i) => run("tax-rounding--claude", i, "passed")),
    change: {
      change: "improved",
      baseVerdict: "fail",
      baseAttempts: { counted: 3, passed: 1 },
      successRateDelta: 2 / 3,
      pValue: 0.2,
      significant: false,
    },
    usage: usage(40_000, 4_000, 0.12, 3),
  });

  const d5 = "setup-crash--house-agent";
  const crash = kase({
    testId: "setup-crash",
    target: "house-agent",
    runs: [1, 2].map((i) =>
      run(d5, i, "error", {
        message: "the agent exited with status 1: Error: 529 overloaded_error",
        evidence: evidence({
          agent: { exitCode: 1, signal: null, timedOut: false, durationMs: 2_000, error: null },
          diffStat: { files: [], additions: 0, deletions: 0 },
          ...logOf(`${d5}/run-${i}`, "calling the model\nError: 529 overloaded_error\n"),
        }),
      }),
    ),
    change: unchanged(2, 2),
  });

  const cases = [
    emptyCart,
    refund,
    coupon,
    tax,
    passingCase("empty-cart-total", "house-agent"),
    passingCase("refund-rounding", "house-agent"),
    passingCase("coupon-stacking", "house-agent"),
    passingCase("tax-rounding", "house-agent"),
    crash,
  ];
  const baseCases = cases.map((c) =>
    c === crash || c === emptyCart || c === refund
      ? kase({
          testId: c.testId,
          target: c.target,
          runs: [1, 2, 3].map((i) => run("x", i, "passed")),
          usage: usage(50_000, 5_000, 0.11, 3),
        })
      : c === tax
        ? kase({
            testId: c.testId,
            target: c.target,
            runs: [run("x", 1, "passed"), run("x", 2, "failed"), run("x", 3, "failed")],
            usage: usage(40_000, 4_000, 0.1, 3),
          })
        : c,
  );
  return view({
    cases,
    withUsage: true,
    gate: {
      verdict: "fail",
      reasons: [
        "checkout-bugs/setup-crash on house-agent: 2 of 2 attempts errored (agent_exit); errors are not counted as failures",
        "checkout-bugs/empty-cart-total on claude: regressed: 1 of 3 attempts passed (base 3 of 3), p = 0.200, not significant",
        "checkout-bugs/refund-rounding on claude: regressed: 0 of 3 attempts passed (base 3 of 3), p = 0.050, not significant",
      ],
    },
    comparison: {
      baselineRunId: "20261121-170102Z-0f0e0d",
      baselineSha: "b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0",
      regressed: 2,
      improved: 1,
      unchanged: 6,
      new: 0,
      removed: 0,
      significant: 0,
      removedCases: [],
      targets: targetsOf(baseCases, true),
    },
  });
}

export function passingRun(): ReportView {
  const cases = [
    passingCase("empty-cart-total", "claude"),
    passingCase("refund-rounding", "claude"),
    passingCase("tax-rounding", "claude"),
  ];
  return view({
    cases,
    withUsage: true,
    gate: { verdict: "pass", reasons: ["checkout-bugs: 3 of 3 cases passed (100 %)"] },
    comparison: {
      baselineRunId: "20261121-170102Z-0f0e0d",
      baselineSha: "b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0",
      regressed: 0,
      improved: 0,
      unchanged: 3,
      new: 0,
      removed: 0,
      significant: 0,
      removedCases: [],
      targets: targetsOf(cases, true),
    },
  });
}

export function noBaselineRun(): ReportView {
  const d = "discount-percent--house-agent";
  const failing = kase({
    testId: "discount-percent",
    target: "house-agent",
    runs: [
      run(d, 1, "failed", {
        message: "unit: exit 1: a 10% discount takes a tenth off",
        evidence: evidence({
          ...diffOf(
            `${d}/run-1`,
            "src/cart.js",
            "-  return totalCents * percent;\n+  return totalCents * (percent / 10);\n",
          ),
          scorers: [
            scorer({
              name: "unit",
              required: true,
              passed: false,
              score: 0,
              reason: "exit 1: a 10% discount takes a tenth off",
            }),
          ],
        }),
      }),
    ],
  });
  return view({
    cases: [passingCase("empty-cart-total", "house-agent", false), failing],
    gate: {
      verdict: "fail",
      reasons: ["checkout-bugs/discount-percent on house-agent: 0 of 1 attempt passed, policy needs all"],
    },
  });
}

export const HOSTILE = "@octocat <img src=x onerror=alert(1)>";

/** A case whose agent printed HTML and a mention, and whose diff holds code fences and a closing details tag. */
export function hostileRun(): ReportView {
  const d = "escape-me--evil";
  const diffBody = [
    "+# Notes",
    "+```",
    `+${HOSTILE}`,
    "+```",
    "+````js",
    "+</details>",
    "+<script>alert(2)</script>",
    "+````",
    "+| a | b |",
    "",
  ].join("\n");
  const hostile = kase({
    testId: "escape-me `x` | <b>y</b>",
    target: "evil @target",
    runs: [
      run(d, 1, "failed", {
        message: `${HOSTILE} fixes #1`,
        evidence: evidence({
          ...diffOf(`${d}/run-1`, "README.md", diffBody),
          scorers: [
            scorer({
              name: "unit`s",
              type: "tests",
              passed: false,
              score: 0,
              reason: `${HOSTILE} | [click](javascript:alert(3)) **bold** $x$`,
              failingTests: [
                { name: "cart > `empty` | total", outcome: "failed", message: `${HOSTILE}\nsecond line` },
              ],
              failingTestsTotal: 1,
            }),
          ],
          ...logOf(`${d}/run-1`, `${HOSTILE}\n\`\`\`\n</details>\n\u001b[31mred\u001b[0m \u202Eevil\u0000\n`),
        }),
      }),
    ],
  });
  return view({
    cases: [hostile],
    gate: { verdict: "fail", reasons: [`checkout-bugs/escape-me on evil: ${HOSTILE}`] },
  });
}
