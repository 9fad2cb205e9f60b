/** The action's entry (action.yml runs dist/index.js, built from this file). */
import { setFlagsFromString } from "node:v8";
import { run } from "./github/main.js";

// Peak memory near the run's live data, as the CLI does (bin/evalgate.js, docs/decisions/0177).
setFlagsFromString("--optimize-for-size");
process.exitCode = await run();
