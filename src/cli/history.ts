/** `evalgate history`: each case's rate over the base branch's runs (the pooled baseline). */
import { BaseHistory, readBaselines } from "../bundle/history.js";
import { EXIT } from "../errors.js";
import { historyView } from "../pipeline/history.js";
import { historyJson, renderHistoryText } from "../report/history.js";
import type { CommandIO } from "./io.js";

export interface HistoryFlags {
  test?: string[];
  target?: string[];
  json?: boolean;
}

export async function historyCommand(paths: string[], o: HistoryFlags, io: CommandIO): Promise<number> {
  const bundles = await readBaselines(paths, io.cwd, "history");
  const view = historyView(new BaseHistory(bundles), {
    ...(o.test ? { tests: o.test } : {}),
    ...(o.target ? { targets: o.target } : {}),
  });
  io.stdout.write(o.json ? `${JSON.stringify(historyJson(view), null, 2)}\n` : renderHistoryText(view));
  return EXIT.pass;
}
