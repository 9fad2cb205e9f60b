/**
 * `targets:` → TargetSpecs: the provider's own keys (command, bin, version), the agent command's
 * placeholders, its variables, and the sandbox it runs in.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { parseAllowedHost } from "../../environment/hosts.js";
import type { AllowedHost } from "../../environment/types.js";
import type { SandboxSpec } from "../../sandbox/bwrap.js";
import {
  AGENT_PLACEHOLDERS,
  type Command,
  resolveAgentCommand,
  resolveBin,
  toCommand,
} from "../../sandbox/commands.js";
import { parseDuration } from "../duration.js";
import { PRESETS, type TargetInput } from "../schema/targets.js";
import type { TargetSpec } from "../types.js";
import type { PathKey } from "../yaml.js";
import { checkFixedEnv, checkPassthrough, checkPlaceholders, checkQuotable } from "./commands.js";
import type { PlanContext } from "./context.js";
import type { LoadedEval } from "./records.js";

/** The targets of each eval file, resolved once however many suites and tests use them. */
export class TargetResolver {
  private readonly cache = new Map<LoadedEval, TargetSpec[]>();

  constructor(private readonly ctx: PlanContext) {}

  /** Targets declared by an eval file, resolved against its folder. */
  of(loaded: LoadedEval): TargetSpec[] {
    let cached = this.cache.get(loaded);
    if (!cached) {
      const seen = new Set<string>();
      cached = (loaded.file.targets ?? []).map((t, i) => {
        if (seen.has(t.name)) {
          this.ctx.problem(
            loaded.src,
            ["targets", i, "name"],
            `duplicate target name "${t.name}"`,
            "give each target its own name",
          );
        }
        seen.add(t.name);
        return this.resolve(loaded, t, ["targets", i]);
      });
      this.cache.set(loaded, cached);
    }
    return cached;
  }

  private resolve(loaded: LoadedEval, t: TargetInput, at: PathKey[]): TargetSpec {
    const { src, dir } = loaded;
    const isPreset = (PRESETS as readonly string[]).includes(t.provider);
    this.checkProviderKeys(loaded, t, at, isPreset);
    checkPassthrough(this.ctx, src, [...at, "env_passthrough"], t.env_passthrough);
    checkFixedEnv(this.ctx, src, [...at, "env"], t.env);
    let command: Command | undefined;
    if (t.command) {
      command = resolveAgentCommand(toCommand(t.command), dir);
      checkPlaceholders(this.ctx, src, [...at, "command"], command, AGENT_PLACEHOLDERS, (suggestion) =>
        suggestion
          ? `did you mean {${suggestion}}?`
          : `placeholders: ${AGENT_PLACEHOLDERS.map((p) => `{${p}}`).join(" ")}`,
      );
      checkQuotable(this.ctx, src, [...at, "command"], command);
    }
    const spec: TargetSpec = {
      name: t.name,
      provider: t.provider,
      args: t.args ?? [],
      env: t.env ?? {},
      envPassthrough: t.env_passthrough ?? [],
    };
    if (command) spec.command = command;
    const sandbox = this.sandbox(loaded, t, at);
    if (sandbox) spec.sandbox = sandbox;
    const allow = this.networkAllow(loaded, t, at);
    if (allow) spec.networkAllow = allow;
    if (t.bin !== undefined && isPreset) spec.bin = resolveBin(t.bin, dir);
    if (t.version !== undefined && isPreset) spec.version = t.version;
    if (t.price) {
      spec.price = {
        inputPerMtok: t.price.input_per_mtok,
        outputPerMtok: t.price.output_per_mtok,
        // Without a cache price, cached tokens cost what input tokens cost: never less than real.
        cachedPerMtok: t.price.cached_per_mtok ?? t.price.input_per_mtok,
      };
    }
    if (t.model) spec.model = t.model;
    if (t.timeout !== undefined) spec.timeoutMs = parseDuration(t.timeout);
    this.ctx.targetOrigins.set(spec, { src, at });
    return spec;
  }

