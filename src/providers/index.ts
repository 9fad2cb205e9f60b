/** The provider registry. */
import type { ProviderName } from "../config/types.js";
import { commandProvider } from "./command.js";
import { noopProvider } from "./noop.js";
import { referenceProvider } from "./reference.js";
import type { Provider } from "./types.js";

const PROVIDERS: Record<ProviderName, Provider> = {
  command: commandProvider,
  reference: referenceProvider,
  noop: noopProvider,
};

export function providerFor(name: ProviderName): Provider {
  return PROVIDERS[name];
}

export type { AgentContext, AgentOutcome, Provider } from "./types.js";
