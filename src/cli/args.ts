/**
 * How the CLI spells its options in the core's messages (`--out DIR`); the commands pass it in. The
 * values themselves are parsed by the shared parsers of config/options.ts.
 */
import type { OptionNaming } from "../config/options.js";

export const CLI_NAMING: OptionNaming = {
  given: (option, value) => `--${option} ${value}`,
  option: (option) => `--${option}`,
  filters: "the --target / --test / --tag filters",
  roomOnDisk: "give --out and --work-dir folders on a disk with room",
};
