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

/**
 * "512 B", "100 MB", "10 MiB": a size for people, in binary units when the size is a whole number
 * of KiB (as "10MiB" limits are), else in decimal units (as "100MB" limits are).
 */
export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const binary = bytes % 1024 === 0;
  const base = binary ? 1024 : 1000;
  const units = binary ? ["KiB", "MiB", "GiB", "TiB"] : ["KB", "MB", "GB", "TB"];
  let v = bytes;
  let u = -1;
  while (v >= base && u < units.length - 1) {
    v /= base;
    u++;
  }
  if (u < 0) return `${bytes} B`;
  return `${Number(v.toFixed(v < 10 ? 2 : 1))} ${units[u]}`;
}
