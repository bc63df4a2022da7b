// Owns the typed errors of the factory. A configuration or programming problem
// is a FactoryError with a stable code; the CLI maps the code to an exit status
// (0 success, 1 a check or gate failed, 2 a usage or precondition problem) and
// prints the message with its fix on the same line.

export type ErrorCode =
  | 'usage'
  | 'lane_not_found'
  | 'lane_invalid'
  | 'plan_invalid'
  | 'world_unknown'
  | 'server_package'
  | 'server_failed'
  | 'definition_invalid'
  | 'server_requires'
  | 'seed_failed'
  | 'escape_hatch_nondeterministic'
  | 'dataset_not_found'
  | 'dataset_corrupt'
  | 'dataset_tampered'
  | 'model_unavailable'
  | 'card_not_publishable'
  | 'training_failed';

/** A check that stops a command (a card not fit to publish, files that differ from their manifest) is 1; every other code is a usage or precondition problem. */
const EXIT_STATUS: Record<ErrorCode, 1 | 2> = {
  usage: 2,
  lane_not_found: 2,
  lane_invalid: 2,
  plan_invalid: 2,
  world_unknown: 2,
  server_package: 2,
  server_failed: 2,
  definition_invalid: 2,
  server_requires: 2,
  seed_failed: 2,
  escape_hatch_nondeterministic: 2,
  dataset_not_found: 2,
  dataset_corrupt: 2,
  dataset_tampered: 1,
  model_unavailable: 2,
  card_not_publishable: 1,
  training_failed: 1,
};

export interface Problem {
  /** Where: a file, optionally with a JSON pointer into it. */
  where: string;
  reason: string;
}

export class FactoryError extends Error {
  readonly code: ErrorCode;
  readonly fix: string | undefined;
  readonly problems: readonly Problem[];

  constructor(code: ErrorCode, message: string, options: { fix?: string; problems?: readonly Problem[]; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FactoryError';
    this.code = code;
    this.fix = options.fix;
    this.problems = options.problems ?? [];
  }

  get exitStatus(): 1 | 2 {
    return EXIT_STATUS[this.code];
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
