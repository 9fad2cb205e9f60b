/** The action's entry (action.yml runs dist/index.js, built from this file). */
import { run } from "./github/main.js";

process.exitCode = await run();
