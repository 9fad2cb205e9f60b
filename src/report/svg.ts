/**
 * Inline SVG figures of report.html: success rates with their 95 % Wilson intervals (base beside
 * head) and the attempts timeline of a case. Pure; no script, no font or image to fetch. Readable
 * without colour: the head is a solid line with a filled dot, the base a dashed line with a hollow
 * dot, each labelled in text; attempts are shapes (filled square: passed, crossed square: failed,
 * triangle: error or timeout) with a legend and a <title> each.
 */
import { wilsonInterval } from "../gate/stats.js";

export interface RateRow {
  label: string;
  head: { passed: number; counted: number } | null;
  base?: { passed: number; counted: number } | null;
}

const xmlEsc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const pct = (x: number) => `${Math.round(x * 100)} %`;

function side(
  kind: "head" | "base",
  s: { passed: number; counted: number },
  y: number,
  x0: number,
  w: number,
) {
  const iv = wilsonInterval(s.passed, s.counted);
  if (!iv) return "";
  const at = (v: number) => (x0 + v * w).toFixed(1);
  const rate = s.passed / s.counted;
  const dash = kind === "base" ? ' stroke-dasharray="4 3"' : "";
  const dot =
    kind === "base"
      ? `<circle cx="${at(rate)}" cy="${y}" r="4" fill="none" stroke="currentColor" stroke-width="1.5"/>`
      : `<circle cx="${at(rate)}" cy="${y}" r="4" fill="currentColor"/>`;
  const text = `${kind} ${s.passed}/${s.counted} = ${pct(rate)}, 95 % interval ${pct(iv[0])}–${pct(iv[1])}`;
  return `<g><title>${xmlEsc(text)}</title><line x1="${at(iv[0])}" y1="${y}" x2="${at(iv[1])}" y2="${y}" stroke="currentColor" stroke-width="2"${dash}/><line x1="${at(iv[0])}" y1="${y - 4}" x2="${at(iv[0])}" y2="${y + 4}" stroke="currentColor"/><line x1="${at(iv[1])}" y1="${y - 4}" x2="${at(iv[1])}" y2="${y + 4}" stroke="currentColor"/>${dot}<text x="${x0 + w + 10}" y="${y + 4}" font-size="11" fill="currentColor">${xmlEsc(text)}</text></g>`;
}

/**
 * Success rates with their 95 % intervals, one row per label, the base's (dashed, hollow) above
 * the head's (solid, filled) when there is one. `threshold` draws the policy's line.
 */
export function rateChart(rows: readonly RateRow[], threshold: number | null = null): string {
  const drawn = rows.filter((r) => r.head?.counted || r.base?.counted);
  if (drawn.length === 0) return "";
  const labelW = 170;
  const w = 260;
  const rowH = (r: RateRow) => (r.base?.counted ? 34 : 20);
  const height = drawn.reduce((a, r) => a + rowH(r), 0) + 24;
  const width = labelW + w + 330;
  let y = 8;
  const body: string[] = [];
  for (const r of drawn) {
    const h = rowH(r);
    body.push(
      `<text x="0" y="${y + h / 2 + 4}" font-size="12" fill="currentColor">${xmlEsc(r.label.length > 26 ? `${r.label.slice(0, 25)}…` : r.label)}</text>`,
    );
    if (r.base?.counted) {
      body.push(side("base", r.base, y + 8, labelW, w));
      if (r.head?.counted) body.push(side("head", r.head, y + 24, labelW, w));
    } else if (r.head?.counted) body.push(side("head", r.head, y + h / 2, labelW, w));
    y += h;
  }
  const axis = [0, 0.25, 0.5, 0.75, 1]
    .map((v) => {
      const x = (labelW + v * w).toFixed(1);
      return `<line x1="${x}" y1="4" x2="${x}" y2="${y}" stroke="currentColor" stroke-opacity="0.15"/><text x="${x}" y="${y + 14}" font-size="10" text-anchor="middle" fill="currentColor">${pct(v)}</text>`;
    })
    .join("");
  const line =
    threshold === null
      ? ""
      : `<g><title>policy threshold ${pct(threshold)}</title><line x1="${(labelW + threshold * w).toFixed(1)}" y1="2" x2="${(labelW + threshold * w).toFixed(1)}" y2="${y}" stroke="currentColor" stroke-dasharray="1 2"/></g>`;
  const summary = drawn
    .map(
      (r) =>
        `${r.label}: ${r.base?.counted ? `base ${r.base.passed}/${r.base.counted}, ` : ""}head ${r.head ? `${r.head.passed}/${r.head.counted}` : "—"}`,
    )
    .join("; ");
  return `<svg class="chart" role="img" aria-label="${xmlEsc(`success rates with 95 % intervals: ${summary}`)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">${axis}${line}${body.join("")}</svg>`;
}

export interface TimelineAttempt {
  attempt: number;
  retry: number;
  status: "passed" | "failed" | "timeout" | "error";
  counted: boolean;
}

