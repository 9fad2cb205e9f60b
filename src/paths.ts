/**
 * Whether a path stays inside a folder, by the names alone (no link is followed). Used wherever a
 * path from an eval file, an agent or a bundle must not leave its folder: config, scorers, bundle.
 */
import path from "node:path";

/** Whether `p` is `root` or below it, by the names alone. */
export function isWithin(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}
