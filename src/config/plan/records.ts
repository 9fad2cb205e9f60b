/**
 * The planner's own records, between the files as read and the resolved Plan: an eval file as
 * loaded, the policy a suite runs under, and a test with where it is written.
 */
import type { EvalFileInput, TestInput } from "../schema/eval-file.js";
import type { GateInput } from "../schema/gate.js";
import type { RepeatSetting, TargetSpec } from "../types.js";
import type { PathKey, YamlSource } from "../yaml.js";

export interface LoadedEval {
  src: YamlSource;
  file: EvalFileInput;
  dir: string;
  evalPath: string;
  name: string;
  /**
   * On the exam side: the file whose `targets:` the tests run on (the checkout's version of this
   * file, the thing under test); absent: this file's own.
   */
  targetsFrom?: LoadedEval;
}

/** Runtime policy: bound by the root eval file, falling back to a suite's own values. */
export interface Policy {
  repeat?: RepeatSetting;
  gate?: GateInput;
  timeouts?: EvalFileInput["timeouts"];
  limits?: EvalFileInput["limits"];
}

/** The eval file whose defaults (targets, workspace, scorers) a test takes, and its policy. */
export interface Owner {
  loaded: LoadedEval;
  targets: TargetSpec[];
  policy: Policy;
}

export interface TestRecord {
  test: TestInput;
  src: YamlSource;
  at: PathKey[];
  /** Folder of the file the test is written in (its relative paths resolve here). */
  dir: string;
  owner: Owner;
  root: LoadedEval;
}
