/** Parsing what `git diff --raw --numstat -z` prints for the capture (attempt.ts). */
import type { ChangedFile, ChangeStatus } from "./attempt.js";

const STATUS: Record<string, ChangeStatus> = {
  A: "added",
  M: "modified",
  D: "deleted",
  R: "renamed",
  C: "copied",
  T: "type_changed",
};

/**
 * `git diff --raw -z` records, ":old new oldsha newsha STATUS\0path\0[newpath\0]", from the
 * start of `parts`; returns them and where the records after them begin.
 */
export function parseRaw(parts: string[]): { files: ChangedFile[]; end: number } {
  const out: ChangedFile[] = [];
  let i = 0;
  while (i < parts.length && parts[i]!.startsWith(":")) {
    const [oldMode, newMode, , , status] = parts[i]!.slice(1).split(" ");
    const letter = (status ?? "M")[0]!;
    const file: ChangedFile = {
      path: parts[i + 1]!,
      status: STATUS[letter] ?? "modified",
      additions: 0,
      deletions: 0,
      binary: false,
    };
    i += 2;
    if (letter === "R" || letter === "C") {
      file.oldPath = file.path;
      file.path = parts[i++]!;
    }
    if (oldMode !== newMode && oldMode !== "000000" && newMode !== "000000") {
      file.modeChange = `${oldMode} → ${newMode}`;
    }
    out.push(file);
  }
  return { files: out, end: i };
}

/** `git diff --numstat -z` records: "add\tdel\tpath\0" or "add\tdel\t\0old\0new\0" for renames. */
export function applyNumstat(files: ChangedFile[], parts: string[]): void {
  const byPath = new Map(files.map((f) => [f.path, f]));
  for (let i = 0; i < parts.length; i++) {
    const entry = parts[i]!;
    if (!entry) continue;
    // The path itself may hold tabs: only the first two split.
    const [add, del] = entry.split("\t", 2);
    let target = entry.slice(`${add}\t${del}\t`.length);
    if (target === "") {
      i += 2;
      target = parts[i] ?? "";
    }
    const f = byPath.get(target);
    if (!f) continue;
    if (add === "-" || del === "-") f.binary = true;
    else {
      f.additions = Number(add);
      f.deletions = Number(del);
    }
  }
}
