/** Sizes as users write them: "100MB", "1.5GiB", "500 KB", or a number of bytes. */

export const SIZE_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|KiB|MiB|GiB)?\s*$/i;

const UNIT_BYTES: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
};

/** Bytes for a size; throws on text that does not match {@link SIZE_PATTERN}. */
export function parseSize(value: string | number): number {
  if (typeof value === "number") return Math.floor(value);
  const m = SIZE_PATTERN.exec(value);
  if (!m) throw new Error(`not a size: ${JSON.stringify(value)}`);
  return Math.floor(Number(m[1]) * UNIT_BYTES[(m[2] ?? "b").toLowerCase()]!);
}

/** "512 B", "12.5 KB", "100 MB", "1.2 GB": a size for people (decimal units, as limits are given). */
export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = bytes;
  let u = -1;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${Number(v.toFixed(v < 10 ? 2 : 1))} ${units[u]}`;
}
