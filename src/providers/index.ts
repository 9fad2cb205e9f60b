/** The provider registry. */
import type { ProviderName } from "../config/types.js";
import { claudeCode } from "./claude-code.js";
import { codex } from "./codex.js";
import { commandProvider } from "./command.js";
import { geminiCli } from "./gemini-cli.js";
import { noopProvider } from "./noop.js";
import { presetProvider } from "./preset.js";
import { referenceProvider } from "./reference.js";
import type { Provider } from "./types.js";

const PROVIDERS: Record<ProviderName, Provider> = {
  command: commandProvider,
  "claude-code": presetProvider(claudeCode),
  codex: presetProvider(codex),
  "gemini-cli": presetProvider(geminiCli),
  reference: referenceProvider,
  noop: noopProvider,
};

export function providerFor(name: ProviderName): Provider {
  return PROVIDERS[name];
}

export type { AgentContext, AgentOutcome, Provider } from "./types.js";