/** Every try of a case in order: a shape per status, so the timeline reads without colour. */
export function attemptsTimeline(runs: readonly TimelineAttempt[]): string {
  if (runs.length === 0) return "";
  const size = 14;
  const gap = 4;
  const shapes = runs.map((r, i) => {
    const x = i * (size + gap);
    const label = `attempt ${r.attempt}${r.retry ? ` retry ${r.retry}` : ""}: ${r.status}${r.counted ? "" : " (not counted)"}`;
    const faded = r.counted ? "" : ' opacity="0.45"';
    let shape: string;
    if (r.status === "passed")
      shape = `<rect x="${x}" y="2" width="${size}" height="${size}" fill="currentColor"/>`;
    else if (r.status === "failed")
      shape = `<rect x="${x + 0.75}" y="2.75" width="${size - 1.5}" height="${size - 1.5}" fill="none" stroke="currentColor" stroke-width="1.5"/><path d="M${x + 3} 5 L${x + size - 3} ${size - 1} M${x + size - 3} 5 L${x + 3} ${size - 1}" stroke="currentColor" stroke-width="1.5"/>`;
    else
      shape = `<path d="M${x + size / 2} 2 L${x + size} ${size + 2} L${x} ${size + 2} Z" fill="none" stroke="currentColor" stroke-width="1.5"/>`;
    return `<g${faded}><title>${xmlEsc(label)}</title>${shape}</g>`;
  });
  const width = runs.length * (size + gap);
  const text = runs.map((r) => `${r.attempt}${r.retry ? `.${r.retry}` : ""} ${r.status}`).join(", ");
  return `<svg class="timeline" role="img" aria-label="${xmlEsc(`attempts in order: ${text}`)}" width="${width}" height="${size + 4}" viewBox="0 0 ${width} ${size + 4}" xmlns="http://www.w3.org/2000/svg">${shapes.join("")}</svg> <span class="muted">■ passed · ☒ failed · △ error or timeout; faded: not counted</span>`;
}

export interface HistoryRun {
  label: string;
  passed: number;
  counted: number;
}

/**
 * A case's success rate over the base branch's runs, oldest left, then this run (a filled diamond
 * where the base runs are hollow circles), each with its 95 % interval as a bar; a dotted line at
 * the policy's threshold. Readable without colour; each point has a <title>.
 */
export function historyChart(
  base: readonly HistoryRun[],
  head: HistoryRun | null,
  threshold: number | null = null,
): string {
  const points = [...base.filter((b) => b.counted > 0), ...(head && head.counted > 0 ? [head] : [])];
  if (points.length < 2) return "";
  const step = 26;
  const left = 34;
  const h = 90;
  const top = 6;
  const width = left + points.length * step + 10;
  const height = top + h + 30;
  const y = (v: number) => (top + (1 - v) * h).toFixed(1);
  const axis = [0, 0.5, 1]
    .map(
      (v) =>
        `<line x1="${left - 4}" y1="${y(v)}" x2="${width - 6}" y2="${y(v)}" stroke="currentColor" stroke-opacity="0.15"/><text x="${left - 6}" y="${Number(y(v)) + 4}" font-size="10" text-anchor="end" fill="currentColor">${pct(v)}</text>`,
    )
    .join("");
  const line =
    threshold === null
      ? ""
      : `<g><title>policy threshold ${pct(threshold)}</title><line x1="${left - 4}" y1="${y(threshold)}" x2="${width - 6}" y2="${y(threshold)}" stroke="currentColor" stroke-dasharray="1 2"/></g>`;
  const marks = points.map((p, i) => {
    const x = left + i * step + step / 2;
    const rate = p.passed / p.counted;
    const iv = wilsonInterval(p.passed, p.counted)!;
    const isHead = head !== null && i === points.length - 1 && p === head;
    const dot = isHead
      ? `<path d="M${x} ${Number(y(rate)) - 5} L${x + 5} ${y(rate)} L${x} ${Number(y(rate)) + 5} L${x - 5} ${y(rate)} Z" fill="currentColor"/>`
      : `<circle cx="${x}" cy="${y(rate)}" r="3.5" fill="none" stroke="currentColor" stroke-width="1.5"/>`;
    const label = `${p.label}: ${p.passed}/${p.counted} = ${pct(rate)} (95 % interval ${pct(iv[0])}–${pct(iv[1])})`;
    return `<g><title>${xmlEsc(label)}</title><line x1="${x}" y1="${y(iv[0])}" x2="${x}" y2="${y(iv[1])}" stroke="currentColor" stroke-opacity="0.5"/>${dot}<text x="${x}" y="${height - 6}" font-size="9" text-anchor="middle" fill="currentColor">${xmlEsc(p.label.slice(0, 4))}</text></g>`;
  });
  const summary = points.map((p) => `${p.label} ${p.passed}/${p.counted}`).join(", ");
  return `<svg class="history" role="img" aria-label="${xmlEsc(`success rate over the base branch's runs, oldest first, then this run: ${summary}`)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">${axis}${line}${marks.join("")}</svg> <span class="muted">○ base runs, oldest first · ◆ this run</span>`;
}