  /** command: belongs to provider command; bin: and version: to the presets, and not both. */
  private checkProviderKeys(loaded: LoadedEval, t: TargetInput, at: PathKey[], isPreset: boolean): void {
    const { src } = loaded;
    if (t.provider === "command" && !t.command) {
      this.ctx.problem(
        src,
        at,
        'provider "command" needs a command',
        'add command: ["node", "agent.mjs", "{PROMPT_FILE}"]',
      );
    }
    if (t.provider !== "command" && t.command) {
      this.ctx.problem(
        src,
        [...at, "command"],
        `provider "${t.provider}" takes no command`,
        "remove command, or use provider: command",
      );
    }
    if (t.bin !== undefined && !isPreset) {
      this.ctx.problem(
        src,
        [...at, "bin"],
        `provider "${t.provider}" takes no bin`,
        t.provider === "command"
          ? "a command target names its program in command:"
          : `bin: names the program of a preset (${PRESETS.join(", ")})`,
      );
    }
    if (t.version !== undefined && !isPreset) {
      this.ctx.problem(
        src,
        [...at, "version"],
        `provider "${t.provider}" takes no version`,
        `version: installs the agent CLI of a preset (${PRESETS.join(", ")})`,
      );
    } else if (t.version !== undefined && t.bin !== undefined) {
      this.ctx.problem(
        src,
        [...at, "version"],
        "version: and bin: both say which program runs",
        "keep version: (evalgate installs that release) or bin: (a program you installed)",
      );
    }
  }

  /** `sandbox.network: { allow: [...] }`, each entry parsed (a problem names the one that is not a host). */
  private networkAllow(loaded: LoadedEval, t: TargetInput, at: PathKey[]): AllowedHost[] | undefined {
    const input = t.sandbox;
    if (typeof input !== "object" || typeof input.network !== "object") return undefined;
    const allow: AllowedHost[] = [];
    input.network.allow.forEach((text, i) => {
      const parsed = parseAllowedHost(text);
      if (typeof parsed === "string") {
        this.ctx.problem(
          loaded.src,
          [...at, "sandbox", "network", "allow", i],
          `"${text}": ${parsed}`,
          "write host, host:port, *.domain or [v6]:port, e.g. api.anthropic.com:443",
        );
      } else allow.push(parsed);
    });
    return allow;
  }

  /**
   * A target's `sandbox:` (a string or an object, default `auto`), with its read-only folders checked.
   * Undefined for `none` and for providers that run no agent program.
   */
  private sandbox(loaded: LoadedEval, t: TargetInput, at: PathKey[]): SandboxSpec | undefined {
    const input = t.sandbox ?? "auto";
    const o = typeof input === "string" ? { type: input } : input;
    const sat = [...at, "sandbox"];
    if (o.type === "none") {
      if (typeof input !== "string" && (input.network !== undefined || input.read_only !== undefined)) {
        this.ctx.problem(
          loaded.src,
          sat,
          "network and read_only apply with type: auto or bwrap",
          "use type: auto or bwrap, or remove them",
        );
      }
      return undefined;
    }
    if (t.provider === "reference" || t.provider === "noop") {
      // auto means nothing here: there is no agent process to isolate.
      if (o.type === "bwrap") {
        this.ctx.problem(
          loaded.src,
          sat,
          `provider "${t.provider}" runs no agent program, so there is nothing to sandbox`,
          "remove sandbox from this target",
        );
      }
      return undefined;
    }
    const readOnly: string[] = [];
    (typeof input === "string" ? [] : (input.read_only ?? [])).forEach((p, i) => {
      const abs = path.resolve(loaded.dir, p);
      if (!existsSync(abs)) {
        this.ctx.problem(
          loaded.src,
          [...sat, "read_only", i],
          `folder ${this.ctx.display(abs)} does not exist`,
          this.ctx.relativeHint(loaded.dir),
        );
      } else readOnly.push(abs);
    });
    // auto keeps what worked without a sandbox working: the network (presets call their model's API)
    // and the eval file's folder, read-only, for an agent that runs {EVAL_DIR}/agent.py.
    const auto = o.type === "auto";
    // An allow-list is a network the agent has (through the allow-list proxy of its environment).
    const given = typeof input === "string" ? undefined : input.network;
    const network = given === undefined ? auto : given !== false;
    if (auto) readOnly.unshift(loaded.dir);
    if (!network && (PRESETS as readonly string[]).includes(t.provider)) {
      // Without the network the agent cannot reach its model: every attempt would end in the agent's
      // own "Connection error", which says nothing about the sandbox.
      this.ctx.problem(
        loaded.src,
        sat,
        `provider "${t.provider}" calls its model's API over the network, which sandbox: ${o.type} cuts off unless network: true`,
        typeof input === "string" ? "use sandbox: { type: bwrap, network: true }" : "set network: true",
      );
    }
    return { kind: o.type, network, readOnly };
  }
}
