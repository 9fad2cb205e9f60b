/** Sizes as users write them: "10MiB", "512KiB", "2MB", "100B", or a number of bytes. */

export const SIZE_PATTERN = /^\s*\d+(?:\.\d+)?\s*(?:B|KB|KiB|MB|MiB|GB|GiB)?\s*$/i;

const UNIT_BYTES: Record<string, number> = {
  b: 1,
  kb: 1000,
  kib: 1024,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
};

/** Bytes for a size; throws on text that does not match {@link SIZE_PATTERN}. */
export function parseSize(value: string | number): number {
  if (typeof value === "number") return Math.round(value);
  if (!SIZE_PATTERN.test(value)) throw new Error(`not a size: ${JSON.stringify(value)}`);
  const m = /(\d+(?:\.\d+)?)\s*([a-z]*)/i.exec(value.trim())!;
  return Math.round(Number(m[1]) * UNIT_BYTES[(m[2] || "b").toLowerCase()]!);
}

/** "10 MiB", "512 KiB", "900 B": a size for people. */
export function formatSize(bytes: number): string {
  if (bytes >= 1024 ** 3 && bytes % 1024 ** 2 === 0) return `${+(bytes / 1024 ** 3).toFixed(2)} GiB`;
  if (bytes >= 1024 ** 2) return `${+(bytes / 1024 ** 2).toFixed(2)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(2)} KiB`;
  return `${bytes} B`;
}
